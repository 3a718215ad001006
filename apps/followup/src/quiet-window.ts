// The collect/followup debounce: when a message last arrived for a busy session, and waiting until none has
// arrived for the session's quiet window (OpenClaw's debounce). Owns: those times and the sleeping waiters
// (woken at once on stop). Does not own: the window's length (session-settings.ts) or what runs after it.
import type { Clock } from "./clock.ts";

export class QuietWindows {
  readonly #clock: Clock;
  /** When a message last arrived for a busy session: the debounce window runs from there. */
  readonly #lastBusyEnqueue = new Map<string, number>();
  readonly #sleepers = new Set<() => void>();
  #stopped = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** A message arrived for a busy session at `now`: its window starts again. */
  arrived(sessionKey: string, now: number): void {
    this.#lastBusyEnqueue.set(sessionKey, now);
  }

  /** Waits until no message has arrived for a busy session for `debounceMs`, or `stop` is called. */
  async wait(sessionKey: string, debounceMs: number): Promise<void> {
    for (;;) {
      const last = this.#lastBusyEnqueue.get(sessionKey);
      if (last === undefined || this.#stopped) return;
      const wait = last + debounceMs - this.#clock.now();
      if (wait <= 0) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#sleepers.delete(wake);
          this.#clock.clearTimeout(handle);
          resolve();
        };
        const handle = this.#clock.setTimeout(wake, wait);
        this.#sleepers.add(wake);
      });
    }
  }

  /** Ends every wait now, and every later one at once. */
  stop(): void {
    this.#stopped = true;
    for (const wake of this.#sleepers) wake();
  }
}
