// Time for the scheduler: what "now" is and how it waits. Owns the `CronClock` seam, the system clock, and a
// manual clock that tests and the parity harness drive by hand (time moves only when told; due timers fire in
// order, each at its own due time). Does not own scheduling decisions (scheduler.ts).

/** An opaque timer handle. */
export type TimerHandle = { readonly timerId: number };

export interface CronClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once after `delayMs` (0 or more). */
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/**
 * The real clock: `Date.now` and `setTimeout`. The timers hold the process (a started scheduler is what keeps
 * `agent-cron start` alive; unref'd timers let it exit a second after start); `stop()` clears them.
 */
export function systemClock(): CronClock {
  const timers = new Map<number, NodeJS.Timeout>();
  let nextId = 1;
  return {
    now: () => Date.now(),
    setTimer(callback, delayMs) {
      const timerId = nextId++;
      // setTimeout's ceiling is 2^31-1 ms; a longer wait re-arms on the scheduler's next sleep.
      const timeout = setTimeout(
        () => {
          timers.delete(timerId);
          callback();
        },
        Math.min(Math.max(0, delayMs), 2_147_483_647),
      );
      timers.set(timerId, timeout);
      return { timerId };
    },
    clearTimer(handle) {
      const timeout = timers.get(handle.timerId);
      if (timeout !== undefined) clearTimeout(timeout);
      timers.delete(handle.timerId);
    },
  };
}

interface ManualTimer {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
}

/**
 * A clock that moves only when told. `advanceTo` walks time forward timer by timer: each due timer fires with
 * `now()` equal to its due time, then `settle` (e.g. the scheduler's `settled()`) is awaited before the next,
 * so a long jump behaves like the same time passing on a real clock, with no sleeping.
 */
export class ManualClock implements CronClock {
  #now: number;
  #timers: ManualTimer[] = [];
  #nextId = 1;

  constructor(start: number | Date) {
    this.#now = typeof start === "number" ? start : start.getTime();
  }

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, delayMs), callback };
    this.#timers.push(timer);
    return { timerId: timer.id };
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((timer) => timer.id !== handle.timerId);
  }

  /** Timers not yet fired, earliest first. */
  pendingTimers(): readonly { readonly at: number }[] {
    return [...this.#timers].sort((a, b) => a.at - b.at).map(({ at }) => ({ at }));
  }

  /** Sets the time without firing anything (downtime: nobody was there to see it pass). */
  jumpTo(target: number | Date): void {
    const at = typeof target === "number" ? target : target.getTime();
    if (at < this.#now) throw new Error(`ManualClock cannot go back in time (${at} < ${this.#now})`);
    this.#now = at;
  }

  async advanceTo(target: number | Date, settle: () => Promise<unknown> = async () => {}): Promise<void> {
    const end = typeof target === "number" ? target : target.getTime();
    if (end < this.#now) throw new Error(`ManualClock cannot go back in time (${end} < ${this.#now})`);
    for (;;) {
      // Settle first: what the last callback (or the caller) started may arm a timer that is already due.
      await settle();
      const due = this.#timers
        .filter((timer) => timer.at <= end)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) {
        if (this.#now === end) return;
        this.#now = end;
        continue;
      }
      this.#timers = this.#timers.filter((timer) => timer.id !== due.id);
      this.#now = Math.max(this.#now, due.at);
      due.callback();
    }
  }

  advance(ms: number, settle?: () => Promise<unknown>): Promise<void> {
    return this.advanceTo(this.#now + ms, settle);
  }
}
