// Test support: builds the gateway app and everything it depends on with turbo (cached after the first build;
// as the agent app's dist test does), so the tests that spawn the shipped `dist/bin.js` run on a fresh clone.
import { spawnSync } from "node:child_process";
import { join } from "node:path";

export const APP_DIR = join(import.meta.dirname, "..");
export const REPO_ROOT = join(APP_DIR, "..", "..");
/** The installed `agent-kernel-gateway` command. */
export const GATEWAY_BIN = join(APP_DIR, "dist", "bin.js");

/** Builds `@agent-kernel/gateway...`; throws with turbo's output when the build fails. */
export function buildGateway(): void {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.NODE_OPTIONS;
  const build = spawnSync(
    join(REPO_ROOT, "tooling", "pnpm"),
    ["exec", "turbo", "run", "build", "--filter=@agent-kernel/gateway...", "--output-logs=errors-only"],
    { cwd: REPO_ROOT, encoding: "utf8", env },
  );
  if (build.status !== 0)
    throw new Error(`building the gateway app failed:\n${build.stdout}\n${build.stderr}`);
}
