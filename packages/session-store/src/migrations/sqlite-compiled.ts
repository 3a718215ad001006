// The SQLite statements of every migration, compiled ahead of time. Owns: the SQL the store runs to create or
// upgrade a SQLite file, so opening a store never loads Kysely (about 250 modules, a fifth of a second of a
// cold `agent -m`). Does not own: what the migrations are (the NNNN-*.ts files, built with Kysely's schema
// builder, remain the source of truth; PostgreSQL compiles them itself). sqlite-compiled.test.ts fails when
// this file and the migrations disagree; `UPDATE_SQLITE_MIGRATIONS=1` on that test rewrites this file.

/** One migration's SQLite statements, without parameters (the migrations bind none). */
export interface CompiledSqliteMigration {
  readonly version: number;
  readonly name: string;
  readonly controlPlane: readonly string[];
  readonly agent: readonly string[];
}

export const SQLITE_MIGRATIONS: readonly CompiledSqliteMigration[] = [
  // @generated-start
  {
    version: 1,
    name: "sessions-transcripts-runs",
    controlPlane: [
      'create table "sessions" ("agent_id" text not null, "session_key" text not null, "session_id" text not null, "version" integer not null, "created_at" bigint not null, "updated_at" bigint not null, "meta" text not null, constraint "sessions_pk" primary key ("agent_id", "session_key"), constraint "sessions_session_id_unique" unique ("agent_id", "session_id"))',
      'create table "runs" ("run_id" text primary key, "agent_id" text not null, "session_key" text not null, "session_id" text not null, "entry_point" text not null, "status" text not null, "started_at" bigint not null, "ended_at" bigint, "provider" text, "model" text, "fallback_chain" text not null, "auth_profile_id" text, "usage" text, "cost_usd" double precision, "error_reason" text, "error_message" text, "owner_host" text not null, "owner_pid" integer not null, "owner_token" text not null, "updated_at" bigint not null)',
      'create index "runs_by_session" on "runs" ("agent_id", "session_key", "started_at")',
      'create index "runs_by_status" on "runs" ("status")',
      'create table "run_events" ("run_id" text not null references "runs" ("run_id") on delete cascade, "seq" integer not null, "ts" bigint not null, "stream" text not null, "data" text not null, constraint "run_events_pk" primary key ("run_id", "seq"))',
    ],
    agent: [
      'create table "transcripts" ("session_id" text primary key, "agent_id" text not null, "header" text not null, "leaf_id" text, "created_at" text not null, "updated_at" text not null)',
      'create table "transcript_entries" ("seq" integer primary key, "session_id" text not null references "transcripts" ("session_id") on delete cascade, "id" text not null, "parent_id" text, "type" text not null, "timestamp" text not null, "body" text not null, constraint "transcript_entries_id_unique" unique ("session_id", "id"))',
      'create index "transcript_entries_by_parent" on "transcript_entries" ("session_id", "parent_id")',
    ],
  },
  {
    version: 2,
    name: "auth-queue-cron",
    controlPlane: [
      'alter table "runs" add column "thinking_level" text',
      'create table "auth_profile_state" ("agent_id" text not null, "profile_id" text not null, "version" integer not null, "last_used" bigint, "last_failure_at" bigint, "error_count" integer not null, "failure_counts" text not null, "cooldown_until" bigint, "cooldown_reason" text, "cooldown_model" text, "disabled_until" bigint, "disabled_reason" text, "blocked_until" bigint, "updated_at" bigint not null, constraint "auth_profile_state_pk" primary key ("agent_id", "profile_id"))',
      'create table "queue_items" ("item_id" text primary key, "agent_id" text not null, "session_key" text not null, "kind" text not null, "payload" text not null, "status" text not null, "enqueued_at" bigint not null, "available_at" bigint not null, "attempts" integer not null, "claimed_by" text, "lease_until" bigint, "last_error" text, "updated_at" bigint not null)',
      'create index "queue_items_pending" on "queue_items" ("agent_id", "session_key", "status", "available_at")',
      'create table "cron_state" ("job_id" text primary key, "agent_id" text, "version" integer not null, "next_run_at" bigint, "last_run_at" bigint, "last_status" text, "last_error" text, "last_run_id" text, "last_duration_ms" bigint, "running_since" bigint, "consecutive_errors" integer not null, "updated_at" bigint not null)',
    ],
    agent: [],
  },
  {
    version: 3,
    name: "transcript-seq-index",
    controlPlane: [],
    agent: ['create index "transcript_entries_by_seq" on "transcript_entries" ("session_id", "seq")'],
  },
  {
    version: 4,
    name: "transcript-derived-leaf",
    controlPlane: [],
    agent: [
      'drop index "transcript_entries_by_parent"',
      'drop index "transcript_entries_by_seq"',
      'alter table "transcripts" add column "leaf_seq" bigint',
      "UPDATE transcripts SET leaf_seq = (SELECT MAX(seq) FROM transcript_entries)",
      'create table "transcript_store_identity" ("id" text not null)',
      "INSERT INTO transcript_store_identity (id) VALUES (lower(hex(randomblob(16))))",
    ],
  },
  {
    version: 5,
    name: "channel-state",
    controlPlane: [
      'create table "channel_state" ("channel" text not null, "account_id" text not null, "key" text not null, "value" text not null, "version" integer not null, "expires_at" bigint, "updated_at" bigint not null, constraint "channel_state_pk" primary key ("channel", "account_id", "key"))',
      'create index "channel_state_by_expiry" on "channel_state" ("expires_at")',
    ],
    agent: [],
  },
  {
    version: 6,
    name: "run-owner-start-time",
    controlPlane: [
      'alter table "runs" add column "owner_start_time" bigint',
      'alter table "runs" add column "owner_boot_id" text',
    ],
    agent: [],
  },
  {
    version: 7,
    name: "sqlite-session-leases",
    controlPlane: [
      'create table "session_leases" ("session_key" text primary key, "owner" text, "token" bigint not null, "expires_at" bigint not null, "owner_host" text, "owner_pid" integer, "owner_start_time" bigint, "owner_boot_id" text, "updated_at" bigint not null)',
    ],
    agent: [],
  },
  // @generated-end
];

/** The schema version this code writes: the newest migration's version. */
export const SQLITE_LATEST_SCHEMA_VERSION: number = SQLITE_MIGRATIONS.reduce(
  (max, m) => Math.max(max, m.version),
  0,
);
