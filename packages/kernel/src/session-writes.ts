// The kernel's session-metadata writes after runs (session-update.ts makes each). Owns: when they run and how
// they commit — on a store whose sessions API can write together (`SessionsApi.writeTogether`: SQLite), the
// writes of every turn that ended in the same event-loop turn commit in one transaction (a group commit: one
// commit, and one set of WAL pages for the background checkpoint, instead of one per turn); on any other
// store, one write after another. Either way a turn's outcome waits for its own write to be committed, as
// before, and a refused or failed write is that turn's alone. Does not own: the patch (session-update.ts) or
// what the kernel does with the written record (kernel.ts).
import type { SessionRecord, SessionStore } from "@agent-kernel/session-store";
import type { TurnResult } from "@agent-kernel/turn-pipeline";
import { type SessionUpdateTimer, updateSessionAfterRun } from "./session-update.ts";
import type { PreparedSession } from "./types.ts";

/** One turn's session write waiting for the next group commit. */
interface QueuedWrite {
  readonly prepared: PreparedSession;
  readonly result: TurnResult;
  readonly timer: SessionUpdateTimer;
  readonly resolve: (record: SessionRecord | undefined) => void;
  readonly reject: (error: unknown) => void;
}

export class SessionWrites {
  readonly #store: SessionStore;
  readonly #now: () => number;
  /** Writes of stores that cannot write together: one after another (see `#oneAtATime`). */
  #chain: Promise<void> = Promise.resolve();
  /** Writes waiting for the group commit scheduled for them (undefined: none scheduled). */
  #queued: QueuedWrite[] | undefined;

  constructor(store: SessionStore, now: () => number) {
    this.#store = store;
    this.#now = now;
  }

  /**
   * Writes the session metadata after `result` (see `updateSessionAfterRun`); resolves once it is committed,
   * with the written record (undefined when the session is gone or runs under another sessionId now).
   * `timer` times the write's own work for the turn's `sessionUpdateMs`.
   */
  afterRun(
    prepared: PreparedSession,
    result: TurnResult,
    timer: SessionUpdateTimer,
  ): Promise<SessionRecord | undefined> {
    if (typeof this.#store.sessions.writeTogether !== "function") {
      return this.#oneAtATime(() => {
        timer.enter("sessionUpdateMs");
        const updating = updateSessionAfterRun(this.#store, prepared, result, this.#now(), timer);
        timer.pause();
        return updating;
      });
    }
    return new Promise((resolve, reject) => {
      if (this.#queued === undefined) {
        this.#queued = [];
        // After the event-loop turn: every turn that ends meanwhile joins this commit.
        setImmediate(() => this.#commitQueued());
      }
      this.#queued.push({ prepared, result, timer, resolve, reject });
    });
  }

  /** The queued writes in one transaction; if that transaction fails, nothing of it was committed: each again on its own. */
  #commitQueued(): void {
    const queued = this.#queued ?? [];
    this.#queued = undefined;
    let made: Promise<SessionRecord | undefined>[] = [];
    const writeEach = (): Promise<SessionRecord | undefined>[] => {
      made = queued.map(({ prepared, result, timer }) => {
        timer.enter("sessionUpdateMs");
        try {
          return updateSessionAfterRun(this.#store, prepared, result, this.#now(), timer);
        } catch (error) {
          return Promise.reject(error);
        } finally {
          timer.pause();
        }
      });
      return made;
    };
    let written: Promise<SessionRecord | undefined>[];
    try {
      // `writeTogether` is there: checked in `afterRun` (a store does not lose a method).
      written = this.#store.sessions.writeTogether?.(writeEach) ?? writeEach();
    } catch {
      // The group commit failed (busy, or SQLite rolled it back): the results of its calls were never
      // committed, so they are dropped and every write runs again on its own, with its own error if any.
      for (const dropped of made) dropped.catch(() => undefined);
      written = writeEach();
    }
    queued.forEach((write, index) => {
      void written[index]?.then(write.resolve, write.reject);
    });
  }

  /**
   * One write after another. The PostgreSQL store writes sessions through Kysely, whose connection lock wakes
   * every waiter on each release: hundreds of turns ending at once would make that quadratic (measured: 2.5 s
   * per 1000 concurrent turns). Waiting here costs one wake-up each.
   */
  #oneAtATime<T>(write: () => Promise<T>): Promise<T> {
    const written = this.#chain.then(write);
    this.#chain = written.then(
      () => undefined,
      () => undefined,
    );
    return written;
  }
}
