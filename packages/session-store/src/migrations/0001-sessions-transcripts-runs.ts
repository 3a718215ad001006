// Migration 1: sessions, runs and run events (control plane), transcripts and their entries (agent database).
// Frozen: fixtures/schema-v1 is a copy of what this migration creates, used to test upgrades.
import type { Migration } from "./types.ts";

export const migration0001: Migration = {
  version: 1,
  name: "sessions-transcripts-runs",
  controlPlane: (db, dialect) => [
    db.schema
      .createTable("sessions")
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("session_key", "text", (c) => c.notNull())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("meta", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("sessions_pk", ["agent_id", "session_key"])
      .addUniqueConstraint("sessions_session_id_unique", ["agent_id", "session_id"])
      .compile(),
    db.schema
      .createTable("runs")
      .addColumn("run_id", "text", (c) => c.primaryKey())
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("session_key", "text", (c) => c.notNull())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("entry_point", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("started_at", "bigint", (c) => c.notNull())
      .addColumn("ended_at", "bigint")
      .addColumn("provider", "text")
      .addColumn("model", "text")
      .addColumn("fallback_chain", "text", (c) => c.notNull())
      .addColumn("auth_profile_id", "text")
      .addColumn("usage", "text")
      .addColumn("cost_usd", "double precision")
      .addColumn("error_reason", "text")
      .addColumn("error_message", "text")
      .addColumn("owner_host", "text", (c) => c.notNull())
      .addColumn("owner_pid", "integer", (c) => c.notNull())
      .addColumn("owner_token", "text", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .compile(),
    db.schema
      .createIndex("runs_by_session")
      .on("runs")
      .columns(["agent_id", "session_key", "started_at"])
      .compile(),
    db.schema.createIndex("runs_by_status").on("runs").column("status").compile(),
    db.schema
      .createTable("run_events")
      .addColumn("run_id", "text", (c) => c.notNull().references("runs.run_id").onDelete("cascade"))
      // PostgreSQL: bigint, so that reading "after seq N" with any JS safe integer N stays in range.
      .addColumn("seq", dialect === "postgres" ? "bigint" : "integer", (c) => c.notNull())
      .addColumn("ts", "bigint", (c) => c.notNull())
      .addColumn("stream", "text", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("run_events_pk", ["run_id", "seq"])
      .compile(),
  ],
  agent: (db, dialect) =>
    dialect === "postgres"
      ? postgresTranscriptTables(db)
      : [
          db.schema
            .createTable("transcripts")
            .addColumn("session_id", "text", (c) => c.primaryKey())
            .addColumn("agent_id", "text", (c) => c.notNull())
            .addColumn("header", "text", (c) => c.notNull())
            .addColumn("leaf_id", "text")
            .addColumn("created_at", "text", (c) => c.notNull())
            .addColumn("updated_at", "text", (c) => c.notNull())
            .compile(),
          db.schema
            .createTable("transcript_entries")
            // SQLite: an INTEGER PRIMARY KEY is the rowid, so append order costs nothing extra.
            .addColumn("seq", dialect === "sqlite" ? "integer" : "bigserial", (c) => c.primaryKey())
            .addColumn("session_id", "text", (c) =>
              c.notNull().references("transcripts.session_id").onDelete("cascade"),
            )
            .addColumn("id", "text", (c) => c.notNull())
            .addColumn("parent_id", "text")
            .addColumn("type", "text", (c) => c.notNull())
            .addColumn("timestamp", "text", (c) => c.notNull())
            .addColumn("body", "text", (c) => c.notNull())
            .addUniqueConstraint("transcript_entries_id_unique", ["session_id", "id"])
            .compile(),
          db.schema
            .createIndex("transcript_entries_by_parent")
            .on("transcript_entries")
            .columns(["session_id", "parent_id"])
            .compile(),
        ],
};

/**
 * PostgreSQL holds every agent's transcripts in one database, so a transcript is keyed by (agent_id,
 * session_id), and each entry carries its 0-based `position` in its session: positions are contiguous per
 * session, and their uniqueness makes a second writer that appends from a stale view fail instead of
 * interleaving (the write-through buffer in src/postgres/transcript.ts writes whole batches by position).
 */
function postgresTranscriptTables(db: Parameters<Migration["agent"]>[0]) {
  return [
    db.schema
      .createTable("transcripts")
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("header", "text", (c) => c.notNull())
      .addColumn("leaf_id", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("transcripts_pk", ["agent_id", "session_id"])
      .compile(),
    db.schema
      .createTable("transcript_entries")
      .addColumn("seq", "bigserial", (c) => c.primaryKey())
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("position", "integer", (c) => c.notNull())
      .addColumn("id", "text", (c) => c.notNull())
      .addColumn("parent_id", "text")
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("timestamp", "text", (c) => c.notNull())
      .addColumn("body", "text", (c) => c.notNull())
      .addUniqueConstraint("transcript_entries_id_unique", ["agent_id", "session_id", "id"])
      .addUniqueConstraint("transcript_entries_position_unique", ["agent_id", "session_id", "position"])
      .addForeignKeyConstraint(
        "transcript_entries_transcript_fk",
        ["agent_id", "session_id"],
        "transcripts",
        ["agent_id", "session_id"],
        (fk) => fk.onDelete("cascade"),
      )
      .compile(),
    db.schema
      .createIndex("transcript_entries_by_parent")
      .on("transcript_entries")
      .columns(["agent_id", "session_id", "parent_id"])
      .compile(),
  ];
}
