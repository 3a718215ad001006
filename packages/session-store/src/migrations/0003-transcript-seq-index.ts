// Migration 3: an index on (session_id, seq) so a branch is read by scanning one session's entries backwards
// from the leaf (transcript.ts), instead of one recursive index lookup per entry.
import type { Migration } from "./types.ts";

export const migration0003: Migration = {
  version: 3,
  name: "transcript-seq-index",
  controlPlane: () => [],
  agent: (db, dialect) => [
    db.schema
      .createIndex("transcript_entries_by_seq")
      .on("transcript_entries")
      // PostgreSQL keys transcripts by (agent_id, session_id) (migration 1).
      .columns(dialect === "postgres" ? ["agent_id", "session_id", "seq"] : ["session_id", "seq"])
      .compile(),
  ],
};
