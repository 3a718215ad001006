// Cross-process lanes: a turn holds its session's lease in the store (`session_leases`: in the SQLite control
// plane, or in PostgreSQL; DESIGN §7) while it runs, so that turns of one session key never overlap across
// processes — a gateway and an `agent -m` in a shell share one SQLite state dir, and gateways on several hosts
// share one PostgreSQL database. Owns: waiting for the lease within the turn's abort signal and timeout,
// keeping it renewed while the turn runs, and what the executor's writes are fenced with while it is held
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
}

export const DEFAULT_LEASE_TTL_MS = 30_000;
const DEFAULT_LEASE_POLL_MS = 25;

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
  readonly owner: string;

  constructor(store: LeasingStore, settings: SessionLeaseSettings = {}) {
    this.#store = store;
    this.#ttlMs = settings.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.#pollMs = settings.pollMs ?? DEFAULT_LEASE_POLL_MS;
    this.owner = settings.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  }

  /**
   * Waits for the session's lease. Rejects with `LaneWaitAbortedError` when `signal` aborts first and with
   * `LeaseWaitTimeoutError` once `timeoutMs` passed (0: wait without a bound), never holding it then.
   */
  async acquire(sessionKey: string, signal: AbortSignal, timeoutMs: number): Promise<HeldSessionLease> {
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
