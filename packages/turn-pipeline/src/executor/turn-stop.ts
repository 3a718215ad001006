// How a turn is stopped from outside its attempts: the caller's AbortSignal, the turn timeout and the stall
// watchdog (turn-limits.ts calls `stop("stalled")`). Owns: the stop cause (the first one wins; a stall gives
// way to a timeout or an abort), aborting the attempt's pi session on every stop, the signal the waits before
// a retry end on (not aborted by a stall), and the message a turn stopped by the caller or the timeout ends
// with. Does not own: what a stopped attempt or turn records (attempt-outcome.ts), clearing a stall when the
// next attempt starts (the loop in execute-turn.ts), the limits (turn-limits.ts) or disposing sessions. The
// executor keeps the turn timeout's timer on the limits' watchdog timer (one timer a turn) and calls
// `stop("timeout")` from it; `timeoutMs` here arms a timer of the stopper's own for any other caller.
import type { AgentSession } from "@earendil-works/pi-coding-agent";

export type StopCause = "timeout" | "aborted" | "stalled";

export class TurnStopper {
  /** Why the turn is being stopped; the loop clears a stall when its next attempt starts. */
  cause: StopCause | undefined;
  /** The session of the attempt in progress: every stop aborts it. */
  session: AgentSession | undefined;
  /** Made when first needed (a stop, or a wait that listens): most turns never stop and never wait. */
  #abort: AbortController | undefined;
  readonly #callerSignal: AbortSignal | undefined;
  readonly #onCallerAbort = () => this.stop("aborted");
  readonly #timer: ReturnType<typeof setTimeout> | undefined;

  /** Listens to the caller's signal and starts the turn timeout (`timeoutMs` 0: none). */
  constructor(callerSignal: AbortSignal | undefined, timeoutMs: number) {
    this.#callerSignal = callerSignal;
    if (callerSignal?.aborted) this.cause = "aborted";
    callerSignal?.addEventListener("abort", this.#onCallerAbort, { once: true });
    this.#timer = timeoutMs > 0 ? setTimeout(() => this.stop("timeout"), timeoutMs) : undefined;
  }

  stop(cause: StopCause): void {
    if (this.cause === undefined || (this.cause === "stalled" && cause !== "stalled")) this.cause = cause;
    if (cause !== "stalled") this.#controller().abort(cause);
    void this.session?.abort();
  }

  /** Aborts what pi is doing without a stop cause (a limit hit: the attempt ends as the limit's). */
  abortSession(): void {
    const session = this.session;
    // Called from inside pi's event emission (a response cut mid-stream): pi 0.87.1 can lose an abort made
    // there when the provider's stream completes at the same time — the run then never ends (seen: a reply
    // cut at a chunk boundary waited for the turn timeout). Aborting right after the emission is safe.
    setImmediate(() => void session?.abort());
  }

  /** Aborted by the caller or the timeout, never by a stall: ends a wait before a retry. */
  get signal(): AbortSignal {
    return this.#controller().signal;
  }

  #controller(): AbortController {
    this.#abort ??= new AbortController();
    return this.#abort;
  }

  /** Clears the turn timeout. */
  clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }

  /** Stops listening to the caller's signal. */
  release(): void {
    this.#callerSignal?.removeEventListener("abort", this.#onCallerAbort);
  }
}

/** What a turn stopped by the timeout or the caller reports. */
export function stopMessage(cause: "timeout" | "aborted", timeoutMs: number): string {
  return cause === "timeout" ? `turn timed out after ${timeoutMs} ms` : "aborted by the caller";
}
