import { packageProject } from "../../tooling/vitest/shared.ts";

export default packageProject(import.meta.dirname, {
  // The OpenAI SDK prints every malformed SSE chunk the fault matrix serves on purpose; nothing else is hidden.
  onConsoleLog: (log) =>
    !(log.includes("<<not json>>") || log.startsWith("Could not parse message into JSON")),
  // Adds up what every file tried into one summary line (src/support/global-summary.ts).
  globalSetup: ["src/support/global-summary.ts"],
});
