// Session leases with fencing tokens on PostgreSQL: the cross-process lane (DESIGN §7). Owns: acquiring,
// renewing and releasing a lease on a session key in the `session_leases` table (one row per key, its token
// growing by one at every acquisition, so tokens are monotonic per session), the database clock as the only
// clock (no skew between hosts), and the fencing check that writers run inside their own write transaction.
// Does not own: the contract and keeping a lease renewed (../leases.ts, shared with SQLite), what a lease
// holder does (the kernel runs the turn) or in-process lanes (kernel/lanes.ts).
//
// Why a table and row locks rather than advisory locks: an advisory lock lives as long as one connection, so
// a holder that hangs (GC pause, network partition) keeps it forever, and a holder's writes through other
// pool connections cannot prove they are still the holder. A lease row expires by time, and its token lets
// every write prove it: the fencing check takes `FOR SHARE` on the lease row inside the write's transaction,
// so a concurrent acquisition (an `UPDATE` of that row) waits for the write to commit, and a write that starts
// after a newer acquisition sees the newer token and is refused. No write of an old holder lands after a new
// holder's lease began.
import { type Kysely, sql } from "kysely";
import {
  type AcquireOptions,
  checkLeaseTtl,
  type LeaseHold,
  LeaseLostError,
  leaseFromRow,
  RenewingLeases,
  type SessionLease,
  type SessionLeasesApi,
} from "../leases.ts";

// The contract lives with the backend-neutral store (../leases.ts); these names stay importable from here.
export { type AcquireOptions, type LeaseHold, LeaseLostError, type SessionLease, type SessionLeasesApi };

/** Epoch ms on the database's clock. */
const DB_NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

interface LeaseRow {
  session_key: string;
  owner: string | null;
  token: number;
  expires_at: number;
}

export class PostgresSessionLeases extends RenewingLeases {
  readonly #db: Kysely<unknown>;

  constructor(db: Kysely<unknown>) {
    super();
    this.#db = db;
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
      // One statement: the row lock of ON CONFLICT DO UPDATE makes concurrent acquirers take turns, and the
      // WHERE lets only an acquirer that finds the lease expired (or released) bump the token.
      const { rows } = await sql<LeaseRow>`
        INSERT INTO session_leases AS l (session_key, owner, token, expires_at, updated_at)
        VALUES (${sessionKey}, ${owner}, 1, ${DB_NOW} + ${ttlMs}, ${DB_NOW})
        ON CONFLICT (session_key) DO UPDATE
          SET owner = EXCLUDED.owner, token = l.token + 1, expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
          WHERE l.expires_at <= ${DB_NOW}
        RETURNING session_key, owner, token, expires_at`.execute(this.#db);
      const row = rows[0];
      if (row !== undefined) return leaseFromRow(row);
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 25));
    }
  }

  async renew(lease: SessionLease, ttlMs: number): Promise<SessionLease> {
    checkLeaseTtl(ttlMs);
    const { rows } = await sql<LeaseRow>`
      UPDATE session_leases SET expires_at = ${DB_NOW} + ${ttlMs}, updated_at = ${DB_NOW}
      WHERE session_key = ${lease.sessionKey} AND token = ${lease.token}
      RETURNING session_key, owner, token, expires_at`.execute(this.#db);
    const row = rows[0];
    if (row === undefined) {
      throw new LeaseLostError(lease, (await this.current(lease.sessionKey))?.token, "renewing the lease");
    }
    return leaseFromRow(row);
  }

  async release(lease: SessionLease): Promise<boolean> {
    const result = await sql`
      UPDATE session_leases SET expires_at = 0, owner = NULL, updated_at = ${DB_NOW}
      WHERE session_key = ${lease.sessionKey} AND token = ${lease.token}`.execute(this.#db);
    return Number(result.numAffectedRows ?? 0n) === 1;
  }

  async current(sessionKey: string): Promise<SessionLease | undefined> {
    const { rows } = await sql<LeaseRow>`
      SELECT session_key, owner, token, expires_at FROM session_leases WHERE session_key = ${sessionKey}`.execute(
      this.#db,
    );
    const row = rows[0];
    return row === undefined ? undefined : leaseFromRow(row);
  }
}

/**
 * The fencing check, run first inside a write transaction (`trx`): refuses unless `lease` holds the newest
 * token of its session, and keeps the lease row share-locked until the write commits.
 */
export async function assertFence(trx: Kysely<unknown>, lease: SessionLease, doing: string): Promise<void> {
  const { rows } = await sql<{ token: number }>`
    SELECT token FROM session_leases WHERE session_key = ${lease.sessionKey} FOR SHARE`.execute(trx);
  const current = rows[0] === undefined ? undefined : Number(rows[0].token);
  if (current !== lease.token) throw new LeaseLostError(lease, current, doing);
}
