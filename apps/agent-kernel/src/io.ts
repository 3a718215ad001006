// Where `agent-kernel` writes, and whether a stream gets colour: on a terminal only, never with NO_COLOR (the
// same rule as the `agent` command's). Kept here, not imported from the agent app, so `agent-kernel --help`
// loads nothing of the apps. Owns nothing else.
import { styleText } from "node:util";

/** A stream the command writes to; `isTTY` decides colour. */
export interface CliStream {
  write(text: string): unknown;
  readonly isTTY?: boolean | undefined;
}

/** The command's streams, environment and working directory (tests pass their own). */
export interface CliIo {
  readonly stdout: CliStream;
  readonly stderr: CliStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** The running process's streams, environment and working directory. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** Writes one line (a trailing newline added). */
export function line(stream: CliStream, text = ""): void {
  stream.write(`${text}\n`);
}

type Style = "red" | "yellow" | "green" | "dim" | "bold";

/** Colour only on a terminal, and never with NO_COLOR set to anything but "" (no-color.org) or TERM=dumb. */
export function colourFor(stream: CliStream, env: CliIo["env"]): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? "") === "" && env.TERM !== "dumb";
}

/** `text` in `style` when `stream` takes colour, else unchanged. */
export function paint(io: CliIo, stream: CliStream, style: Style, text: string): string {
  return colourFor(stream, io.env) ? styleText(style, text, { validateStream: false }) : text;
}

/** Prints `value` as indented JSON (what every read command's --json gives). */
export function printJson(io: CliIo, value: unknown): void {
  line(io.stdout, JSON.stringify(value, null, 2));
}
