// `agent -m` shows a reply as it streams: on a terminal (a real pseudo-terminal, util-linux `script`) and with
// `--stream` into a pipe, against tooling/fake-llm sending a one-line reply word by word with a pause between
// frames. The first words must reach the reader well before the last (the partial text was published only at
// line ends before: a one-line reply showed all at once when it ended), and what is printed is the reply.
// Timing is compared within one run (first word against last word), never against an absolute figure.
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { APP_DIR, cleanEnv, createCliHarness } from "../test/cli-harness.ts";

const WORDS = Array.from({ length: 20 }, (_, index) => `word${index + 1}`);
const REPLY = WORDS.join(" ");
/** Pause between SSE frames: one word per frame, so the words span 19 pauses. */
const FRAME_DELAY_MS = 200;
const WORDS_SPAN_MS = (WORDS.length - 1) * FRAME_DELAY_MS;

const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

interface TimedOutput {
  readonly code: number | null;
  readonly text: string;
  readonly stderr: string;
  /** When (performance.now) the reader first saw the first word, and the whole reply. */
  readonly firstWordAt: number | undefined;
  readonly wholeReplyAt: number | undefined;
}

/** Runs a command, timestamping when its stdout first shows the first word and when it shows the whole reply. */
function runTimed(command: string, args: readonly string[]): Promise<TimedOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      cwd: APP_DIR,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let text = "";
    let stderr = "";
    let firstWordAt: number | undefined;
    let wholeReplyAt: number | undefined;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      const now = performance.now();
      text += chunk;
      if (firstWordAt === undefined && text.includes(WORDS[0] as string)) firstWordAt = now;
      if (wholeReplyAt === undefined && text.includes(REPLY)) wholeReplyAt = now;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, text, stderr, firstWordAt, wholeReplyAt }));
  });
}

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const h = await createCliHarness();
  onTestFinished(() => h.close());
  h.llm.enqueue(reply(REPLY, { delayMs: FRAME_DELAY_MS }));
  return h;
}

function agentArgs(h: Awaited<ReturnType<typeof harness>>, extra: readonly string[]): string[] {
  return [
    "--conditions=@agent-kernel/source",
    join(APP_DIR, "src", "main.ts"),
    "-m",
    "say twenty words",
    "--config",
    h.configPath,
    "--state-dir",
    h.stateDir,
    ...extra,
  ];
}

function expectStreamed(output: TimedOutput): void {
  expect(output.firstWordAt).toBeDefined();
  expect(output.wholeReplyAt).toBeDefined();
  // the first word was shown while the rest was still streaming: the reader saw the words spread over at
  // least half the time the server took to send them (printed at the end, they would arrive together)
  const spread = (output.wholeReplyAt as number) - (output.firstWordAt as number);
  expect(spread).toBeGreaterThan(WORDS_SPAN_MS / 2);
}

/** A POSIX shell word. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

describe.concurrent("agent -m shows the reply as it streams", () => {
  it.skipIf(!hasScript)(
    "on a terminal (a pseudo-terminal through util-linux script)",
    async ({ onTestFinished }) => {
      const h = await harness(onTestFinished);
      const command = [process.execPath, ...agentArgs(h, [])].map(shellQuote).join(" ");
      // -q: no banner; -f: flush each write; -e: the command's exit code; -c: the command; /dev/null: no log
      const output = await runTimed("script", ["-qfec", command, "/dev/null"]);
      expect(output.stderr).toBe("");
      expect(output.code).toBe(0);
      // a terminal turns "\n" into "\r\n"; streamed partial text, then the line end
      expect(output.text.replaceAll("\r\n", "\n")).toBe(`${REPLY}\n`);
      expectStreamed(output);
    },
    90_000,
  );

  it("with --stream into a pipe", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    const output = await runTimed(process.execPath, agentArgs(h, ["--stream"]));
    expect(output.stderr).toBe("");
    expect(output.code).toBe(0);
    expect(output.text).toBe(`${REPLY}\n`);
    expectStreamed(output);
  }, 90_000);
});
