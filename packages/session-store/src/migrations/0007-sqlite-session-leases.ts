// Migration 7: session leases on SQLite (control plane), the cross-process lane PostgreSQL has had since
// migration 2: one row per session key with its holder, a fencing token that grows by one at every
// acquisition, and an expiry (this machine's clock, epoch ms). SQLite also records the holder's process (host,
// pid, start time, boot id), so a lease whose process died is taken over at once instead of after its TTL.
// PostgreSQL and agent databases are unchanged.
import type { Migration } from "./types.ts";

export const migration0007: Migration = {
  version: 7,
  name: "sqlite-session-leases",
  controlPlane: (db, dialect) =>
    dialect === "sqlite"
      ? [
          db.schema
            .createTable("session_leases")
            .addColumn("session_key", "text", (c) => c.primaryKey())
            .addColumn("owner", "text")
            .addColumn("token", "bigint", (c) => c.notNull())
            .addColumn("expires_at", "bigint", (c) => c.notNull())
            .addColumn("owner_host", "text")
            .addColumn("owner_pid", "integer")
            .addColumn("owner_start_time", "bigint")
            .addColumn("owner_boot_id", "text")
            .addColumn("updated_at", "bigint", (c) => c.notNull())
            .compile(),
        ]
      : [],
  agent: () => [],
};
