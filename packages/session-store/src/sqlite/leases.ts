// Session leases with fencing tokens on SQLite: the cross-process lane of a state dir shared by several
// processes on one machine. Owns: acquiring, renewing and releasing a lease on a session key in the control
// plane's `session_leases` table (migration 7; one row per key, its token growing by one at every
// acquisition), taking over at once a lease whose holder process is provably gone, and the fencing check a
// writer runs (`SqliteLeaseFence`). Does not own: the contract and renewing in the background (../leases.ts),
// which writes are fenced and how (./fenced.ts), or what a holder does (the kernel runs the turn).
//
// Why the clock is fine here: every process that opens one SQLite file runs on the machine that holds it, so
// they share one clock; a jump forward can only end a lease early, and fencing refuses the old holder's
// writes then. Why a dead holder is taken over before its TTL: a gateway killed mid-turn would otherwise hold
// its busiest session for the whole TTL; the row records host, pid and the process's start time and boot, so
// "gone" is proven (a pid reused by another process is not the holder), never guessed.
import { hostname } from "node:os";
import type Database from "better-sqlite3";
import {
  type AcquireOptions,
  checkLeaseTtl,
  LeaseLostError,
  leaseFromRow,
  RenewingLeases,
  type SessionLease,
} from "../leases.ts";
import { ownProcessStart } from "../owner-process.ts";
import { isRunOwnerAlive } from "../runs.ts";

interface LeaseRow {
  session_key: string;
  owner: string | null;
  token: number;
  expires_at: number;
  owner_host: string | null;
  owner_pid: number | null;
  owner_start_time: number | null;
  owner_boot_id: string | null;
}

/** True when the row's holder is provably no longer running: its process on this machine is gone or reused. */
export function leaseHolderGone(row: LeaseRow): boolean {
  if (row.owner === null || row.owner_pid === null || row.owner_host === null) return false;
  // This process's own leases (another store or kernel of it) end by release or TTL, never by a probe.
  if (row.owner_host === hostname() && row.owner_pid === process.pid) return false;
  // The runs' owner rule: another machine's process cannot be probed (its TTL decides); here, a free pid or
  // one now held by a process that started at another time or in another boot is gone.
  return !isRunOwnerAlive({
    host: row.owner_host,
    pid: row.owner_pid,
    token: "",
    ...(row.owner_start_time === null ? {} : { startTime: Number(row.owner_start_time) }),
    ...(row.owner_boot_id === null ? {} : { bootId: row.owner_boot_id }),
  });
}

/** The fencing check, run inside a write transaction of the control-plane connection. */
export class SqliteLeaseFence {
  readonly #selectToken: Database.Statement<[string], number>;

  constructor(db: Database.Database) {
    this.#selectToken = db
      .prepare<[string], number>("SELECT token FROM session_leases WHERE session_key = ?")
      .pluck();
  }

  /** Throws `LeaseLostError` unless `lease` holds the newest token of its session. */
  assert(lease: SessionLease, doing: string): void {
    const stored = this.#selectToken.get(lease.sessionKey);
    const current = stored === undefined ? undefined : Number(stored);
    if (current !== lease.token) throw new LeaseLostError(lease, current, doing);
  }
}

/** A lease write waiting for its group commit, and the caller waiting for its committed answer. */
interface QueuedLeaseWrite {
  readonly write: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** SQLite rolled the group's transaction back by itself (disk full, I/O error): nothing of it was committed. */
class GroupCommitAborted extends Error {}

export class SqliteSessionLeases extends RenewingLeases {
  readonly #db: Database.Database;
  /** Acquisitions and releases waiting for the next group commit (undefined: none scheduled). */
  #queued: QueuedLeaseWrite[] | undefined;
  readonly #commitTogether: (queued: readonly QueuedLeaseWrite[]) => { ok: boolean; value: unknown }[];
  readonly #tryAcquire: (sessionKey: string, owner: string, ttlMs: number) => SessionLease | undefined;
  readonly #renew: Database.Statement<[number, number, string, number], LeaseRow>;
  readonly #release: Database.Statement<[number, string, number]>;
  readonly #select: Database.Statement<[string], LeaseRow>;
  readonly #onRelease: ((lease: SessionLease) => void) | undefined;

  /** `onRelease`: told of each lease this API released (the store stops fencing its transcripts with it). */
  constructor(db: Database.Database, onRelease?: (lease: SessionLease) => void) {
    super();
    this.#db = db;
    this.#onRelease = onRelease;
    // One IMMEDIATE transaction for every acquisition and release asked for in one event-loop turn; each
    // write inside it is its own savepoint (an acquisition) or statement, so one that fails fails alone.
    this.#commitTogether = db.transaction((queued: readonly QueuedLeaseWrite[]) =>
      queued.map(({ write }) => {
        if (!db.inTransaction) throw new GroupCommitAborted();
        let outcome: { ok: boolean; value: unknown };
        try {
          outcome = { ok: true, value: write() };
        } catch (error) {
          outcome = { ok: false, value: error };
        }
        if (!db.inTransaction) throw new GroupCommitAborted();
        return outcome;
      }),
    ).immediate;
    const select = db.prepare<[string], LeaseRow>("SELECT * FROM session_leases WHERE session_key = ?");
    const insert = db.prepare<unknown[], LeaseRow>(
      "INSERT INTO session_leases (session_key, owner, token, expires_at, owner_host, owner_pid, " +
        "owner_start_time, owner_boot_id, updated_at) VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?) RETURNING *",
    );
    const takeOver = db.prepare<unknown[], LeaseRow>(
      "UPDATE session_leases SET owner = ?, token = token + 1, expires_at = ?, owner_host = ?, owner_pid = ?, " +
        "owner_start_time = ?, owner_boot_id = ?, updated_at = ? WHERE session_key = ? AND token = ? RETURNING *",
    );
    this.#select = select;
    // IMMEDIATE: the write lock first, so the read that decides and the write that takes are one step.
    this.#tryAcquire = db.transaction((sessionKey: string, owner: string, ttlMs: number) => {
      const now = Date.now();
      const start = ownProcessStart();
      const holder = [hostname(), process.pid, start?.startTime ?? null, start?.bootId ?? null] as const;
      const row = select.get(sessionKey);
      if (row === undefined) {
        const inserted = insert.get(sessionKey, owner, now + ttlMs, ...holder, now);
        return inserted === undefined ? undefined : leaseFromRow(inserted, false);
      }
      const released = row.owner === null;
      const free = released || Number(row.expires_at) <= now || leaseHolderGone(row);
      if (!free) return undefined;
      const taken = takeOver.get(owner, now + ttlMs, ...holder, now, sessionKey, row.token);
      return taken === undefined ? undefined : leaseFromRow(taken, !released);
    }).immediate;
    this.#renew = db.prepare<[number, number, string, number], LeaseRow>(
      "UPDATE session_leases SET expires_at = ?, updated_at = ? WHERE session_key = ? AND token = ? RETURNING *",
    );
    this.#release = db.prepare<[number, string, number]>(
      "UPDATE session_leases SET expires_at = 0, owner = NULL, updated_at = ? WHERE session_key = ? AND token = ?",
    );
  }

  async acquire(
    sessionKey: string,
    owner: string,
    ttlMs: number,
    options: AcquireOptions = {},
  ): Promise<SessionLease | undefined> {
    checkLeaseTtl(ttlMs);
    const deadline = Date.now() + (options.waitMs ?? 0);
    for (;;) {
      const lease = await this.#together(() => this.#tryAcquire(sessionKey, owner, ttlMs));
      if (lease !== undefined) return lease;
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 25));
    }
  }

  async renew(lease: SessionLease, ttlMs: number): Promise<SessionLease> {
    checkLeaseTtl(ttlMs);
    const now = Date.now();
    const row = this.#renew.get(now + ttlMs, now, lease.sessionKey, lease.token);
    if (row === undefined) {
      throw new LeaseLostError(lease, (await this.current(lease.sessionKey))?.token, "renewing the lease");
    }
    return leaseFromRow(row);
  }

  async release(lease: SessionLease): Promise<boolean> {
    const released = await this.#together(
      () => this.#release.run(Date.now(), lease.sessionKey, lease.token).changes === 1,
    );
    if (released) this.#onRelease?.(lease);
    return released;
  }

  /**
   * Runs `write` in the group commit after this event-loop turn: every acquisition and release asked for
   * meanwhile commits in one transaction (one commit instead of one each: a gateway lets go of and takes
   * hundreds of sessions' leases at once). Resolves once the write is committed, with its own answer or its
   * own error. When the group's transaction fails as a whole, nothing of it was committed: each write then
   * runs again on its own.
   */
  #together<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#queued === undefined) {
        this.#queued = [];
        setImmediate(() => this.#commitQueued());
      }
      this.#queued.push({ write, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  #commitQueued(): void {
    const queued = this.#queued ?? [];
    this.#queued = undefined;
    let outcomes: { ok: boolean; value: unknown }[];
    try {
      if (!this.#db.open) throw new Error("the control plane is closed");
      outcomes = this.#commitTogether(queued);
    } catch {
      // Busy past the timeout, rolled back, or closed: no write of the group was committed.
      for (const { write, resolve, reject } of queued) {
        try {
          resolve(write());
        } catch (error) {
          reject(error);
        }
      }
      return;
    }
    outcomes.forEach((outcome, index) => {
      const waiting = queued[index];
      if (outcome.ok) waiting?.resolve(outcome.value);
      else waiting?.reject(outcome.value);
    });
  }

  async current(sessionKey: string): Promise<SessionLease | undefined> {
    const row = this.#select.get(sessionKey);
    return row === undefined ? undefined : leaseFromRow(row);
  }
}
