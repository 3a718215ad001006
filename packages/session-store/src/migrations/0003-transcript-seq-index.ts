// Migration 3: an index on (session_id, seq) so a branch is read by scanning one session's entries backwards
// from the leaf (transcript.ts), instead of one recursive index lookup per entry.
import type { Migration } from "./types.ts";

export const migration0003: Migration = {
  version: 3,
  name: "transcript-seq-index",
  controlPlane: () => [],
  agent: (db) => [
    db.schema
      .createIndex("transcript_entries_by_seq")
      .on("transcript_entries")
      .columns(["session_id", "seq"])
      .compile(),
  ],
};
