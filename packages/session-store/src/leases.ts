// The session-lease contract both stores keep: the cross-process lane (DESIGN §7). Owns: what a lease is (a
// session key, its holder, a fencing token that grows by one at every acquisition, an expiry), the error a
// fenced write gets once a newer holder exists, the API a store offers (`SessionLeasesApi`), keeping a lease
// renewed in the background while a turn runs (`holdLease`, shared by both stores), and the part of a store a
// kernel needs to run turns under leases (`LeasingSessionStore`). Does not own: where leases live and how a
// write is fenced atomically (sqlite/leases.ts and sqlite/fenced.ts: the control-plane file; postgres/leases.ts:
// the database, on its clock), or what a holder does (the kernel runs the turn).
//
// Why leases on SQLite too: one SQLite state dir is shared by every process on the machine that opens it (the
// gateway daemon and an `agent -m` in a shell both write `agent:main:main`), and two turns of one session
// that read the same leaf fork its transcript. A lease per session key makes them take turns.

import { SessionStoreError } from "./errors.ts";
import type { RunsApi } from "./runs.ts";
import type { SessionStore } from "./store.ts";

/** A held lease. `token` is the fencing token: larger than every earlier holder's for this session key. */
export interface SessionLease {
  readonly sessionKey: string;
  readonly owner: string;
  readonly token: number;
  /** When it lapses unless renewed, epoch ms (PostgreSQL: the database's clock; SQLite: this machine's). */
  readonly expiresAt: number;
  /**
   * Set by `acquire`: whether the previous holder never released it (it expired, or its process is gone), so
   * what it left unfinished (a run still `running`) may need recovering. Undefined where the store cannot
   * tell (PostgreSQL): assume it may.
   */
  readonly tookOver?: boolean;
}

/** The lease is no longer this holder's: it expired and another owner acquired it (a newer token exists). */
export class LeaseLostError extends SessionStoreError {
  override readonly name = "LeaseLostError";
  readonly sessionKey: string;
  readonly token: number;
  readonly currentToken: number | undefined;
  constructor(lease: SessionLease, currentToken: number | undefined, doing: string) {
    super(
      `${doing} refused by fencing: the lease on ${lease.sessionKey} held by ${lease.owner} with token ${lease.token} ` +
        (currentToken === undefined
          ? "does not exist"
          : `was superseded (the current token is ${currentToken})`),
    );
    this.sessionKey = lease.sessionKey;
    this.token = lease.token;
    this.currentToken = currentToken;
  }
}

export interface AcquireOptions {
  /** Keep trying until this many ms have passed (default 0: one attempt). */
  readonly waitMs?: number;
  /** Between attempts (default 25 ms). */
  readonly pollMs?: number;
}

export interface SessionLeasesApi {
  /**
   * The lease, or undefined when another owner holds an unexpired one (after `waitMs`). A lease whose holder
   * is provably gone may be taken before it expires (SQLite: a dead process on this machine).
   */
  acquire(
    sessionKey: string,
    owner: string,
    ttlMs: number,
    options?: AcquireOptions,
  ): Promise<SessionLease | undefined>;
  /** Extends a lease that no newer token superseded (even if it expired meanwhile); throws `LeaseLostError` otherwise. */
  renew(lease: SessionLease, ttlMs: number): Promise<SessionLease>;
  /** Ends the lease now (its token stays, so the next one is larger). False when it was already superseded. */
  release(lease: SessionLease): Promise<boolean>;
  /** The current row (holder, token, expiry), expired or not. */
  current(sessionKey: string): Promise<SessionLease | undefined>;
  /**
   * Acquires (as `acquire`) and keeps the lease renewed every `ttlMs / 3` until `release()`, for a turn that
   * may outlast one TTL. `lost` aborts (with the `LeaseLostError`) when a renewal finds a newer token.
   */
  hold(
    sessionKey: string,
    owner: string,
    ttlMs: number,
    options?: AcquireOptions,
  ): Promise<LeaseHold | undefined>;
}

/** A lease kept renewed in the background. */
export interface LeaseHold {
  /** The lease as last renewed (its token never changes). */
  readonly lease: SessionLease;
  /** Aborted when the lease was lost; its `reason` is the `LeaseLostError`. */
  readonly lost: AbortSignal;
  /** Stops renewing and releases the lease (false when it had been lost). */
  release(): Promise<boolean>;
  /**
   * Stops renewing without releasing: the lease lapses at its expiry. For a holder whose writes may not all be
   * readable by the next holder yet (a transcript fold that failed): the session stays its own a while longer.
   */
  abandon(): Promise<void>;
}

export interface LoadTranscriptOptions {
  /** Fence every later write of this transcript with this lease (refused once a newer token exists). */
  readonly lease?: SessionLease;
}

/** A store with leases: both of ours. What a kernel needs to run each turn under its session's lease. */
export interface LeasingSessionStore extends SessionStore {
  readonly leases: SessionLeasesApi;
  /** Run writes (start, update, appendEvents, finish) refused with `LeaseLostError` unless `lease` is the newest. */
  fencedRuns(lease: SessionLease): RunsApi;
  /** As `SessionStore.loadTranscript`; with `lease`, the transcript's later writes are fenced by it. */
  loadTranscript(agentId: string, sessionId: string, options?: LoadTranscriptOptions): Promise<void>;
}

export function checkLeaseTtl(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs <= 0) {
    throw new SessionStoreError(`lease ttlMs must be a positive integer (got ${ttlMs})`);
  }
}

/**
 * `SessionLeasesApi.hold` over a store's `acquire`/`renew`/`release`: renews every `ttlMs / 3` (a failed round
 * trip is retried by the next tick; a `LeaseLostError` stops the renewals and aborts `lost`).
 */
export async function holdLease(
  api: Pick<SessionLeasesApi, "acquire" | "renew" | "release">,
  sessionKey: string,
  owner: string,
  ttlMs: number,
  options: AcquireOptions = {},
): Promise<LeaseHold | undefined> {
  const acquired = await api.acquire(sessionKey, owner, ttlMs, options);
  if (acquired === undefined) return undefined;
  let lease: SessionLease = acquired;
  const controller = new AbortController();
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(
    () => {
      renewing = api.renew(lease, ttlMs).then(
        (renewed) => {
          lease = renewed;
        },
        (error: unknown) => {
          if (error instanceof LeaseLostError) {
            clearInterval(timer);
            controller.abort(error);
          }
        },
      );
    },
    Math.max(1, Math.floor(ttlMs / 3)),
  );
  timer.unref();
  return {
    get lease() {
      return lease;
    },
    lost: controller.signal,
    release: async () => {
      clearInterval(timer);
      await renewing;
      if (controller.signal.aborted) return false;
      return api.release(lease);
    },
    abandon: async () => {
      clearInterval(timer);
      await renewing;
    },
  };
}

/** The columns of a `session_leases` row both stores keep. */
export interface LeaseRowColumns {
  readonly session_key: string;
  readonly owner: string | null;
  readonly token: number | string;
  readonly expires_at: number | string;
}

/** A lease as the API returns it, from its row (`tookOver` only where the store can tell). */
export function leaseFromRow(row: LeaseRowColumns, tookOver?: boolean): SessionLease {
  return {
    sessionKey: row.session_key,
    owner: row.owner ?? "",
    token: Number(row.token),
    expiresAt: Number(row.expires_at),
    ...(tookOver === undefined ? {} : { tookOver }),
  };
}

/** What both stores' lease APIs share: `hold` over their own acquire, renew and release. */
export abstract class RenewingLeases implements SessionLeasesApi {
  abstract acquire(
    sessionKey: string,
    owner: string,
    ttlMs: number,
    options?: AcquireOptions,
  ): Promise<SessionLease | undefined>;
  abstract renew(lease: SessionLease, ttlMs: number): Promise<SessionLease>;
  abstract release(lease: SessionLease): Promise<boolean>;
  abstract current(sessionKey: string): Promise<SessionLease | undefined>;

  /** Holds made through this API and not released, abandoned or lost yet (released by `releaseHeld`). */
  readonly #held = new Set<LeaseHold>();

  async hold(
    sessionKey: string,
    owner: string,
    ttlMs: number,
    options: AcquireOptions = {},
  ): Promise<LeaseHold | undefined> {
    const hold = await holdLease(this, sessionKey, owner, ttlMs, options);
    if (hold === undefined) return undefined;
    const held = this.#held;
    held.add(hold);
    hold.lost.addEventListener("abort", () => held.delete(hold), { once: true });
    return {
      get lease() {
        return hold.lease;
      },
      lost: hold.lost,
      release: () => {
        held.delete(hold);
        return hold.release();
      },
      abandon: () => {
        held.delete(hold);
        return hold.abandon();
      },
    };
  }

  /**
   * Releases every hold still held (a store closing: a holder that kept its lease between turns — the
   * kernel's sticky leases — must not leave it to lapse at its TTL when its process ends).
   */
  async releaseHeld(): Promise<void> {
    const holds = [...this.#held];
    this.#held.clear();
    await Promise.all(holds.map((hold) => hold.release().catch(() => false)));
  }
}

/** The store's leasing side, or undefined for a store without leases. */
export function leasingStoreOf(store: SessionStore): LeasingSessionStore | undefined {
  const candidate = store as Partial<LeasingSessionStore>;
  return typeof candidate.fencedRuns === "function" && typeof candidate.leases?.hold === "function"
    ? (store as LeasingSessionStore)
    : undefined;
}
