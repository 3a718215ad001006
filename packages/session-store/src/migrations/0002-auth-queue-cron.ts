// Migration 2: auth-profile usage state, queue items and cron job state (control plane), and the thinking
// level a run actually used; on PostgreSQL also session leases and store heartbeats. Agent databases are
// unchanged.
import type { Migration } from "./types.ts";

export const migration0002: Migration = {
  version: 2,
  name: "auth-queue-cron",
  controlPlane: (db, dialect) => [
    db.schema.alterTable("runs").addColumn("thinking_level", "text").compile(),
    db.schema
      .createTable("auth_profile_state")
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("profile_id", "text", (c) => c.notNull())
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("last_used", "bigint")
      .addColumn("last_failure_at", "bigint")
      .addColumn("error_count", "integer", (c) => c.notNull())
      .addColumn("failure_counts", "text", (c) => c.notNull())
      .addColumn("cooldown_until", "bigint")
      .addColumn("cooldown_reason", "text")
      .addColumn("cooldown_model", "text")
      .addColumn("disabled_until", "bigint")
      .addColumn("disabled_reason", "text")
      .addColumn("blocked_until", "bigint")
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("auth_profile_state_pk", ["agent_id", "profile_id"])
      .compile(),
    db.schema
      .createTable("queue_items")
      .addColumn("item_id", "text", (c) => c.primaryKey())
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("session_key", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("enqueued_at", "bigint", (c) => c.notNull())
      .addColumn("available_at", "bigint", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("claimed_by", "text")
      .addColumn("lease_until", "bigint")
      .addColumn("last_error", "text")
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .compile(),
    db.schema
      .createIndex("queue_items_pending")
      .on("queue_items")
      .columns(["agent_id", "session_key", "status", "available_at"])
      .compile(),
    db.schema
      .createTable("cron_state")
      .addColumn("job_id", "text", (c) => c.primaryKey())
      .addColumn("agent_id", "text")
      .addColumn("version", "integer", (c) => c.notNull())
      .addColumn("next_run_at", "bigint")
      .addColumn("last_run_at", "bigint")
      .addColumn("last_status", "text")
      .addColumn("last_error", "text")
      .addColumn("last_run_id", "text")
      .addColumn("last_duration_ms", "bigint")
      .addColumn("running_since", "bigint")
      .addColumn("consecutive_errors", "integer", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .compile(),
    // PostgreSQL only (several processes, maybe on several hosts, share one database): a lease per session
    // key with a fencing token that grows by one at every acquisition (src/postgres/leases.ts; SQLite lanes
    // are in-process), and a heartbeat per open store, so that a run whose store stopped beating is recovered
    // from any host (src/postgres/owners.ts; SQLite probes the owner's pid).
    ...(dialect === "postgres"
      ? [
          db.schema
            .createTable("session_leases")
            .addColumn("session_key", "text", (c) => c.primaryKey())
            .addColumn("owner", "text")
            .addColumn("token", "bigint", (c) => c.notNull())
            .addColumn("expires_at", "bigint", (c) => c.notNull())
            .addColumn("updated_at", "bigint", (c) => c.notNull())
            .compile(),
          db.schema
            .createTable("store_owners")
            .addColumn("token", "text", (c) => c.primaryKey())
            .addColumn("host", "text", (c) => c.notNull())
            .addColumn("pid", "integer", (c) => c.notNull())
            .addColumn("heartbeat_at", "bigint", (c) => c.notNull())
            .compile(),
        ]
      : []),
  ],
  agent: () => [],
};
