// The turn executor over pi: hermetic sessions, the kernel system prompt, default tools, the event bridge and
// the recovery loop (see execute-turn.ts).

export {
  applyToolPolicy,
  buildDefaultTools,
  capOutput,
  DEFAULT_EXEC_MAX_OUTPUT_BYTES,
  DEFAULT_EXEC_TIMEOUT_SECONDS,
  type DefaultToolsOptions,
  killAllBackgroundProcesses,
  killSessionProcesses,
  resolveInsideWorkspace,
  WorkspacePathError,
} from "../tools/index.ts";
export { TurnEventLog } from "./event-bridge.ts";
export { executeTurn } from "./execute-turn.ts";
export { createHermeticSession, type HermeticSessionInput, toPiThinkingLevel } from "./hermetic-session.ts";
export { type AttemptCredential, ModelRuntimePool, type ModelRuntimePoolOptions } from "./model-runtimes.ts";
export { DEFAULT_TRANSIENT_RETRY_DELAY_MS } from "./recovery.ts";
export { type RunEventStorage, toStoredRunEvents } from "./run-event-storage.ts";
export { SteerHandle } from "./steering.ts";
export { STORAGE_REASON, storageFailureOf, TurnNotRecordedError } from "./storage-failure.ts";
export {
  BOOTSTRAP_ENTRY_TYPE,
  BOOTSTRAP_FILE_NAMES,
  type BootstrapFile,
  buildKernelSystemPrompt,
  DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS,
  type KernelPromptInput,
  kernelPromptSettings,
  loadBootstrapFiles,
  MINIMAL_BOOTSTRAP_FILE_NAMES,
  systemPromptHash,
  trimBootstrapContent,
  USER_BOOTSTRAP_MAX_CHARS,
} from "./system-prompt.ts";
export { TRACE_ATTRIBUTES, TRACER_NAME } from "./tracing.ts";
export {
  DEFAULT_STALL_TIMEOUT_MS,
  type LimitBreach,
  resolveTurnLimits,
  TURN_LIMIT_REASONS,
  TurnLimitError,
  type TurnLimitReason,
  TurnLimits,
  type TurnLimitValues,
} from "./turn-limits.ts";
export { applyPatchOffered, memoryOffered } from "./turn-tools.ts";
export type {
  AgentEventPayload,
  AgentEventStream,
  AttemptRecord,
  DeliverySink,
  ExecLimits,
  PromptMode,
  TurnCallbacks,
  TurnContext,
  TurnRequest,
  TurnResult,
  TurnStatus,
  TurnUsage,
} from "./types.ts";
