// The transcript: one session's pi entries stored verbatim as a tree (id, parentId) with a persisted leaf. This
// module is its face, re-exporting the parts so that imports elsewhere name one module:
// - transcript-types.ts: the contract (`Transcript`, `SqliteTranscript`), entry and header shapes, the
//   tree-field check and canonical JSON every backend shares;
// - transcript-statements.ts: one agent database's prepared statements and the append journal's fold
//   (transcript-fold.ts: the fold's batch, refusals, folding on exit); transcript-header.ts: creating or
//   reading a session's header;
// - transcript-handle.ts: a session's SQLite handle (appends, leaf moves, reads), its failures as
//   `StorageFailure`s naming the file;
// - transcript-reads.ts: the reads through the process-wide read cache (transcript-cache.ts);
// - transcript-replay.ts: replaying the journal of a process that stopped before folding it;
// - transcript-quarantine.ts: damaged rows set aside, the branch going on from the last good ancestor.
// Does not own: what the entries mean (pi's projection), the pi SessionManager adapter (turn-pipeline), or
// legacy file import (src/legacy).
export { SqliteTranscriptHandle } from "./transcript-handle.ts";
export { createTranscriptIfMissing, readOrCreateHeader, transcriptExists } from "./transcript-header.ts";
export { listQuarantined, QUARANTINE_TABLE } from "./transcript-quarantine.ts";
export { TranscriptStatements } from "./transcript-statements.ts";
export {
  type AppendReplay,
  assertEntryShape,
  canonicalJson,
  type QuarantinedRow,
  type SqliteTranscript,
  type Transcript,
  type TranscriptEntry,
  type TranscriptEntryDraft,
  type TranscriptHeader,
} from "./transcript-types.ts";
