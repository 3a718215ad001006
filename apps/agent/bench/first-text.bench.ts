// First text on stdout: `agent -m --stream` (the built dist/main.js, a new process per iteration; the same
// partial-text path a terminal gets) against a bare pi script that writes pi's text deltas as they arrive
// (bare-pi-turn.ts --stream), both answered by tooling/fake-llm with the same one-line reply streamed word by
// word, a pause of FRAME_DELAY_MS between frames. Two suites over the same processes: time from spawn to the
// first word on stdout, and to exit. The first shows what a reader waits for before seeing anything, the
// second what the whole turn costs; each is reported as a ratio against the bare script in the same run.
import { type ChildProcessByStdio, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { type BenchCase, defineSuite } from "@agent-kernel/bench";
import { reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { APP_DIR, cleanEnv, configText, REPO_ROOT } from "../test/cli-harness.ts";

const build = spawnSync(
  join(REPO_ROOT, "tooling", "pnpm"),
  ["exec", "turbo", "run", "build", "--filter=@agent-kernel/agent...", "--output-logs=errors-only"],
  { cwd: REPO_ROOT, encoding: "utf8" },
);
if (build.status !== 0) throw new Error(`building the agent app failed:\n${build.stdout}\n${build.stderr}`);

/** 40 words, one per SSE frame (fake-llm's default chunking), 20 ms apart: about 0.8 s of streaming. */
const WORDS = Array.from({ length: 40 }, (_, index) => `word${index + 1}`);
const REPLY = WORDS.join(" ");
const FRAME_DELAY_MS = 20;

const llm = await startFakeLlm({
  scenario: { rules: [], steps: [], fallback: reply(REPLY, { delayMs: FRAME_DELAY_MS }) },
});
const root = mkdtempSync(join(tmpdir(), "agent-first-text-"));
const workspace = join(root, "workspace");
mkdirSync(workspace);
const configPath = join(root, "config.json5");
writeFileSync(configPath, configText(llm.baseUrlFor("openai"), workspace));
const env = cleanEnv();
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

interface Turn {
  readonly firstWord: Promise<void>;
  readonly exit: Promise<void>;
}

/** Starts a turn as a child process; `firstWord` settles when stdout shows the reply's first word. */
function startTurn(args: readonly string[]): Turn {
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(process.execPath, [...args], {
    cwd: APP_DIR,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let sawFirstWord: () => void = () => {};
  const firstWord = new Promise<void>((resolve) => {
    sawFirstWord = resolve;
  });
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    if (stdout.includes(WORDS[0] as string)) sawFirstWord();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exit = new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0 && stdout === `${REPLY}\n`) resolve();
      else reject(new Error(`node ${args.join(" ")} failed (${code}): ${stdout}${stderr}`));
    });
  });
  // a turn that ends without printing the word fails the wait for it too
  return { firstWord: Promise.race([firstWord, exit.then(() => firstWord)]), exit };
}

let iteration = 0;
const bareArgs = (): string[] => [
  join(APP_DIR, "bench", "bare-pi-turn.ts"),
  llm.baseUrlFor("openai"),
  workspace,
  "--stream",
];
const agentArgs = (): string[] => [
  join(APP_DIR, "dist", "main.js"),
  "-m",
  "say forty words",
  "--stream",
  "--config",
  configPath,
  "--state-dir",
  join(root, `state-${iteration++}`),
];

const ITERATIONS = 8;
const WARMUP = 1;
const BARE = "bare pi script, text deltas to stdout";
const AGENT = "agent -m --stream (dist, new state dir)";

/** One suite's cases: `until` picks what the timed part waits for; the rest of the turn is waited for after. */
function cases(until: "firstWord" | "exit", last: boolean): BenchCase<{ turn?: Turn }>[] {
  let lastRuns = 0;
  const timed =
    (args: () => string[]) =>
    async (state: { turn?: Turn }): Promise<void> => {
      state.turn = startTurn(args());
      await state.turn[until];
    };
  const after = async (state: { turn?: Turn }): Promise<void> => {
    await state.turn?.exit;
  };
  return [
    { name: BARE, before: () => ({}), run: timed(bareArgs), after },
    {
      name: AGENT,
      before: () => ({}),
      run: timed(agentArgs),
      after: async (state) => {
        await after(state);
        // the fake server would otherwise keep the bench process alive after the last suite's last run
        if (last && ++lastRuns === ITERATIONS + WARMUP) await llm.close();
      },
    },
  ];
}

export default [
  defineSuite({
    name: `first text on stdout: a one-line ${WORDS.length}-word reply streamed word by word (${FRAME_DELAY_MS} ms frames, fake-llm over HTTP), new process`,
    baseline: BARE,
    iterations: ITERATIONS,
    warmup: WARMUP,
    cases: cases("firstWord", false),
  }),
  defineSuite({
    name: `exit: the same turn to the end of the process`,
    baseline: BARE,
    iterations: ITERATIONS,
    warmup: WARMUP,
    cases: cases("exit", true),
  }),
];
