// @agent-kernel/kernel: the one canonical path to prepare and run an agent turn — prepareSession,
// executeTurn, run registry, per-session lanes and a global cap, lifecycle events, TurnOutcome, delivery sinks.

// Session-key builders for entry points that route their own peers (the gateway's channels): the same
// rules the kernel applies to `--to` and message contexts, so apps never restate them.
// The environment variables a built-in provider's key is read from (pi-ai's own table), for operator tools
// that say which keys are set (`agent-kernel models status`, `doctor`) without a second copy of the names.
export {
  buildAgentPeerSessionKey,
  providerKeyEnvVars,
  resolveThreadSessionKeys,
} from "@agent-kernel/runtime-resolver";
/** Any store the kernel runs on (SQLite or PostgreSQL): what `openKernelStore({ stateDir, config })` returns. */
export type { SessionStore as AnyKernelStore } from "@agent-kernel/session-store";
// The state dir's rule (owner-only folders and files) for apps that keep state of their own beside the store.
export {
  ensurePrivateDir,
  ensurePrivateFile,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  tightenFile,
} from "@agent-kernel/session-store";
// An agent's SKILL.md skills and why each gated one is off (`agent skills list`): what its next session gets.
// A gateway that stops kills the background commands `exec` started (`process` tool) in this process.
// The reasons a turn ends with when one of its limits ends it (its payloads already tell the user).
// A turn its store failed: ends with reason `storage`; a run that could not even be recorded throws
// `TurnNotRecordedError`, carrying the turn's result (its reply can still be shown).
export {
  type AgentSkillsReport,
  inspectAgentSkills,
  killAllBackgroundProcesses,
  type SkillStatus,
  STORAGE_REASON,
  TURN_LIMIT_REASONS,
  type TurnLimitReason,
  TurnNotRecordedError,
} from "@agent-kernel/turn-pipeline";
export {
  controlPlanePath,
  type DoctorReport,
  findSession,
  findStorageFailure,
  type ImportReport,
  type IntegrityProblem,
  interpretRunEvents,
  type KernelStore,
  listRuns,
  listSessions,
  type OpenKernelStoreOptions,
  openKernelStore,
  type QuarantinedTranscriptRow,
  type RecordedAssistantMessage,
  type RecordedAttempt,
  type RecordedToolCall,
  type RunEvent,
  type RunRecord,
  type RunReport,
  runDoctor,
  type SchemaInfo,
  type SessionDetails,
  type SessionMeta,
  type SessionRecord,
  type SessionSummary,
  StorageFailure,
  type StorageFailureKind,
  showRun,
  showSession,
  toStorageFailure,
} from "./admin.ts";
export {
  COMMAND_CHANNEL,
  type CommandSessionDeps,
  CommandSessionError,
  type CommandSessionFlags,
  type CommandSessionSettings,
  parseThinkingFlag,
  persistCommandSettings,
  resolveCommandSession,
} from "./command-session.ts";
export {
  createKernel,
  type ExecutorSettings,
  Kernel,
  type KernelOptions,
  type KernelStats,
  type TurnExecutor,
  type TurnToolProvider,
} from "./kernel.ts";
export { LaneScheduler, type LaneStats, LaneWaitAbortedError } from "./lanes.ts";
export { type TurnOutcomeJson, turnOutcomeJsonSchema } from "./outcome-schema.ts";
export {
  configFingerprint,
  currentSessionState,
  DEFAULT_ENTRY_POINT,
  type PrepareDeps,
  prepareSession,
  sessionFingerprint,
} from "./prepare.ts";
export {
  type ReplayOptions,
  type ReplayReport,
  type ReplaySide,
  ReplayUnavailableError,
  replayRun,
} from "./replay.ts";
export {
  type ActiveRun,
  DuplicateRunError,
  type EventListener,
  type RunPhase,
  RunRegistry,
} from "./run-registry.ts";
export {
  DEFAULT_LEASE_TTL_MS,
  LeaseWaitTimeoutError,
  type SessionLeaseSettings,
} from "./session-leases.ts";
export { sessionPatchAfterRun, updateSessionAfterRun } from "./session-update.ts";
export {
  type CallerRun,
  createKernelWithSubagents,
  type SessionVisibility,
  type SubagentLaneStats,
  type SubagentRun,
  type SubagentSettings,
  Subagents,
  subagentAnnouncePrompt,
  subagentSystemPrompt,
} from "./subagents.ts";
export type {
  AgentEventPayload,
  AgentRuntimeResult,
  DeliverySink,
  KernelPhaseTimings,
  MessageContext,
  NormalizedDefaults,
  PreparedSession,
  RunDecisions,
  RunOptions,
  SessionKernelInput,
  TurnInput,
  TurnOutcome,
  TurnStatus,
  TurnTimings,
} from "./types.ts";
export {
  KernelInputError,
  type KernelInputIssue,
  sessionKernelInputSchema,
  TURN_IMAGE_MAX_BYTES,
  TURN_IMAGE_MAX_COUNT,
  TURN_IMAGE_MIME_TYPES,
  turnInputSchema,
  validateSessionInput,
  validateTurnInput,
} from "./validate.ts";
