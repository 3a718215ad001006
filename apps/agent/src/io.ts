// Where the command writes: stdout for results, stderr for diagnostics, both injectable so tests and the
// in-process benchmark can capture them; and whether a stream gets colour (a terminal, and no NO_COLOR).
// Owns nothing else.
import { styleText } from "node:util";

/** A stream the command writes to; `isTTY` is what decides colour. */
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

/** The styles the command uses: errors, warnings, diagnostics, headings. */
export type Style = "red" | "yellow" | "dim" | "bold" | "green";

/**
 * Colour only on a terminal, never with NO_COLOR set to anything but "" (no-color.org): a pipe, a file and
 * a test's captured stream get plain text.
 */
export function colourFor(stream: CliStream, env: CliIo["env"]): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? "") === "" && env.TERM !== "dumb";
}

/** `text` in `style` when `stream` takes colour (see `colourFor`), else unchanged. */
export function paint(io: CliIo, stream: CliStream, style: Style, text: string): string {
  return colourFor(stream, io.env) ? styleText(style, text, { validateStream: false }) : text;
}
