// The `agent` command's exit codes and the one error type that carries one. Owns: what each code means (the
// README's table is this table) and `CliError`. Does not own: deciding which failure is which (the commands).

export const EXIT = {
  /** The turn answered; the command did what it was asked. */
  ok: 0,
  /** The turn ended in error, aborted or timed out; `doctor` found problems. */
  failed: 1,
  /** Bad flags or arguments, an invalid or unreadable config, an unknown agent or thinking level. */
  usage: 2,
  /** The session or run asked for is not in the store. */
  notFound: 3,
  /** `replay` ran, and the replay did not do what the stored run did. */
  diverged: 4,
  /**
   * The store cannot be opened or written: not a store, from a newer release, not writable (read-only
   * files), its disk full, a file or transcript row damaged, an agent database empty or unreadable. The
   * message names the file (and the row) and what to do; a reply produced before it is still shown.
   */
  store: 5,
  /** Interrupted (SIGINT) while a turn ran; the run is stored as aborted. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the user can act on: printed as one paragraph (no stack), then the process exits with `code`. */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly code: ExitCode;

  constructor(code: ExitCode, message: string) {
    super(message);
    this.code = code;
  }
}
