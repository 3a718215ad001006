// Where the command writes: stdout for results, stderr for diagnostics, both injectable so tests and the
// in-process benchmark can capture them. Owns nothing else.

export interface CliIo {
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean | undefined };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

/** Writes one line (a trailing newline added). */
export function line(stream: CliIo["stdout"] | CliIo["stderr"], text = ""): void {
  stream.write(`${text}\n`);
}
