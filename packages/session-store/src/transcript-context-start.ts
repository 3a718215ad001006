// The first read of a compacted session without its history: where the model context starts, found through a
// partial index of compaction rows. Owns: that index (`transcript_entries_compactions`, made on first use, see
// `ensureCompactionIndex`); reading the active branch from the first entry the latest compaction keeps to the
// leaf — one indexed look at the latest compaction, its body, one rowid range scan of the rows from the kept
// entry on; the facts table (`transcript_context_facts`: per kept entry, the latest model and thinking-level
// change among its ancestors, `recordContextFacts`) and reading it; a session's count without its shape.
// Does not own: the read cache (a session already in it is read by transcript-context.ts), the history's shape
// (read on demand by the handle), or damaged rows (a session with any is left to the full read).
//
// Why an index and not a table written by the append paths: SQLite updates a partial index in the same
// statement as the row, so every path that stores an entry — the direct append, `appendMany`, the journal's
// fold and a gone owner's replay — keeps it right by construction, and a crash rolls it back with the row.
// An append of any other type does not touch it (the condition excludes the row). The facts table needs no
// such care: what a kept entry's ancestors hold never changes, so a recorded fact is true forever.
import type { Database, Statement } from "better-sqlite3";
import { deepFreeze } from "./transcript-cache.ts";
import { parseStoredEntry, QUARANTINE_TABLE } from "./transcript-quarantine.ts";
import type { TranscriptStatements } from "./transcript-statements.ts";
import type { TranscriptEntry } from "./transcript-types.ts";

/** The entry types whose latest one before the context start is kept in the facts table. */
export const SETTING_TYPES = ["model_change", "thinking_level_change"] as const;
const COMPACTION_INDEX = "transcript_entries_compactions";
const FACTS_TABLE = "transcript_context_facts";

/**
 * Creates the compaction index when it is missing (a read of sqlite_master when it exists). Made here rather
 * than by a migration: agent and control-plane databases share one migration numbering. Creating it indexes
 * the compactions stored before. False when it cannot be made (a read-only file, the write lock not granted):
 * reads then take the full path.
 */
export function ensureCompactionIndex(db: Database): boolean {
  const exists = () =>
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(COMPACTION_INDEX) !==
    undefined;
  if (exists()) return true;
  try {
    db.exec(
      `CREATE INDEX IF NOT EXISTS ${COMPACTION_INDEX} ON transcript_entries (session_id, seq) WHERE type = 'compaction'`,
    );
    return true;
  } catch {
    return exists();
  }
}

/** What the context start read found: the branch from the start, and what the history before it records. */
export interface ContextFromStart {
  readonly leafId: string;
  /** The active branch from the first entry the latest compaction keeps to the leaf, root side first. */
  readonly entries: TranscriptEntry[];
  /**
   * The latest entry of a setting type (`SETTING_TYPES`) on the branch before `entries`: null when there is
   * none, undefined when the store has not recorded it for this start (see `recordContextFacts`): then read
   * the history's shape.
   */
  readonly latestBefore: (type: string) => TranscriptEntry | null | undefined;
}

interface StartStatements {
  readonly latestCompaction: Statement<[string], [number, string, string, string | null]>;
  readonly seqOf: Statement<[string, string], number>;
  readonly rowsFrom: Statement<[number, string], [number, string, string | null, string]>;
  readonly entryById: Statement<[string, string], [string | null, string]>;
  readonly read: (sessionId: string) => ContextFromStart | undefined;
}

const statementsOf = new WeakMap<TranscriptStatements, StartStatements | null>();

/**
 * The active branch of `sessionId` from where its model context starts, read without the history; undefined
 * when this read does not apply (no mark index, no compaction, the leaf on a branch without the latest
 * compaction, a compaction keeping an entry off its branch, damaged rows): read the full shape instead.
 */
export function readContextFromStart(
  statements: TranscriptStatements,
  sessionId: string,
): ContextFromStart | undefined {
  let prepared = statementsOf.get(statements);
  if (prepared === undefined) {
    prepared = prepare(statements);
    statementsOf.set(statements, prepared);
  }
  return prepared?.read(sessionId);
}

function prepare(statements: TranscriptStatements): StartStatements | null {
  const db = statements.db;
  if (!ensureCompactionIndex(db)) return null;
  // The session's latest compaction (its highest seq), through the partial index.
  const marks = db
    .prepare<[string], [number, string, string, string | null]>(
      `SELECT seq, id, type, parent_id FROM transcript_entries INDEXED BY ${COMPACTION_INDEX} ` +
        "WHERE session_id = ? AND type = 'compaction' ORDER BY seq DESC LIMIT 1",
    )
    .raw();
  const seqOf = db
    .prepare<[string, string], number>("SELECT seq FROM transcript_entries WHERE session_id = ? AND id = ?")
    .pluck();
  // Every row of the session from a seq on: a rowid range (`+` keeps SQLite off the id index).
  const rowsFrom = db
    .prepare<[number, string], [number, string, string | null, string]>(
      "SELECT seq, id, parent_id, body FROM transcript_entries WHERE seq >= ? AND +session_id = ?",
    )
    .raw();
  const entryById = db
    .prepare<[string, string], [string | null, string]>(
      "SELECT parent_id, body FROM transcript_entries WHERE session_id = ? AND id = ?",
    )
    .raw();
  const self: StartStatements = {
    latestCompaction: marks,
    seqOf,
    rowsFrom,
    entryById,
    // One read transaction: the leaf, the marks and the rows from one snapshot.
    read: db.transaction((sessionId: string) => readFromStart(statements, self, sessionId)),
  };
  return self;
}

/** How many entries `sessionId` has, counted by SQLite; undefined when it has rows set aside as damaged. */
export function countWithoutShape(statements: TranscriptStatements, sessionId: string): number | undefined {
  if (hasDamagedRows(statements.db, sessionId)) return undefined;
  return statements.selectSpan.get(sessionId)?.[2] ?? 0;
}

/**
 * A statement over a table made on first use (`transcript_quarantine`, the facts table), prepared once the table
 * exists (tables are never dropped); undefined while it does not. Prepared per database, once: a first read
 * runs these every time, and preparing costs more than running them.
 */
function onTableIfExists<Row>(
  db: Database,
  table: string,
  sql: string,
): Statement<[string, ...string[]], Row> | undefined {
  let byTable = tableStatements.get(db);
  if (byTable === undefined) {
    byTable = new Map();
    tableStatements.set(db, byTable);
  }
  const key = `${table}\u0000${sql}`;
  const known = byTable.get(key);
  if (known !== undefined) return known as Statement<[string, ...string[]], Row>;
  let exists = tableExists.get(db);
  if (exists === undefined) {
    exists = db
      .prepare<[string], number>("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
      .pluck();
    tableExists.set(db, exists);
  }
  if (exists.get(table) === undefined) return undefined;
  const statement = db.prepare<[string, ...string[]], Row>(sql);
  byTable.set(key, statement as Statement<[string, ...string[]], unknown>);
  return statement;
}

const tableExists = new WeakMap<Database, Statement<[string], number>>();
const tableStatements = new WeakMap<Database, Map<string, Statement<[string, ...string[]], unknown>>>();

function hasDamagedRows(db: Database, sessionId: string): boolean {
  const damaged = onTableIfExists<unknown>(
    db,
    QUARANTINE_TABLE,
    `SELECT 1 FROM ${QUARANTINE_TABLE} WHERE session_id = ? LIMIT 1`,
  );
  return damaged?.get(sessionId) !== undefined;
}

function readFromStart(
  statements: TranscriptStatements,
  prepared: StartStatements,
  sessionId: string,
): ContextFromStart | undefined {
  const compaction = prepared.latestCompaction.get(sessionId);
  if (compaction === undefined) return undefined;
  if (hasDamagedRows(statements.db, sessionId)) return undefined;
  const [compactionSeq, compactionId, , compactionParent] = compaction;
  const compactionBody = parseStoredEntry(
    statements.selectBody.get(sessionId, compactionId),
    compactionId,
    compactionParent,
  );
  // A damaged body is left to the full read (which sets it aside).
  if (typeof compactionBody === "string") return undefined;
  const firstKept = compactionBody.firstKeptEntryId;
  if (typeof firstKept !== "string") return undefined;
  const keptSeq = prepared.seqOf.get(sessionId, firstKept);
  if (keptSeq === undefined || keptSeq > compactionSeq) return undefined;
  const byId = new Map<string, TranscriptEntry>();
  let lastSeq = 0;
  let lastId: string | null = null;
  for (const [seq, id, parentId, body] of prepared.rowsFrom.all(keptSeq, sessionId)) {
    const entry = parseStoredEntry(body, id, parentId);
    if (typeof entry === "string") return undefined;
    byId.set(id, entry);
    if (seq > lastSeq) {
      lastSeq = seq;
      lastId = id;
    }
  }
  // The stored leaf (`TranscriptStatements.storedLeaf`'s rule): the session's last entry — the last of these
  // rows — unless `setLeaf` moved the leaf after it was appended.
  const moved = statements.selectLeaf.get(sessionId);
  const leafId = moved?.leaf_seq == null || lastSeq > moved.leaf_seq ? lastId : moved.leaf_id;
  if (leafId === null) return undefined;
  // The branch from the leaf back to the first row before `keptSeq`: it must pass the latest compaction
  // (else a later read of the shape decides which compaction is latest on this branch) and start at the
  // entry it keeps (pi's rule otherwise starts at the compaction, with history rows in between).
  const path: TranscriptEntry[] = [];
  let passedCompaction = false;
  for (let entry = byId.get(leafId); entry !== undefined; ) {
    path.push(entry);
    if (entry.id === compactionId) passedCompaction = true;
    entry = entry.parentId === null ? undefined : byId.get(entry.parentId);
  }
  path.reverse();
  if (!passedCompaction || path[0]?.id !== firstKept) return undefined;
  const entries = path.map((entry) => deepFreeze(entry));
  const start = entries[0] as TranscriptEntry;

  let facts: Map<string, string | null> | undefined;
  const latestBefore = (type: string): TranscriptEntry | null | undefined => {
    if (!(SETTING_TYPES as readonly string[]).includes(type)) return undefined;
    if (start.parentId === null) return null;
    facts ??= readFacts(statements.db, sessionId, start.id);
    if (!facts.has(type)) return undefined;
    const id = facts.get(type) ?? null;
    if (id === null) return null;
    const row = prepared.entryById.get(sessionId, id);
    if (row === undefined) return undefined;
    const entry = parseStoredEntry(row[1], id, row[0]);
    return typeof entry === "string" ? undefined : deepFreeze(entry);
  };
  return { leafId, entries, latestBefore };
}

/**
 * What the facts table says of the branch before `startId`: per setting type, the id of its latest entry
 * there (null: none). Empty when nothing was recorded for this start.
 */
function readFacts(db: Database, sessionId: string, startId: string): Map<string, string | null> {
  const facts = new Map<string, string | null>();
  const select = onTableIfExists<{ type: string; entry_id: string | null }>(
    db,
    FACTS_TABLE,
    `SELECT type, entry_id FROM ${FACTS_TABLE} WHERE session_id = ? AND start_id = ?`,
  );
  for (const row of select?.all(sessionId, startId) ?? []) facts.set(row.type, row.entry_id);
  return facts;
}

/**
 * Records, for the context start `startId`, the latest entry of each setting type among its ancestors
 * (`before`: the whole branch ending at its parent, root first). A start's ancestors never change (entries
 * are never deleted or re-parented), so the fact holds forever once true: it needs no transaction with the
 * appends, survives any crash, and writers that race record the same rows. Best effort: a database that
 * cannot take the write (read-only, busy) is left without it, and reads then take the history's shape.
 */
export function recordContextFacts(
  db: Database,
  sessionId: string,
  startId: string,
  before: {
    readonly ids: readonly string[];
    readonly parentIds: readonly (string | null)[];
    readonly types: readonly string[];
  },
): void {
  // Only a complete branch (down from a root) tells what the start's ancestors hold.
  if (before.ids.length > 0 && before.parentIds[0] !== null) return;
  try {
    db.transaction(() => writeFacts(db, sessionId, startId, before))();
  } catch {
    // Left unrecorded: the next read of the history records it.
  }
}

function writeFacts(
  db: Database,
  sessionId: string,
  startId: string,
  before: { readonly ids: readonly string[]; readonly types: readonly string[] },
): void {
  {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${FACTS_TABLE} (session_id TEXT NOT NULL, start_id TEXT NOT NULL, ` +
        "type TEXT NOT NULL, entry_id TEXT, PRIMARY KEY (session_id, start_id, type))",
    );
    const insert = db.prepare(
      `INSERT OR IGNORE INTO ${FACTS_TABLE} (session_id, start_id, type, entry_id) VALUES (?, ?, ?, ?)`,
    );
    for (const type of SETTING_TYPES) {
      const at = before.types.lastIndexOf(type);
      insert.run(sessionId, startId, type, at < 0 ? null : (before.ids[at] ?? null));
    }
  }
}
