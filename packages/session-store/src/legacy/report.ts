// The legacy import report. Owns: the shapes that tell a caller (the future `doctor` command) what an import
// did: what was imported, what was already there, what was skipped or repaired and why, each with the file
// and, for a line-level problem, its line number. Does not own: reading or writing anything.

/** One thing left out or changed, and why. `line` is 1-based; absent when the note is about a whole file. */
export interface ImportNote {
  readonly file: string;
  readonly line?: number;
  readonly reason: string;
}

/** One transcript file brought into the store. */
export interface TranscriptImportResult {
  readonly file: string;
  readonly agentId: string;
  readonly sessionId: string;
  /** The pi session format version the file was written in (1–3). */
  readonly formatVersion: number;
  /** Entries written by this import. */
  readonly added: number;
  /** Entries the store already held, identical (a repeated import adds none). */
  readonly alreadyStored: number;
}

/** One `sessions.json` record brought into the store. */
export interface SessionImportResult {
  readonly file: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  /** `unchanged` when the store already held this session with the same id. */
  readonly outcome: "created" | "updated" | "unchanged";
}

export interface ImportReport {
  readonly transcripts: readonly TranscriptImportResult[];
  readonly sessions: readonly SessionImportResult[];
  /** Lines, entries, records or whole files left out. */
  readonly skipped: readonly ImportNote[];
  /** Entries stored with a change the store needed (pi reads them the same way). */
  readonly repaired: readonly ImportNote[];
}

/** True when the import wrote nothing: every transcript entry and session was already stored. */
export function importChangedNothing(report: ImportReport): boolean {
  return (
    report.transcripts.every((transcript) => transcript.added === 0) &&
    report.sessions.every((session) => session.outcome === "unchanged")
  );
}
