// History limiting (OpenClaw parity) and the transcript repair pass.
export {
  getHistoryLimitFromSessionKey,
  type HistoryLimitChannelSettings,
  type HistoryLimitConfig,
  type HistoryLimitRoute,
  limitHistoryTurns,
  type RoleMessage,
  SESSION_HISTORY_PRELUDE,
} from "./limit-turns.ts";
export {
  MISSING_TOOL_RESULT_TEXT,
  type RepairableMessage,
  repairTranscriptMessages,
  type SyntheticToolResult,
  type TranscriptRepair,
  type TranscriptRepairKind,
  type TranscriptRepairResult,
} from "./repair.ts";
