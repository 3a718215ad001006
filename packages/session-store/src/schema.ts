// The control-plane tables as Kysely sees them (after every migration). Owns: column names and their stored
// types. Does not own: the typed records the API returns (sessions.ts, runs.ts, ...) or the DDL (migrations/).

export interface SessionsTable {
  agent_id: string;
  session_key: string;
  session_id: string;
  version: number;
  created_at: number;
  updated_at: number;
  /** JSON of `SessionMeta`. */
  meta: string;
}

export interface RunsTable {
  run_id: string;
  agent_id: string;
  session_key: string;
  session_id: string;
  entry_point: string;
  status: string;
  started_at: number;
  ended_at: number | null;
  provider: string | null;
  model: string | null;
  thinking_level: string | null;
  /** JSON array of `FallbackAttempt`. */
  fallback_chain: string;
  auth_profile_id: string | null;
  /** JSON of `RunUsage`. */
  usage: string | null;
  cost_usd: number | null;
  error_reason: string | null;
  error_message: string | null;
  owner_host: string;
  owner_pid: number;
  owner_token: string;
  /** The owner process's start, clock ticks since boot (Linux); null off Linux and before migration 6. */
  owner_start_time: number | null;
  /** The boot the owner process started in (Linux); null off Linux and before migration 6. */
  owner_boot_id: string | null;
  updated_at: number;
}

export interface RunEventsTable {
  run_id: string;
  seq: number;
  ts: number;
  stream: string;
  /** JSON. */
  data: string;
}

export interface AuthProfileStateTable {
  agent_id: string;
  profile_id: string;
  version: number;
  last_used: number | null;
  last_failure_at: number | null;
  error_count: number;
  /** JSON object reason → count. */
  failure_counts: string;
  cooldown_until: number | null;
  cooldown_reason: string | null;
  cooldown_model: string | null;
  disabled_until: number | null;
  disabled_reason: string | null;
  blocked_until: number | null;
  updated_at: number;
}

export interface QueueItemsTable {
  item_id: string;
  agent_id: string;
  session_key: string;
  kind: string;
  /** JSON. */
  payload: string;
  status: string;
  enqueued_at: number;
  available_at: number;
  attempts: number;
  claimed_by: string | null;
  lease_until: number | null;
  last_error: string | null;
  updated_at: number;
}

export interface CronStateTable {
  job_id: string;
  agent_id: string | null;
  version: number;
  next_run_at: number | null;
  last_run_at: number | null;
  last_status: string | null;
  last_error: string | null;
  last_run_id: string | null;
  last_duration_ms: number | null;
  running_since: number | null;
  consecutive_errors: number;
  updated_at: number;
}

export interface ChannelStateTable {
  channel: string;
  account_id: string;
  key: string;
  /** JSON text. */
  value: string;
  version: number;
  expires_at: number | null;
  updated_at: number;
}

export interface ControlPlaneDatabase {
  sessions: SessionsTable;
  runs: RunsTable;
  run_events: RunEventsTable;
  auth_profile_state: AuthProfileStateTable;
  queue_items: QueueItemsTable;
  cron_state: CronStateTable;
  channel_state: ChannelStateTable;
}
