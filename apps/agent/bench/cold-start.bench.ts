// Cold start of `agent -m` (the built dist/main.js, a new process per iteration) against tooling/fake-llm,
// versus a bare script that imports pi-coding-agent and runs the same turn (bare-pi-turn.ts), in the same run.
// Both get the same scripted tool-using turn (write a file, then answer) over loopback HTTP. Also the cold
// start of `agent sessions list`, which must not load pi. Target: `agent -m` ≤ 1.1× the bare script. The binary
// enables Node's on-disk compile cache (the bare script does not); a case with it disabled shows what it saves.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSuite } from "@agent-kernel/bench";
import { reply, startFakeLlm, toolCall } from "@agent-kernel/fake-llm";
import { APP_DIR, cleanEnv, configText, REPO_ROOT } from "../test/cli-harness.ts";

const build = spawnSync(
  join(REPO_ROOT, "tooling", "pnpm"),
  ["exec", "turbo", "run", "build", "--filter=@agent-kernel/agent...", "--output-logs=errors-only"],
  { cwd: REPO_ROOT, encoding: "utf8" },
);
if (build.status !== 0) throw new Error(`building the agent app failed:\n${build.stdout}\n${build.stderr}`);

const llm = await startFakeLlm({
  scenario: {
    rules: [],
    steps: [],
    // Every turn: a write, then the answer (alternating by whether the last message is a tool result).
    fallback: (request) => {
      const messages = (request.body as { messages?: { role?: string }[] } | undefined)?.messages ?? [];
      return messages.at(-1)?.role === "tool"
        ? reply("Wrote notes.md.")
        : toolCall("write", { path: "notes.md", content: "# Notes\n" });
    },
  },
});
const root = mkdtempSync(join(tmpdir(), "agent-cold-"));
const workspace = join(root, "workspace");
mkdirSync(workspace);
const configPath = join(root, "config.json5");
writeFileSync(configPath, configText(llm.baseUrlFor("openai"), workspace));
const env = cleanEnv();
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

/** Runs node as a child process (asynchronously: the fake server in this process must keep answering). */
function node(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      cwd: APP_DIR,
      env: { ...env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.once("error", reject);
    child.once("close", (code) => {
      const turn = !args.includes("sessions");
      if (code === 0 && (!turn || output.includes("Wrote notes.md."))) resolve();
      else reject(new Error(`node ${args.join(" ")} failed (${code}): ${output}`));
    });
  });
}

let iteration = 0;
const freshState = () => join(root, `state-${iteration++}`);

const ITERATIONS = 8;
const WARMUP = 1;
let lastCaseRuns = 0;
/** After the last case's last run: the fake server would otherwise keep the bench process alive. */
async function afterLastCase(stateDir: string): Promise<void> {
  rmSync(stateDir, { recursive: true, force: true });
  if (++lastCaseRuns === ITERATIONS + WARMUP) await llm.close();
}

export default defineSuite({
  name: "cold start: one tool-using turn in a new process (fake-llm over HTTP)",
  baseline: "bare pi-coding-agent script",
  iterations: ITERATIONS,
  warmup: WARMUP,
  cases: [
    {
      name: "bare pi-coding-agent script",
      run: () => node([join(APP_DIR, "bench", "bare-pi-turn.ts"), llm.baseUrlFor("openai"), workspace]),
    },
    {
      name: "agent -m (dist, new state dir)",
      before: freshState,
      run: (stateDir: string) =>
        node([
          join(APP_DIR, "dist", "main.js"),
          "-m",
          "write the notes",
          "--config",
          configPath,
          "--state-dir",
          stateDir,
        ]),
    },
    {
      // The binary enables Node's on-disk code cache (see src/main.ts); this case shows the start without it.
      name: "agent -m (dist, new state dir, NODE_DISABLE_COMPILE_CACHE=1)",
      before: freshState,
      run: (stateDir: string) =>
        node(
          [
            join(APP_DIR, "dist", "main.js"),
            "-m",
            "write the notes",
            "--config",
            configPath,
            "--state-dir",
            stateDir,
          ],
          { NODE_DISABLE_COMPILE_CACHE: "1" },
        ),
    },
    {
      name: "agent sessions list (dist, no pi)",
      before: freshState,
      run: (stateDir: string) =>
        node([
          join(APP_DIR, "dist", "main.js"),
          "sessions",
          "list",
          "--config",
          configPath,
          "--state-dir",
          stateDir,
        ]),
      after: afterLastCase,
    },
  ],
});
