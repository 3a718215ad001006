import { packageProject } from "../../tooling/vitest/shared.ts";

export default packageProject(import.meta.dirname, {
  // One fast-check seed for the whole suite (FC_SEED to change it, FC_SEED=random to explore).
  setupFiles: ["src/support/fuzz-seed.ts"],
  // The OpenAI SDK prints every malformed SSE chunk the fault matrix serves on purpose; nothing else is hidden.
  onConsoleLog: (log) =>
    !(log.includes("<<not json>>") || log.startsWith("Could not parse message into JSON")),
});
