// Migration 4: appends touch one table and one index. The leaf is no longer written by every append: it is
// the last appended entry unless `setLeaf` moved it later (`leaf_id` with `leaf_seq`, the highest entry seq
// when it was moved). The (session_id, parent_id) and (session_id, seq) indexes go: a session's shape is
// read once through the (session_id, id) index and then kept by the read cache (transcript-cache.ts). A
// random identity per database names it in that process-wide cache.
import { sql } from "kysely";
import type { Migration } from "./types.ts";

export const migration0004: Migration = {
  version: 4,
  name: "transcript-derived-leaf",
  controlPlane: () => [],
  agent: (db, dialect) => [
    db.schema.dropIndex("transcript_entries_by_parent").compile(),
    db.schema.dropIndex("transcript_entries_by_seq").compile(),
    db.schema.alterTable("transcripts").addColumn("leaf_seq", "bigint").compile(),
    // Every stored leaf pointer stays authoritative until the next append to its session.
    sql`UPDATE transcripts SET leaf_seq = (SELECT MAX(seq) FROM transcript_entries)`.compile(db),
    db.schema
      .createTable("transcript_store_identity")
      .addColumn("id", "text", (c) => c.notNull())
      .compile(),
    dialect === "sqlite"
      ? sql`INSERT INTO transcript_store_identity (id) VALUES (lower(hex(randomblob(16))))`.compile(db)
      : sql`INSERT INTO transcript_store_identity (id) VALUES (gen_random_uuid()::text)`.compile(db),
  ],
};
