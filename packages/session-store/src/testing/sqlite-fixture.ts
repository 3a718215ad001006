// The SQLite backend's conformance fixture: a fresh temporary state dir per call, the frozen first-schema
// copy (fixtures/schema-v1/*.sql, made by scripts/freeze-schema-v1.ts) and a "written by a newer release"
// marker. Owns: set-up only. Does not own: the checks (conformance.ts).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { agentDatabasePath, controlPlanePath } from "../state-dir.ts";
import { type OpenSessionStoreOptions, openSessionStore } from "../store.ts";
import type { SeededRun, SessionStoreFactory, StoreFixture } from "./conformance.ts";
import { FIRST_SCHEMA_SAMPLE } from "./conformance.ts";

export const SCHEMA_V1_DIR = join(import.meta.dirname, "..", "..", "fixtures", "schema-v1");

export function sqliteStoreFactory(
  options: Omit<OpenSessionStoreOptions, "stateDir"> = {},
): SessionStoreFactory {
  return async (): Promise<StoreFixture> => {
    const stateDir = mkdtempSync(join(tmpdir(), "agent-kernel-store-"));
    return {
      open: () => openSessionStore({ ...options, stateDir }),
      dispose: async () => rmSync(stateDir, { recursive: true, force: true }),
      seedFirstSchema: async () => seedFirstSchema(stateDir),
      seedRunningRun: async (run) => seedRunningRun(stateDir, run),
      seedFutureVersion: async (version) => {
        const db = new Database(controlPlanePath(stateDir));
        try {
          db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
            version,
            "from-a-newer-release",
            Date.now(),
          );
        } finally {
          db.close();
        }
      },
    };
  };
}

/** Writes a `running` run owned by `run.owner` into the state dir's (migrated) control-plane database. */
export function seedRunningRun(stateDir: string, run: SeededRun): void {
  const db = new Database(controlPlanePath(stateDir));
  try {
    db.prepare(
      `INSERT INTO runs (run_id, agent_id, session_key, session_id, entry_point, status, started_at, fallback_chain,
         owner_host, owner_pid, owner_token, owner_start_time, owner_boot_id, updated_at)
       VALUES (?, ?, ?, ?, 'agent', 'running', 100, '[]', ?, ?, ?, ?, ?, 100)`,
    ).run(
      run.runId,
      run.agentId,
      run.sessionKey,
      run.sessionId,
      run.owner.host,
      run.owner.pid,
      run.owner.token,
      run.owner.startTime ?? null,
      run.owner.bootId ?? null,
    );
  } finally {
    db.close();
  }
}

/** Writes the frozen first-schema databases (with `FIRST_SCHEMA_SAMPLE`) into an empty state dir. */
export function seedFirstSchema(stateDir: string): void {
  const files = [
    { sql: "kernel.sql", path: controlPlanePath(stateDir) },
    { sql: "agent.sql", path: agentDatabasePath(stateDir, FIRST_SCHEMA_SAMPLE.agentId) },
  ];
  for (const file of files) {
    mkdirSync(dirname(file.path), { recursive: true });
    const db = new Database(file.path);
    try {
      db.exec(readFileSync(join(SCHEMA_V1_DIR, file.sql), "utf8"));
    } finally {
      db.close();
    }
  }
}
