// Migration 5: a small generic key-value table for chat channels (control plane): pairing codes and approved
// senders, inbound dedupe marks, poll offsets. One row per (channel, account, key) holding a JSON value, a
// version for compare-and-set, and an optional expiry. Agent databases are unchanged.
import type { Migration } from "./types.ts";

export const migration0005: Migration = {
  version: 5,
  name: "channel-state",
  controlPlane: (db) => [
    db.schema
      .createTable("channel_state")
      .addColumn("channel", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("key", "text", (c) => c.notNull())
      .addColumn("value", "text", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("expires_at", "bigint")
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("channel_state_pk", ["channel", "account_id", "key"])
      .compile(),
    db.schema.createIndex("channel_state_by_expiry").on("channel_state").column("expires_at").compile(),
  ],
  agent: () => [],
};
