// Time for the follow-up runner: the current time (queue timestamps, leases, the debounce window) and timers
// (waiting out the debounce window). Owns `systemClock` and `ManualClock`, a clock tests and the parity
// harness move by hand so debounce is exercised without waiting or timed assertions. Does not own the kernel's
// clock (runs and transcripts are stamped by the kernel).

export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface ManualTimer {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
}

/** A clock that moves only when told: `advance(ms)` fires every timer due by then, in time order. */
export class ManualClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: ManualTimer[] = [];
  #timerWaiters: (() => void)[] = [];

  constructor(start = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), callback };
    this.#timers.push(timer);
    const waiters = this.#timerWaiters;
    this.#timerWaiters = [];
    for (const wake of waiters) wake();
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((timer) => timer.id !== handle);
  }

  /** Timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Resolves once at least one timer is pending (at once when one already is). */
  whenTimerSet(): Promise<void> {
    if (this.#timers.length > 0) return Promise.resolve();
    return new Promise((resolve) => this.#timerWaiters.push(resolve));
  }

  /** Moves time forward by `ms`, firing the timers due on the way. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const due = this.#timers
        .filter((timer) => timer.at <= target)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((timer) => timer !== due);
      this.#now = Math.max(this.#now, due.at);
      due.callback();
    }
    this.#now = target;
  }
}
