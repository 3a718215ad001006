// @agent-kernel/session-store/postgres: the PostgreSQL backend (Kysely over `pg`). A separate entry so that a
// SQLite-only user never loads `pg`: nothing outside src/postgres imports it. pg-boss is loaded only by
// `startQueueDispatcher`.
export type { PostgresConnectionOptions } from "./connection.ts";
export {
  type CronTickHandler,
  type QueueDispatcher,
  type QueueDispatcherOptions,
  type QueueItemHandler,
  startQueueDispatcher,
} from "./dispatch.ts";
export {
  type AcquireOptions,
  type LeaseHold,
  LeaseLostError,
  type SessionLease,
  type SessionLeasesApi,
} from "./leases.ts";
export { POSTGRES_LATEST_SCHEMA_VERSION, type PostgresMigrateOptions } from "./migrate.ts";
export {
  type LoadTranscriptOptions,
  migratePostgresSessionStore,
  type OpenPostgresSessionStoreOptions,
  openPostgresSessionStore,
  type PostgresSessionStore,
} from "./store.ts";
export {
  type PostgresTranscript,
  TranscriptFlushError,
  TranscriptNotLoadedError,
} from "./transcript.ts";
