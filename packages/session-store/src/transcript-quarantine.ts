// Damaged transcript rows. Owns: deciding whether a stored body is the entry its row names (JSON, an object,
// the row's id and parent, a type and a timestamp), setting a damaged row aside — listed in the agent
// database's `transcript_quarantine` table (made on first use; the row itself stays as it was, byte for byte,
// so nothing is lost and seqs are never reused) — moving the session's leaf off it, the failure that reports
// it once, and listing what was set aside (for `doctor`). Does not own: reading rows (transcript-reads.ts
// finds them while parsing) or what a failure does to a turn.
//
// What "the session keeps working from its last good entry" means: the active branch is root → leaf; when a
// row on it is damaged, the branch ends at that row's parent (the last good ancestor) — the entries after it,
// although intact, hang below a hole, and a model context with a hole in it (a tool result without its call,
// an answer without its question) is worse than a shorter one. So the leaf moves to that ancestor (null when
// the root itself is damaged: the next entry starts a new root), the entries below stay stored (a side branch,
// reachable by id), and reads skip the damaged row everywhere. Its discovery is reported once, as a
// `StorageFailure` of kind `corrupt` naming the file, the session and the row: the caller (a turn) ends with
// it instead of answering from a history that just changed under it; the next read goes on from the new leaf.
import type { Database } from "better-sqlite3";
import { StorageFailure, toStorageFailure } from "./storage-errors.ts";
import type { TranscriptStatements } from "./transcript-statements.ts";
import type { QuarantinedRow, TranscriptEntry } from "./transcript-types.ts";

export const QUARANTINE_TABLE = "transcript_quarantine";

/** A row found damaged by a read. */
export interface DamagedRow {
  readonly seq: number;
  readonly id: string;
  readonly problem: string;
}

/**
 * The entry a stored body holds, or (a string) what is wrong with it. Bodies are written as
 * `JSON.stringify(entry)` of an entry that passed `assertEntryShape`, so anything else was damaged outside the
 * store (a disk error, a hand edit, a tool writing the file).
 */
export function parseStoredEntry(
  body: unknown,
  id: string,
  parentId: string | null,
): TranscriptEntry | string {
  if (typeof body !== "string")
    return `has a body that is not text (${body === null ? "null" : typeof body})`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    return `is not valid JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return "is not a JSON object";
  const entry = parsed as Record<string, unknown>;
  if (entry.id !== id)
    return `holds entry id ${JSON.stringify(entry.id)}, not the row's ${JSON.stringify(id)}`;
  if ((entry.parentId ?? null) !== parentId)
    return `holds parentId ${JSON.stringify(entry.parentId)}, not the row's ${JSON.stringify(parentId)}`;
  if (typeof entry.type !== "string" || entry.type === "") return "has no type";
  if (typeof entry.timestamp !== "string") return "has no timestamp";
  return parsed as TranscriptEntry;
}

/** What setting rows aside did. */
export interface QuarantineOutcome {
  /** Rows this call listed (0: another reader, maybe in another process, had already). */
  readonly newlyQuarantined: number;
  /** Where the session's leaf is now. */
  readonly leaf: string | null;
  /** True when the active branch went through a damaged row and the leaf moved to its last good ancestor. */
  readonly leafMoved: boolean;
}

/**
 * Lists `rows` of `sessionId` in the quarantine table and, when the session's active branch goes through one
 * of its damaged rows, moves the leaf to the parent of the one nearest the root — in one write transaction, so
 * an append of another process cannot slip between the look at the branch and the move. Throws a
 * `StorageFailure` when the database cannot take the write (the rows then stay unlisted and every read keeps
 * failing on them, naming them).
 */
export function quarantineRows(
  statements: TranscriptStatements,
  sessionId: string,
  rows: readonly DamagedRow[],
): QuarantineOutcome {
  const db = statements.db;
  try {
    return db
      .transaction((): QuarantineOutcome => {
        ensureQuarantineTable(db);
        const now = new Date().toISOString();
        const insert = db.prepare(
          `INSERT OR IGNORE INTO ${QUARANTINE_TABLE} (session_id, seq, id, problem, quarantined_at) VALUES (?, ?, ?, ?, ?)`,
        );
        let newlyQuarantined = 0;
        for (const row of rows)
          newlyQuarantined += insert.run(sessionId, row.seq, row.id, row.problem, now).changes;
        const leaf = statements.storedLeaf(sessionId);
        if (leaf === null) return { newlyQuarantined, leaf, leafMoved: false };
        const damaged = new Set(
          db
            .prepare<[string], number>(`SELECT seq FROM ${QUARANTINE_TABLE} WHERE session_id = ?`)
            .pluck()
            .all(sessionId),
        );
        // Leaf to root through the (session_id, id) index; UNION stops on a cycle a damaged parent_id could make.
        const chain = db
          .prepare<[string, string, string], [number, string | null]>(
            "WITH RECURSIVE chain(seq, id, parent_id) AS (" +
              "SELECT seq, id, parent_id FROM transcript_entries WHERE session_id = ? AND id = ? " +
              "UNION SELECT e.seq, e.id, e.parent_id FROM transcript_entries AS e JOIN chain " +
              "ON e.session_id = ? AND e.id = chain.parent_id) SELECT seq, parent_id FROM chain",
          )
          .raw()
          .all(sessionId, leaf, sessionId);
        let cut: string | null | undefined;
        for (const [seq, parentId] of chain) if (damaged.has(seq)) cut = parentId;
        if (cut === undefined) return { newlyQuarantined, leaf, leafMoved: false };
        statements.updateLeaf.run(cut, now, sessionId);
        return { newlyQuarantined, leaf: cut, leafMoved: true };
      })
      .immediate();
  } catch (error) {
    const first = rows[0];
    const failure = toStorageFailure(error, statements.path);
    throw new StorageFailure({
      kind: "corrupt",
      path: statements.path,
      row: {
        table: "transcript_entries",
        sessionId,
        ...(first === undefined ? {} : { seq: first.seq, id: first.id }),
      },
      problem: describeRows(statements.path, sessionId, rows),
      hint:
        `it could not be set aside (${failure?.problem ?? (error instanceof Error ? error.message : String(error))}): ` +
        `${failure?.hint ?? "make the database writable"}; until then every read of this session stops here`,
      cause: error,
    });
  }
}

/** The one report of rows this read set aside: what is wrong, and where the session goes on from. */
export function quarantinedFailure(
  path: string,
  sessionId: string,
  rows: readonly DamagedRow[],
  outcome: QuarantineOutcome,
): StorageFailure {
  const first = rows[0];
  const from = outcome.leafMoved
    ? outcome.leaf === null
      ? "the session starts over (no good entry comes before it on the active branch)"
      : `the session's active branch now ends at entry ${outcome.leaf}, its last good ancestor`
    : "the session's active branch does not go through it";
  return new StorageFailure({
    kind: "corrupt",
    path,
    row: {
      table: "transcript_entries",
      sessionId,
      ...(first === undefined ? {} : { seq: first.seq, id: first.id }),
    },
    problem: describeRows(path, sessionId, rows),
    hint:
      `it was set aside (kept byte for byte, listed in table ${QUARANTINE_TABLE}; \`agent doctor\` reports it) and ` +
      `${from}: run the command again to continue from there`,
  });
}

function describeRows(path: string, sessionId: string, rows: readonly DamagedRow[]): string {
  const first = rows[0];
  if (first === undefined) return `a row of session ${sessionId} in ${path} is damaged`;
  const more = rows.length > 1 ? ` (and ${rows.length - 1} more damaged rows)` : "";
  return `transcript row seq ${first.seq} (entry ${first.id}) of session ${sessionId} in ${path} ${first.problem}${more}`;
}

/** Rows set aside, of one session or of every session, in seq order; empty when nothing ever was. */
export function listQuarantined(db: Database, sessionId?: string): QuarantinedRow[] {
  if (!hasQuarantineTable(db)) return [];
  const rows = (
    sessionId === undefined
      ? db
          .prepare(
            `SELECT session_id, seq, id, problem, quarantined_at FROM ${QUARANTINE_TABLE} ORDER BY seq`,
          )
          .all()
      : db
          .prepare(
            `SELECT session_id, seq, id, problem, quarantined_at FROM ${QUARANTINE_TABLE} WHERE session_id = ? ORDER BY seq`,
          )
          .all(sessionId)
  ) as { session_id: string; seq: number; id: string; problem: string; quarantined_at: string }[];
  return rows.map((row) => ({
    sessionId: row.session_id,
    seq: row.seq,
    id: row.id,
    problem: row.problem,
    quarantinedAt: row.quarantined_at,
  }));
}

function hasQuarantineTable(db: Database): boolean {
  return (
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(QUARANTINE_TABLE) !==
    undefined
  );
}

/**
 * Made on first use rather than by a migration: agent and control-plane databases share one migration
 * numbering, and a database that never had a damaged row never needs it.
 */
function ensureQuarantineTable(db: Database): void {
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${QUARANTINE_TABLE} (session_id TEXT NOT NULL, seq INTEGER NOT NULL, ` +
      "id TEXT NOT NULL, problem TEXT NOT NULL, quarantined_at TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
  );
}
