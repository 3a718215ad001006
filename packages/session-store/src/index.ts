// @agent-kernel/session-store: sessions, transcript tree, runs and auth state on SQLite through Kysely.

export {
  type AuthProfileState,
  type AuthProfileStats,
  type AuthStateApi,
  EMPTY_AUTH_PROFILE_STATS,
} from "./auth-state.ts";
export type { ChannelStateApi, ChannelStateEntry, ChannelStatePutOptions } from "./channel-state.ts";
export type { CronJobState, CronJobStats, CronStateApi } from "./cron-state.ts";
export {
  IdempotencyConflictError,
  RecordNotFoundError,
  SessionConflictError,
  SessionStoreError,
  StoreOpenError,
  StoreVersionError,
  TranscriptConflictError,
  TranscriptNotFoundError,
} from "./errors.ts";
export * from "./history/index.ts";
export {
  type AcquireOptions,
  type LeaseHold,
  LeaseLostError,
  type LeasingSessionStore,
  type LoadTranscriptOptions,
  leasingStoreOf,
  type SessionLease,
  type SessionLeasesApi,
} from "./leases.ts";
export * from "./legacy/index.ts";
export { type MemoryDatabase, memoryDatabaseFor } from "./memory-database.ts";
export { type AppliedMigration, type DatabasePart, LATEST_SCHEMA_VERSION } from "./migrator.ts";
export {
  ensurePrivateDir,
  ensurePrivateFile,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  tightenFile,
} from "./private-files.ts";
export type {
  ClaimInput,
  EnqueueInput,
  QueueApi,
  QueueItem,
  QueueItemStatus,
} from "./queue.ts";
export type {
  FallbackAttempt,
  FinalRunStatus,
  FinishRunInput,
  RunEvent,
  RunRecord,
  RunStatus,
  RunsApi,
  RunUpdate,
  RunUsage,
  StartRunInput,
} from "./runs.ts";
export { RunEventJson } from "./runs.ts";
export {
  applySessionMetaPatch,
  authProfileOverrideSource,
  type DeliveryContext,
  modelOverrideSource,
  type OverrideSource,
  resetSessionMeta,
  type SessionMeta,
  type SessionMetaPatch,
  type SessionOrigin,
} from "./session-meta.ts";
export type {
  CreateSessionInput,
  PatchOptions,
  ResetOptions,
  SessionRecord,
  SessionRef,
  SessionReset,
  SessionsApi,
  SessionUpdater,
} from "./sessions.ts";
export type { Durability, WalCheckpoint } from "./sqlite/connection.ts";
export type { RunJournalReplay } from "./sqlite/run-journal.ts";
export {
  agentDatabasePath,
  controlPlanePath,
  normalizeAgentId,
  resolveStateDir,
  STATE_DIR_ENV_VAR,
  type StateDirSource,
} from "./state-dir.ts";
export {
  controlPlanePathOf,
  findStorageFailure,
  StorageFailure,
  type StorageFailureKind,
  type StorageRow,
  toStorageFailure,
} from "./storage-errors.ts";
export {
  type ForkTranscriptOptions,
  type OpenSessionStoreOptions,
  openSessionStore,
  type SchemaInfo,
  type SessionStore,
  type SqliteSessionStore,
} from "./store.ts";
export {
  type AppendReplay,
  canonicalJson,
  type QuarantinedRow,
  type SqliteTranscript,
  type Transcript,
  type TranscriptEntry,
  type TranscriptEntryDraft,
  type TranscriptHeader,
} from "./transcript.ts";
export { clearTranscriptCache, configureTranscriptCache } from "./transcript-cache.ts";
export {
  type OmittedBranch,
  readTranscriptContext,
  type TranscriptContext,
} from "./transcript-context.ts";
