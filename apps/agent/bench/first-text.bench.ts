// First text on stdout: `agent -m --stream` (the built dist/main.js, a new process per iteration; the same
// partial-text path a terminal gets) against a bare pi script that writes pi's text deltas as they arrive
// (bare-pi-turn.ts --stream, run with Node's compile cache on as the agent binary has it:
// bare-pi-turn-cached.ts), both answered by tooling/fake-llm with the same one-line reply streamed word by
// word, a pause of FRAME_DELAY_MS between frames. Two sessions: a new one, and a long one — the agent's main
// session in SQLite holding 10k conversation entries, pi's JSONL session file holding the same 10k entries
// (long-session-fixture.ts; built once untimed, each iteration a fresh copy made untimed). For each, two
// suites over the same processes: time from spawn to the first word on stdout, and to exit. The first shows
// what a reader waits for before seeing anything, the second what the whole turn costs; each is reported as a
// ratio against the bare script in the same run. Target (issue 24): the agent ≤ 1.1× the bare script in all
// four.
import { type ChildProcessByStdio, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { type BenchCase, defineSuite } from "@agent-kernel/bench";
import { reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { APP_DIR, cleanEnv, configText, REPO_ROOT } from "../test/cli-harness.ts";
import {
  copySessionFile,
  copyStateDir,
  fillAgentSession,
  LONG_SESSION_ENTRIES,
  writePiSessionFile,
} from "./long-session-fixture.ts";

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
const bareArgs = (sessionFile?: string): string[] => [
  join(APP_DIR, "bench", "bare-pi-turn-cached.ts"),
  llm.baseUrlFor("openai"),
  workspace,
  "--stream",
  ...(sessionFile === undefined ? [] : ["--session", sessionFile]),
];
const agentArgs = (stateDir: string): string[] => [
  join(APP_DIR, "dist", "main.js"),
  "-m",
  "say forty words",
  "--stream",
  "--config",
  configPath,
  "--state-dir",
  stateDir,
];

// The long session's fixture (untimed): one real turn makes the agent's main session, then the entries follow
// its leaf; pi gets the same entries in its file.
const longStateDir = join(root, "long-state");
await startTurn(agentArgs(longStateDir)).exit;
await fillAgentSession(longStateDir);
const longPiFile = join(root, "long-session.jsonl");
writePiSessionFile(longPiFile, workspace);

const ITERATIONS = 8;
const WARMUP = 1;
const BARE = "bare pi script with its compile cache, text deltas to stdout";
const AGENT = "agent -m --stream (dist, new state dir)";
const BARE_LONG = `bare pi script with its compile cache, ${LONG_SESSION_ENTRIES}-entry JSONL session`;
const AGENT_LONG = `agent -m --stream (dist, ${LONG_SESSION_ENTRIES}-entry SQLite session)`;
/** Issue 24: `agent -m` within 1.1× the bare pi script, to the first text and to exit. */
const TARGET = { minSpeedup: 1 / 1.1, label: "≤ 1.1× a bare pi script with its compile cache (issue 24)" };

interface TurnState {
  /** The run's own directory: the agent's state dir, or the folder of pi's session file copy. */
  readonly dir: string;
  readonly args: readonly string[];
  turn?: Turn;
}

/** The suites' runs left; the fake server is closed after the last one (it would keep the process alive). */
let runsLeft = 4 * 2 * (ITERATIONS + WARMUP);

/** One suite's cases: `until` picks what the timed part waits for; the rest of the turn is waited for after. */
function cases(until: "firstWord" | "exit", long: boolean): BenchCase<TurnState>[] {
  // the run's directory and arguments, and for the long session the fixture's copy, are made here, untimed
  const bare = (): TurnState => {
    const dir = join(root, `run-${iteration++}`);
    return { dir, args: bareArgs(long ? copySessionFile(longPiFile, dir) : undefined) };
  };
  const agent = (): TurnState => {
    const dir = join(root, `run-${iteration++}`);
    if (long) copyStateDir(longStateDir, dir);
    return { dir, args: agentArgs(dir) };
  };
  const run = async (state: TurnState): Promise<void> => {
    state.turn = startTurn(state.args);
    await state.turn[until];
  };
  const after = async (state: TurnState): Promise<void> => {
    try {
      await state.turn?.exit;
    } finally {
      rmSync(state.dir, { recursive: true, force: true });
      if (--runsLeft === 0) await llm.close();
    }
  };
  return [
    { name: long ? BARE_LONG : BARE, before: bare, run, after },
    { name: long ? AGENT_LONG : AGENT, target: TARGET, before: agent, run, after },
  ];
}

const FRAMES = `${WORDS.length}-word reply streamed word by word (${FRAME_DELAY_MS} ms frames, fake-llm over HTTP), new process`;

export default [
  defineSuite({
    name: `first text on stdout: a one-line ${FRAMES}`,
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
    cases: cases("exit", false),
  }),
  defineSuite({
    name: `first text on stdout, ${LONG_SESSION_ENTRIES}-entry session: a one-line ${FRAMES}`,
    baseline: BARE_LONG,
    iterations: ITERATIONS,
    warmup: WARMUP,
    cases: cases("firstWord", true),
  }),
  defineSuite({
    name: `exit, ${LONG_SESSION_ENTRIES}-entry session: the same turn to the end of the process`,
    baseline: BARE_LONG,
    iterations: ITERATIONS,
    warmup: WARMUP,
    cases: cases("exit", true),
  }),
];
