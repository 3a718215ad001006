// Cross-process lanes: a turn holds its session's lease in the store (`session_leases`: in the SQLite control
// plane, or in PostgreSQL; DESIGN §7) while it runs, so that turns of one session key never overlap across
// processes — a gateway and an `agent -m` in a shell share one SQLite state dir, and gateways on several hosts
// share one PostgreSQL database. Owns: waiting for the lease within the turn's abort signal and timeout,
// keeping it renewed while the turn runs, keeping it a few ms after the turn for this process's next turn of
// the session (the sticky lease: that turn pays no acquisition, and neither pays the release or the fold of
// the journaled writes — those happen when the lease is let go), and what the executor's writes are fenced with while it is held
// (the run's fenced runs API, the session's lease for `loadTranscript`). Does not own: the lease rules and
// fencing (session-store), in-process lanes (lanes.ts: the lease is taken inside the in-process lane, so one
// process asks for a session's lease once at a time), or running the turn (kernel.ts).
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { LeaseHold, LeasingSessionStore, RunsApi, SessionLease } from "@agent-kernel/session-store";
import { LaneWaitAbortedError } from "./lanes.ts";

/** The part of a store that has leases (both of ours). */
export type LeasingStore = LeasingSessionStore;

export { leasingStoreOf } from "@agent-kernel/session-store";

/** The session's lease was not free before the turn's timeout: another process kept the session busy. */
export class LeaseWaitTimeoutError extends Error {
  override readonly name = "LeaseWaitTimeoutError";
}

export interface SessionLeaseSettings {
  /**
   * How long a lease lasts without renewal (default 30 s; renewed every third of it while the turn runs). A
   * process that dies holding one blocks its session this long, no longer.
   */
  readonly ttlMs?: number;
  /** Between attempts while another process holds the lease (default 25 ms). */
  readonly pollMs?: number;
  /** Who holds the leases of this kernel (default `<host>:<pid>:<random>`), as stored in `session_leases`. */
  readonly owner?: string;
  /**
   * How long a lease is kept after its turn for this process's next turn of the session (default 10 ms; 0:
   * released at once). Within it the next turn reuses the lease — no acquisition, no release, no fold of the
   * turn's journaled writes on either turn's path; after it the writes are folded and the lease released. A
   * process waiting for the session waits this much longer at most.
   */
  readonly keepMs?: number;
}

export const DEFAULT_LEASE_TTL_MS = 30_000;
const DEFAULT_LEASE_POLL_MS = 25;
const DEFAULT_LEASE_KEEP_MS = 10;
/**
 * A lease is reused by at most this many turns in a row, then let go like any other (so a process with a
 * steady queue for one session gives a waiting process its chance, as a release after every turn did).
 */
const MAX_REUSES = 16;

/** A lease kept after its turn, until its next turn here or until it is let go. */
interface KeptLease {
  readonly held: HeldSessionLease;
  readonly settle: () => Promise<void>;
  readonly reuses: number;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** A held lease and what the turn's writes are fenced with. */
export interface HeldSessionLease {
  readonly hold: LeaseHold;
  readonly lease: SessionLease;
  /** Run writes refused once a newer holder exists. */
  readonly runs: RunsApi;
}

export class SessionLeases {
  readonly #store: LeasingStore;
  readonly #ttlMs: number;
  readonly #pollMs: number;
  readonly #keepMs: number;
  readonly #kept = new Map<string, KeptLease>();
  /** Per session key, how many turns in a row reused its lease. */
  readonly #reuses = new Map<string, number>();
  /** Per settle function, the one run of it that leases let go in this event-loop turn wait for. */
  readonly #settling = new Map<() => Promise<void>, Promise<boolean>>();
  readonly owner: string;

  constructor(store: LeasingStore, settings: SessionLeaseSettings = {}) {
    this.#store = store;
    this.#ttlMs = settings.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.#pollMs = settings.pollMs ?? DEFAULT_LEASE_POLL_MS;
    this.#keepMs = settings.keepMs ?? DEFAULT_LEASE_KEEP_MS;
    this.owner = settings.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  }

  /**
   * After a turn: keeps its lease for this process's next turn of the session (the sticky lease), or — with
   * `keepMs` 0, after `MAX_REUSES` turns in a row, or once lost — lets it go now. Letting go awaits `settle`
   * (the store's flush: the next holder, maybe another process, must read every write of the turn; pass the
   * same function every time, so leases let go together share one run of it), then
   * releases; a settle that fails leaves the lease to lapse at its TTL instead. A store that closes releases
   * a lease still kept (session-store's `releaseHeld`).
   */
  async keep(sessionKey: string, held: HeldSessionLease, settle: () => Promise<void>): Promise<void> {
    const reuses = this.#reuses.get(sessionKey) ?? 0;
    if (this.#keepMs <= 0 || reuses >= MAX_REUSES || held.hold.lost.aborted) {
      this.#reuses.delete(sessionKey);
      await this.#letGo(held, settle);
      return;
    }
    const timer = setTimeout(() => {
      if (this.#kept.get(sessionKey)?.held !== held) return;
      this.#kept.delete(sessionKey);
      this.#reuses.delete(sessionKey);
      void this.#letGo(held, settle);
    }, this.#keepMs);
    this.#kept.set(sessionKey, { held, settle, reuses, timer });
  }

  /**
   * Settles the turn's writes, then releases the lease; a failed settle leaves it to lapse at its TTL. Every
   * lease let go in one event-loop turn waits for one run of `settle` after it (the store's flush folds every
   * session's writes at once: hundreds of sessions going idle together make one fold, not one each), which
   * starts after all of their turns' writes were made.
   */
  async #letGo(held: HeldSessionLease, settle: () => Promise<void>): Promise<void> {
    let settled = this.#settling.get(settle);
    if (settled === undefined) {
      settled = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.#settling.delete(settle);
        return settle().then(
          () => true,
          () => false,
        );
      });
      this.#settling.set(settle, settled);
    }
    if (await settled) await held.hold.release().catch(() => false);
    else await held.hold.abandon();
  }

  /** The lease kept for `sessionKey`, taken for a new turn when it is still ours. */
  #reuse(sessionKey: string): HeldSessionLease | undefined {
    const kept = this.#kept.get(sessionKey);
    if (kept === undefined) return undefined;
    this.#kept.delete(sessionKey);
    clearTimeout(kept.timer);
    if (kept.held.hold.lost.aborted) {
      this.#reuses.delete(sessionKey);
      void kept.held.hold.abandon();
      return undefined;
    }
    this.#reuses.set(sessionKey, kept.reuses + 1);
    // Not a takeover: this process held the session through its last turn.
    return { ...kept.held, lease: { ...kept.held.hold.lease, tookOver: false } };
  }

  /**
   * Waits for the session's lease. Rejects with `LaneWaitAbortedError` when `signal` aborts first and with
   * `LeaseWaitTimeoutError` once `timeoutMs` passed (0: wait without a bound), never holding it then.
   */
  async acquire(sessionKey: string, signal: AbortSignal, timeoutMs: number): Promise<HeldSessionLease> {
    if (signal.aborted) throw new LaneWaitAbortedError("aborted while waiting for the session's lease");
    const reused = this.#reuse(sessionKey);
    if (reused !== undefined) return reused;
    this.#reuses.delete(sessionKey);
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY;
    for (;;) {
      if (signal.aborted) throw new LaneWaitAbortedError("aborted while waiting for the session's lease");
      // One attempt each (waitMs 0): the wait between attempts is ours, so that it can be abandoned.
      const hold = await this.#store.leases.hold(sessionKey, this.owner, this.#ttlMs);
      if (hold !== undefined) {
        if (signal.aborted) {
          await hold.release();
          throw new LaneWaitAbortedError("aborted while waiting for the session's lease");
        }
        return { hold, lease: hold.lease, runs: this.#store.fencedRuns(hold.lease) };
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new LeaseWaitTimeoutError(
          `session ${sessionKey} stayed busy in another process for ${timeoutMs} ms (its lease was never free)`,
        );
      }
      await pause(Math.min(this.#pollMs, left), signal);
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (the caller checks it). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
