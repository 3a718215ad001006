// The terminal as a user sees it, through a real pseudo-terminal (tmux): `agent-kernel agent -m` against
// tooling/fake-llm sending a one-line reply word by word with a pause between frames must show the words one
// after another (the pane is read while the reply streams: many partial states, the first word well before
// the last), and colour must appear on a terminal and never with NO_COLOR. Timing is compared within one run,
// never against an absolute figure; tmux is skipped (with the reason) only where it is not installed.
import { execFileSync, spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { reply } from "@agent-kernel/fake-llm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness, MAIN } from "./harness.ts";

const hasTmux = spawnSync("tmux", ["-V"], { encoding: "utf8" }).status === 0;
const WORDS = Array.from({ length: 20 }, (_, index) => `word${index + 1}`);
const REPLY = WORDS.join(" ");
const FRAME_DELAY_MS = 200;
const ESC = "\u001b[";

/** A POSIX shell word. */
const shellQuote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/** One tmux server of its own (its own socket), one window running `command` in a 220×60 terminal. */
class Terminal {
  readonly #socket = `agent-kernel-pty-${process.pid}-${Math.random().toString(36).slice(2)}`;

  constructor(command: readonly string[], env: Readonly<Record<string, string | undefined>>) {
    // The command's own exit code is printed after it, then the shell waits, so the pane stays readable.
    const script = `${command.map(shellQuote).join(" ")}; echo "[exit $?]"; sleep 600`;
    execFileSync(
      "tmux",
      [
        "-L",
        this.#socket,
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "220",
        "-y",
        "60",
        script,
      ],
      {
        env: { ...env },
      },
    );
  }

  /** What the pane shows now; with `escapes`, the colour and style sequences too. */
  screen(escapes = false): string {
    const args = ["-L", this.#socket, "capture-pane", "-p", "-J", "-t", "t", ...(escapes ? ["-e"] : [])];
    return execFileSync("tmux", args, { encoding: "utf8" });
  }

  /** Reads the pane every few milliseconds until `done` says so (or 90 s), returning every distinct screen. */
  async watch(done: (screen: string) => boolean): Promise<{ at: number; screen: string }[]> {
    const seen: { at: number; screen: string }[] = [];
    const deadline = performance.now() + 90_000;
    while (performance.now() < deadline) {
      const screen = this.screen();
      if (seen.at(-1)?.screen !== screen) seen.push({ at: performance.now(), screen });
      if (done(screen)) return seen;
      await sleep(20);
    }
    throw new Error(`the terminal did not finish in 90 s; it shows:\n${seen.at(-1)?.screen}`);
  }

  close(): void {
    spawnSync("tmux", ["-L", this.#socket, "kill-server"]);
  }
}

let h: Harness;
const terminals: Terminal[] = [];
beforeAll(async () => {
  h = await createHarness();
}, 60_000);
afterAll(async () => {
  for (const terminal of terminals) terminal.close();
  await h?.close();
});

function open(args: readonly string[], env: Readonly<Record<string, string | undefined>>): Terminal {
  const terminal = new Terminal([process.execPath, "--conditions=@agent-kernel/source", MAIN, ...args], env);
  terminals.push(terminal);
  return terminal;
}

const withColour = () => ({ ...h.env, NO_COLOR: undefined });

/**
 * The style sequences in force where `text` starts on a screen captured with escapes: tmux writes a style only
 * where it changes, so this is every SGR sequence since the last reset before `text`.
 */
function styleAt(screen: string, text: string): string[] {
  const at = screen.indexOf(text);
  if (at === -1) throw new Error(`"${text}" is not on the screen:\n${screen}`);
  const sgr = new RegExp(`${ESC.replace("[", "\\[")}([0-9;]*)m`, "g");
  const sequences = [...screen.slice(0, at).matchAll(sgr)].map((match) => match[1] ?? "");
  const reset = sequences.findLastIndex((codes) => codes === "0" || codes === "");
  return sequences.slice(reset + 1);
}

describe.skipIf(!hasTmux)("agent-kernel on a real terminal (tmux)", () => {
  it("agent -m shows a one-line reply word by word as it streams", async () => {
    h.llm.enqueue(reply(REPLY, { delayMs: FRAME_DELAY_MS }));
    const terminal = open(["agent", "-m", "say twenty words"], h.env);
    const screens = await terminal.watch((screen) => screen.includes("[exit "));
    const last = screens.at(-1)?.screen ?? "";
    expect(last).toContain(`${REPLY}\n[exit 0]`);

    // How many of the words each screen showed, in order: every count only grows, and the reader saw many
    // partial states (printed at the end, the line would go from none to all twenty at once).
    const counts = screens.map(
      ({ screen }) => WORDS.filter((word) => new RegExp(`\\b${word}\\b`).test(screen)).length,
    );
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    const partial = new Set(counts.filter((count) => count > 0 && count < WORDS.length));
    expect(partial.size).toBeGreaterThanOrEqual(5);
    // the first word was on screen while the rest was still streaming: over half the server's sending time
    const firstAt = screens.find((_, index) => (counts[index] ?? 0) > 0)?.at as number;
    const wholeAt = screens.find((_, index) => counts[index] === WORDS.length)?.at as number;
    expect(wholeAt - firstAt).toBeGreaterThan(((WORDS.length - 1) * FRAME_DELAY_MS) / 2);
  }, 120_000);

  it("colour on a terminal: agent's --verbose lines dim and agent-kernel's help in bold", async () => {
    h.llm.enqueue(reply("coloured"));
    const verbose = open(["agent", "-m", "hi", "--verbose"], withColour());
    await verbose.watch((screen) => screen.includes("[exit "));
    const styled = verbose.screen(true);
    expect(styled).toContain("[exit 0]");
    expect(styleAt(styled, "[agent] attempt 1: scripted/m1")).toContain("2");
    expect(styleAt(styled, "[agent] run end: ok")).toContain("2");
    // the reply itself is plain text
    expect(styleAt(styled, "coloured")).not.toContain("2");
    const help = open(["--help"], withColour());
    await help.watch((screen) => screen.includes("[exit "));
    expect(styleAt(help.screen(true), "Usage:")).toContain("1");
    expect(styleAt(help.screen(true), "One command for")).not.toContain("1");
  }, 120_000);

  it("no colour at all with NO_COLOR, on the same terminal", async () => {
    h.llm.enqueue(reply("plain"));
    const verbose = open(["agent", "-m", "hi", "--verbose"], { ...h.env, NO_COLOR: "1" });
    await verbose.watch((screen) => screen.includes("[exit "));
    const plain = verbose.screen(true);
    expect(plain).toContain("[agent] attempt 1: scripted/m1");
    expect(plain).not.toContain(ESC);
    const help = open(["--help"], { ...h.env, NO_COLOR: "1" });
    await help.watch((screen) => screen.includes("[exit "));
    expect(help.screen(true)).toContain("Usage: agent-kernel");
    expect(help.screen(true)).not.toContain(ESC);
  }, 120_000);
});
