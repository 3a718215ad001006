// The exit codes of `agent-kernel`'s own commands (the dispatched apps keep theirs, which agree on these) and
// the error that carries one. Owns nothing else.

/** Exit codes: 0 ok, 1 a check or probe failed, 2 usage or config, 3 not found, 5 store, 130/143 signals. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  notFound: 3,
  store: 5,
  interrupted: 130,
  terminated: 143,
} as const;

/** One of `EXIT`'s codes. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the command reports as one paragraph on stderr, with its exit code. */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}
