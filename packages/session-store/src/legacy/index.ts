// Legacy import: pi JSONL session files (format v1–v3) and OpenClaw sessions.json + JSONL transcripts into the
// store, idempotent, with a report of what was imported, skipped or repaired and why.
export {
  importOpenClawSessions,
  importPiSessionFile,
  type LegacyImportTarget,
  mergeImportReports,
  type OpenClawImportOptions,
  type PiFileImportOptions,
} from "./import.ts";
export {
  type OpenClawIndexParse,
  type OpenClawSessionRecord,
  parseOpenClawSessionIndex,
} from "./openclaw-index.ts";
export {
  type ParsedPiSession,
  PI_SESSION_FORMAT_VERSION,
  type PiSessionParse,
  parsePiSessionText,
} from "./pi-session-file.ts";
export {
  type ImportNote,
  type ImportReport,
  importChangedNothing,
  type SessionImportResult,
  type TranscriptImportResult,
} from "./report.ts";
