// Makes fixtures/schema-v1/{kernel,agent}.sql: the databases migration 0001 creates, holding
// FIRST_SCHEMA_SAMPLE, dumped as SQL text. Run once when migration 0001 was released; the dumps are then
// frozen (never regenerate them after a schema change: they stand for old files in the wild).
//   cd packages/session-store && node --conditions=@agent-kernel/source scripts/freeze-schema-v1.ts
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { migrateSqlite } from "../src/migrator.ts";
import { openSqliteFile } from "../src/sqlite/connection.ts";
import { FIRST_SCHEMA_SAMPLE as sample } from "../src/testing/conformance.ts";
import { SCHEMA_V1_DIR } from "../src/testing/sqlite-fixture.ts";

const dir = mkdtempSync(join(tmpdir(), "schema-v1-"));
const kernel = openSqliteFile(join(dir, "kernel.sqlite"));
migrateSqlite(kernel, "kernel.sqlite", "controlPlane", { targetVersion: 1 });
kernel
  .prepare("INSERT INTO sessions VALUES (?, ?, ?, 3, 1700000000000, 1700000000500, ?)")
  .run(sample.agentId, sample.sessionKey, sample.sessionId, JSON.stringify(sample.meta));
kernel
  .prepare(
    `INSERT INTO runs (run_id, agent_id, session_key, session_id, entry_point, status, started_at, ended_at, provider,
       model, fallback_chain, owner_host, owner_pid, owner_token, updated_at)
     VALUES (?, ?, ?, ?, 'agent', 'succeeded', 1700000000000, 1700000000900, 'anthropic', 'claude-x', '[]', 'old-host', 1, 't', 1700000000900)`,
  )
  .run(sample.runId, sample.agentId, sample.sessionKey, sample.sessionId);
for (const event of sample.runEvents) {
  kernel
    .prepare("INSERT INTO run_events VALUES (?, ?, ?, ?, ?)")
    .run(sample.runId, event.seq, event.ts, event.stream, JSON.stringify(event.data));
}

const agent = openSqliteFile(join(dir, "agent.sqlite"));
migrateSqlite(agent, "agent.sqlite", "agent", { targetVersion: 1 });
const header = {
  type: "session",
  version: 3,
  id: sample.sessionId,
  timestamp: "2025-11-14T22:13:20.000Z",
  cwd: "/work",
};
agent
  .prepare(
    "INSERT INTO transcripts VALUES (?, ?, ?, ?, '2025-11-14T22:13:20.000Z', '2025-11-14T22:13:20.000Z')",
  )
  .run(sample.sessionId, sample.agentId, JSON.stringify(header), sample.leafId);
const parents: Record<string, string | null> = { e1: null, e2: "e1", e3: "e1" };
for (const id of sample.entryIds) {
  const entry = {
    type: "message",
    id,
    parentId: parents[id] ?? null,
    timestamp: "2025-11-14T22:13:21.000Z",
    message: { role: "user", content: [{ type: "text", text: `v1 ${id}` }], timestamp: 1700000001000 },
  };
  agent
    .prepare(
      "INSERT INTO transcript_entries (session_id, id, parent_id, type, timestamp, body) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .run(sample.sessionId, id, entry.parentId, entry.type, entry.timestamp, JSON.stringify(entry));
}

writeFileSync(join(SCHEMA_V1_DIR, "kernel.sql"), dump(kernel));
writeFileSync(join(SCHEMA_V1_DIR, "agent.sql"), dump(agent));
kernel.close();
agent.close();
rmSync(dir, { recursive: true, force: true });

/** Schema then rows, as SQL text that `Database.exec` replays into an empty file. */
function dump(db: Database.Database): string {
  const objects = db
    .prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, rowid",
    )
    .all() as { type: string; name: string; sql: string }[];
  const lines = [
    "-- Frozen copy of schema version 1 (migration 0001) with sample data. Do not edit.",
    "BEGIN;",
  ];
  for (const object of objects) lines.push(`${object.sql};`);
  for (const object of objects.filter((o) => o.type === "table")) {
    for (const row of db.prepare(`SELECT * FROM "${object.name}"`).raw().all() as unknown[][]) {
      lines.push(`INSERT INTO "${object.name}" VALUES (${row.map(literal).join(", ")});`);
    }
  }
  lines.push("COMMIT;", "");
  return lines.join("\n");
}

function literal(value: unknown): string {
  if (value === null) return "NULL";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return `'${String(value).replaceAll("'", "''")}'`;
}
