// Which stores are alive, across hosts, on PostgreSQL. Owns: each open store's row in `store_owners` (its run
// owner token, host and pid) with a heartbeat on the database clock, removing it on close, pruning the rows
// of stores that are gone, and the recovery rule for runs left `running`: the owner is gone when its store
// has no row (closed), its heartbeat is older than `staleMs` (a process or host that died), or it is on this
// host and its pid is gone or now belongs to another process (found at once, without waiting for the
// heartbeat to go stale; runs.ts's rule, with the start time the run recorded). Does not own: the
// runs API (../runs.ts) or leases (./leases.ts).
import { hostname } from "node:os";
import { type Kysely, sql } from "kysely";
import { isRunOwnerAlive, KyselyRuns, type RunOwner, type RunRecord, runOwnerOf } from "../runs.ts";
import type { ControlPlaneDatabase } from "../schema.ts";

export const DEFAULT_STALE_MS = 60_000;

/** Epoch ms on the database's clock. */
const DB_NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export interface OwnerHeartbeatOptions {
  /** Between heartbeats (default 10 s). */
  readonly heartbeatMs?: number;
  /** A store whose last heartbeat is older than this is dead (default 60 s; keep it well above heartbeatMs). */
  readonly staleMs?: number;
}

/** Registers `owner` and beats until `stop()`. A failed beat is retried by the next one. */
export async function startOwnerHeartbeat(
  db: Kysely<unknown>,
  owner: RunOwner,
  options: OwnerHeartbeatOptions,
): Promise<{ stop(): Promise<void> }> {
  await sql`
    INSERT INTO store_owners (token, host, pid, heartbeat_at) VALUES (${owner.token}, ${owner.host}, ${owner.pid}, ${DB_NOW})
    ON CONFLICT (token) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at`.execute(db);
  const timer = setInterval(() => {
    sql`UPDATE store_owners SET heartbeat_at = ${DB_NOW} WHERE token = ${owner.token}`
      .execute(db)
      .catch(() => {});
  }, options.heartbeatMs ?? 10_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await sql`DELETE FROM store_owners WHERE token = ${owner.token}`.execute(db);
    },
  };
}

/**
 * Deletes the rows of stores that are gone (heartbeat older than `staleMs`, or on this host with a dead pid),
 * so that the table holds only live stores. Their runs were recovered first.
 */
export async function pruneOwners(db: Kysely<unknown>, staleMs: number): Promise<void> {
  await sql`DELETE FROM store_owners WHERE heartbeat_at < ${DB_NOW} - ${staleMs}`.execute(db);
  const here = hostname();
  const { rows } = await sql<{ token: string; pid: number }>`
    SELECT token, pid FROM store_owners WHERE host = ${here}`.execute(db);
  const dead = rows.filter((row) => !isRunOwnerAlive({ host: here, pid: row.pid, token: row.token }));
  if (dead.length > 0) {
    await sql`DELETE FROM store_owners WHERE token = ANY(${dead.map((row) => row.token)}::text[])`.execute(
      db,
    );
  }
}

/** `KyselyRuns` whose recovery asks `store_owners` (any host) before probing a pid (this host). */
export class PostgresRuns extends KyselyRuns {
  readonly #db: Kysely<ControlPlaneDatabase>;
  readonly #staleMs: number;

  constructor(db: Kysely<ControlPlaneDatabase>, owner: RunOwner, staleMs = DEFAULT_STALE_MS) {
    super(db, owner);
    this.#db = db;
    this.#staleMs = staleMs;
  }

  override async recoverInterrupted(now: number = Date.now()): Promise<RunRecord[]> {
    const { rows } = await sql<{
      run_id: string;
      owner_host: string;
      owner_pid: number;
      owner_token: string;
      owner_start_time: number | null;
      owner_boot_id: string | null;
      heartbeat_at: number | null;
      db_now: number;
    }>`
      SELECT r.run_id, r.owner_host, r.owner_pid, r.owner_token, r.owner_start_time, r.owner_boot_id,
        o.heartbeat_at, ${DB_NOW} AS db_now
      FROM runs r LEFT JOIN store_owners o ON o.token = r.owner_token
      WHERE r.status = 'running'`.execute(this.#db);
    const here = hostname();
    const recovered: RunRecord[] = [];
    for (const row of rows) {
      const owner = runOwnerOf(row);
      const gone =
        row.heartbeat_at === null ||
        Number(row.db_now) - Number(row.heartbeat_at) > this.#staleMs ||
        (row.owner_host === here && !isRunOwnerAlive(owner));
      if (!gone) continue;
      const where =
        row.owner_host === here ? `pid ${row.owner_pid} on ${row.owner_host}` : `on host ${row.owner_host}`;
      const result = await this.#db
        .updateTable("runs")
        .set({
          status: "interrupted",
          ended_at: now,
          error_reason: "interrupted",
          error_message: `the process that ran it (${where}) ended before the run finished`,
          updated_at: now,
        })
        .where("run_id", "=", row.run_id)
        .where("status", "=", "running")
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) {
        const run = await this.get(row.run_id);
        if (run !== undefined) recovered.push(run);
      }
    }
    return recovered;
  }
}
