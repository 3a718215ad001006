// The PostgreSQL backend's conformance fixture: a fresh schema per fixture in one test database (fast: no
// CREATE DATABASE per test), the first schema with `FIRST_SCHEMA_SAMPLE` built by migrating to version 1 and
// inserting the sample, and a "written by a newer release" marker. Owns: set-up only. Does not own: the
// checks (../../testing/conformance.ts) or the server (pg-server.ts).
import {
  FIRST_SCHEMA_SAMPLE,
  messageEntry,
  type SeededRun,
  type SessionStoreFactory,
  type StoreFixture,
} from "../../testing/conformance.ts";
import {
  migratePostgresSessionStore,
  openPostgresSessionStore,
  type PostgresSessionStore,
} from "../store.ts";
import { runSql } from "./pg-server.ts";

let fixtureCounter = 0;

/** Fixtures in the database at `connectionString`, one schema each. */
export function postgresStoreFactory(connectionString: string): SessionStoreFactory {
  return async (): Promise<StoreFixture> => {
    const schema = `fixture_${process.pid}_${fixtureCounter++}_${Math.random().toString(36).slice(2, 8)}`;
    return {
      open: (): Promise<PostgresSessionStore> =>
        openPostgresSessionStore({ connectionString, schema, maxConnections: 4 }),
      dispose: async () => {
        await runSql(connectionString, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      },
      seedFirstSchema: async () => seedFirstSchema(connectionString, schema),
      seedRunningRun: async (run) => seedRunningRun(connectionString, schema, run),
      seedFutureVersion: async (version) => {
        await runSql(
          connectionString,
          `INSERT INTO "${schema}".schema_migrations (version, name, applied_at) VALUES ($1, 'from-a-newer-release', $2)`,
          [version, Date.now()],
        );
      },
    };
  };
}

/** Writes a `running` run owned by `run.owner`, and a fresh heartbeat for its store, into a migrated schema. */
export async function seedRunningRun(
  connectionString: string,
  schema: string,
  run: SeededRun,
): Promise<void> {
  const at = `"${schema}"`;
  const { owner } = run;
  await runSql(
    connectionString,
    `INSERT INTO ${at}.runs (run_id, agent_id, session_key, session_id, entry_point, status, started_at, fallback_chain, owner_host, owner_pid, owner_token, owner_start_time, owner_boot_id, updated_at)
     VALUES ($1, $2, $3, $4, 'agent', 'running', 100, '[]', $5, $6, $7, $8, $9, 100)`,
    [
      run.runId,
      run.agentId,
      run.sessionKey,
      run.sessionId,
      owner.host,
      owner.pid,
      owner.token,
      owner.startTime ?? null,
      owner.bootId ?? null,
    ],
  );
  await runSql(
    connectionString,
    `INSERT INTO ${at}.store_owners (token, host, pid, heartbeat_at)
     VALUES ($1, $2, $3, (extract(epoch from clock_timestamp()) * 1000)::bigint) ON CONFLICT (token) DO NOTHING`,
    [owner.token, owner.host, owner.pid],
  );
}

/** Migrates an empty schema to version 1 and writes `FIRST_SCHEMA_SAMPLE` into it, as that release would have. */
export async function seedFirstSchema(connectionString: string, schema: string): Promise<void> {
  await migratePostgresSessionStore({ connectionString, schema, targetVersion: 1, maxConnections: 1 });
  const sample = FIRST_SCHEMA_SAMPLE;
  const at = `"${schema}"`;
  await runSql(
    connectionString,
    `INSERT INTO ${at}.sessions (agent_id, session_key, session_id, version, created_at, updated_at, meta) VALUES ($1, $2, $3, 1, 1000, 1000, $4)`,
    [sample.agentId, sample.sessionKey, sample.sessionId, JSON.stringify(sample.meta)],
  );
  await runSql(
    connectionString,
    `INSERT INTO ${at}.runs (run_id, agent_id, session_key, session_id, entry_point, status, started_at, ended_at, provider, model, fallback_chain, owner_host, owner_pid, owner_token, updated_at)
     VALUES ($1, $2, $3, $4, 'agent', 'succeeded', 100, 200, 'anthropic', 'claude-x', '[]', 'old-host', 1, 'old-token', 200)`,
    [sample.runId, sample.agentId, sample.sessionKey, sample.sessionId],
  );
  for (const event of sample.runEvents) {
    await runSql(
      connectionString,
      `INSERT INTO ${at}.run_events (run_id, seq, ts, stream, data) VALUES ($1, $2, $3, $4, $5)`,
      [sample.runId, event.seq, event.ts, event.stream, JSON.stringify(event.data)],
    );
  }
  const header = {
    type: "session",
    version: 3,
    id: sample.sessionId,
    timestamp: "2026-01-01T00:00:00.000Z",
    cwd: "/work",
  };
  await runSql(
    connectionString,
    `INSERT INTO ${at}.transcripts (agent_id, session_id, header, leaf_id, created_at, updated_at) VALUES ($1, $2, $3, $4, 't', 't')`,
    [sample.agentId, sample.sessionId, JSON.stringify(header), sample.leafId],
  );
  const parents: Record<string, string | null> = { e1: null, e2: "e1", e3: "e1" };
  for (const [position, id] of sample.entryIds.entries()) {
    const entry = messageEntry(id, parents[id] ?? null);
    await runSql(
      connectionString,
      `INSERT INTO ${at}.transcript_entries (agent_id, session_id, position, id, parent_id, type, timestamp, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        sample.agentId,
        sample.sessionId,
        position,
        id,
        entry.parentId,
        entry.type,
        entry.timestamp,
        JSON.stringify(entry),
      ],
    );
  }
}
