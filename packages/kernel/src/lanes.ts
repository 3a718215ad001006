// Per-session lanes and the global concurrency cap (OpenClaw's `session:<key>` lanes and the `main` lane
// capped by `agents.defaults.maxConcurrent`). Owns: FIFO order of the tasks of one lane, at most one task of a
// lane running at a time, at most `maxConcurrent` tasks running across lanes (granted FIFO), and leaving a
// queue when the caller's signal aborts. A task takes its lane first and a global slot second, so a busy
// session never holds slots other sessions could use. Does not own: what a task does, or cross-process
// locking (session-leases.ts: on PostgreSQL a turn also holds its session's lease, taken inside this lane).

/** The wait was given up because the caller's signal aborted. */
export class LaneWaitAbortedError extends Error {
  override readonly name = "LaneWaitAbortedError";
}

interface Waiter {
  readonly grant: () => void;
}

/** A FIFO semaphore whose waits can be abandoned. */
class Semaphore {
  #available: number;
  readonly #queue: Waiter[] = [];

  constructor(permits: number) {
    this.#available = permits;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  acquire(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(new LaneWaitAbortedError("aborted before it started"));
    if (this.#available > 0 && this.#queue.length === 0) {
      this.#available -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
        reject(new LaneWaitAbortedError("aborted while queued"));
      };
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      this.#queue.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  release(): void {
    const next = this.#queue.shift();
    if (next) next.grant();
    else this.#available += 1;
  }
}

export interface LaneStats {
  /** Tasks running now (holding a global slot). */
  readonly running: number;
  /** Lanes with a task running or waiting. */
  readonly lanes: number;
  readonly maxConcurrent: number;
}

export class LaneScheduler {
  readonly maxConcurrent: number;
  readonly #global: Semaphore;
  readonly #lanes = new Map<string, { semaphore: Semaphore; users: number }>();
  #running = 0;

  constructor(maxConcurrent: number) {
    if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) {
      throw new RangeError(`maxConcurrent must be a whole number >= 1, got ${maxConcurrent}`);
    }
    this.maxConcurrent = maxConcurrent;
    this.#global = new Semaphore(maxConcurrent);
  }

  stats(): LaneStats {
    return { running: this.#running, lanes: this.#lanes.size, maxConcurrent: this.maxConcurrent };
  }

  /**
   * Runs `task` when it is first in its lane and a global slot is free; rejects with `LaneWaitAbortedError`
   * (without running it) when `signal` aborts first. A signal that aborts once the task runs is the
   * task's business.
   */
  async run<T>(laneKey: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let lane = this.#lanes.get(laneKey);
    if (!lane) {
      lane = { semaphore: new Semaphore(1), users: 0 };
      this.#lanes.set(laneKey, lane);
    }
    lane.users += 1;
    try {
      await lane.semaphore.acquire(signal);
      try {
        await this.#global.acquire(signal);
        this.#running += 1;
        try {
          return await task();
        } finally {
          this.#running -= 1;
          this.#global.release();
        }
      } finally {
        lane.semaphore.release();
      }
    } finally {
      lane.users -= 1;
      if (lane.users === 0) this.#lanes.delete(laneKey);
    }
  }
}
