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

export class SqliteSessionLeases extends RenewingLeases {
  readonly #tryAcquire: (sessionKey: string, owner: string, ttlMs: number) => SessionLease | undefined;
  readonly #renew: Database.Statement<[number, number, string, number], LeaseRow>;
  readonly #release: Database.Statement<[number, string, number]>;
  readonly #select: Database.Statement<[string], LeaseRow>;
  readonly #onRelease: ((lease: SessionLease) => void) | undefined;

  /** `onRelease`: told of each lease this API released (the store stops fencing its transcripts with it). */
  constructor(db: Database.Database, onRelease?: (lease: SessionLease) => void) {
    super();
    this.#onRelease = onRelease;
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
      const lease = this.#tryAcquire(sessionKey, owner, ttlMs);
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
    const released = this.#release.run(Date.now(), lease.sessionKey, lease.token).changes === 1;
    if (released) this.#onRelease?.(lease);
    return released;
  }

  async current(sessionKey: string): Promise<SessionLease | undefined> {
    const row = this.#select.get(sessionKey);
    return row === undefined ? undefined : leaseFromRow(row);
  }
}
