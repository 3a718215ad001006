// A session's header row: creating the transcript (the first header wins), reading its header, and telling
// a damaged header row apart (a `StorageFailure` naming the file and the session). Does not own: the
// statements (transcript-statements.ts) or the handle that reads the header later (transcript-handle.ts).
import { StorageFailure } from "./storage-errors.ts";
import type { TranscriptStatements } from "./transcript-statements.ts";
import type { TranscriptHeader } from "./transcript-types.ts";

/** Creates the transcript row if it is missing (concurrent creators are fine: the first header wins). */
export function createTranscriptIfMissing(
  statements: TranscriptStatements,
  agentId: string,
  header: TranscriptHeader,
): void {
  const now = new Date().toISOString();
  statements.insertHeader.run(header.id, agentId, JSON.stringify(header), now, now);
}

/**
 * The stored header of a session, creating the transcript from `init` when it has none. An existing
 * transcript costs one read and no write (no write lock taken); a new one the insert and nothing else.
 */
export function readOrCreateHeader(
  statements: TranscriptStatements,
  agentId: string,
  sessionId: string,
  init: TranscriptHeader | undefined,
): TranscriptHeader | undefined {
  const row = statements.selectHeader.get(sessionId);
  if (row !== undefined) return parseHeader(statements, sessionId, row.header);
  if (init === undefined) return undefined;
  const now = new Date().toISOString();
  const json = JSON.stringify(init);
  if (statements.insertHeader.run(init.id, agentId, json, now, now).changes === 1) {
    return JSON.parse(json) as TranscriptHeader;
  }
  // A concurrent creator won: its header is the session's.
  const winner = statements.selectHeader.get(sessionId);
  return winner === undefined ? undefined : parseHeader(statements, sessionId, winner.header);
}

export function transcriptExists(statements: TranscriptStatements, sessionId: string): boolean {
  return statements.selectHeader.get(sessionId) !== undefined;
}

/** A session's stored header; a damaged one throws a `StorageFailure` naming the file and the session. */
export function parseHeader(
  statements: TranscriptStatements,
  sessionId: string,
  json: string,
): TranscriptHeader {
  try {
    const header = JSON.parse(json) as unknown;
    if (header !== null && typeof header === "object" && !Array.isArray(header))
      return header as TranscriptHeader;
  } catch {
    // reported below
  }
  throw new StorageFailure({
    kind: "corrupt",
    path: statements.path,
    row: { table: "transcripts", sessionId },
    problem: `the header row of session ${sessionId} in ${statements.path} is not a JSON object`,
    hint: "restore the file from a backup; the session's entries are intact, but the session cannot be opened without it",
  });
}
