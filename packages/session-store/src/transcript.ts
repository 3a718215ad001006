// The transcript contract and its SQLite implementation. Owns: one session's pi entries stored verbatim as a
// tree (id, parentId) with a persisted leaf, synchronous durable appends (idempotent by id), the active branch
// read through a recursive CTE, branching and forking. Does not own: what the entries mean (pi's projection
// does that), the pi SessionManager adapter (turn-pipeline), or legacy file import (src/legacy).
import type { Database, Statement } from "better-sqlite3";
import { SessionStoreError, TranscriptConflictError } from "./errors.ts";

/** A pi SessionEntry stored verbatim (message, model_change, thinking_level_change, compaction, branch_summary, context_edit, label, session_info, custom, custom_message, usage, ...). */
export interface TranscriptEntry {
  readonly type: string;
  readonly id: string;
  readonly parentId: string | null;
  readonly timestamp: string;
  readonly [field: string]: unknown;
}

export interface TranscriptHeader {
  readonly type: "session";
  readonly version: number;
  readonly id: string;
  readonly timestamp: string;
  readonly cwd: string;
  readonly parentSession?: string;
}

/** An entry without its parent: `appendAtLeaf` fills `parentId` with the leaf inside the write transaction. */
export interface TranscriptEntryDraft {
  readonly type: string;
  readonly id: string;
  readonly timestamp: string;
  readonly [field: string]: unknown;
}

/** One session's transcript. Every method is synchronous. */
export interface Transcript {
  readonly agentId: string;
  readonly sessionId: string;
  getHeader(): TranscriptHeader | undefined;
  /** Durable when it returns. parentId must be null or an existing id. Appending an id that exists with identical content is a no-op (idempotent); with different content it throws. Moves the leaf to entry.id. */
  append(entry: TranscriptEntry): void;
  /** Moves the leaf (pi's branch/resetLeaf); persisted; an unknown id throws. */
  setLeaf(id: string | null): void;
  getLeafId(): string | null;
  getEntry(id: string): TranscriptEntry | undefined;
  /** Root→leaf inclusive (default: the current leaf), without loading the whole tree. */
  getBranch(leafId?: string | null): TranscriptEntry[];
  /** The whole tree in append order. */
  getEntries(): TranscriptEntry[];
  getChildren(parentId: string | null): TranscriptEntry[];
  count(): number;
}

/** What the SQLite transcript offers beyond the contract. */
export interface SqliteTranscript extends Transcript {
  /**
   * Appends `draft` as a child of the current leaf, reading the leaf and writing in one write transaction, so
   * concurrent writers (other processes) extend one chain instead of branching. Returns the stored entry.
   */
  appendAtLeaf(draft: TranscriptEntryDraft): TranscriptEntry;
  /** Appends many entries in one transaction (import): all or nothing, each with `append`'s rules. */
  appendMany(entries: readonly TranscriptEntry[]): void;
}

interface EntryRow {
  readonly body: string;
}

/** Prepared statements of one agent database, shared by all transcripts in it. */
export class TranscriptStatements {
  readonly db: Database;
  readonly insertHeader: Statement<[string, string, string, string, string]>;
  readonly selectHeader: Statement<[string], { header: string; leaf_id: string | null }>;
  readonly selectLeaf: Statement<[string], { leaf_id: string | null }>;
  readonly updateLeaf: Statement<[string | null, string, string]>;
  readonly insertEntry: Statement<[string, string, string | null, string, string, string]>;
  readonly selectEntry: Statement<[string, string], EntryRow>;
  readonly entryExists: Statement<[string, string], { one: number }>;
  readonly selectSeq: Statement<[string, string], { seq: number }>;
  readonly scanBack: Statement<
    [string, number, number],
    { id: string; parent_id: string | null; body: string }
  >;
  readonly selectAll: Statement<[string], EntryRow>;
  readonly selectChildren: Statement<[string, string], EntryRow>;
  readonly selectRoots: Statement<[string], EntryRow>;
  readonly countEntries: Statement<[string], { n: number }>;

  constructor(db: Database) {
    this.db = db;
    this.insertHeader = db.prepare(
      "INSERT OR IGNORE INTO transcripts (session_id, agent_id, header, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
    );
    this.selectHeader = db.prepare("SELECT header, leaf_id FROM transcripts WHERE session_id = ?");
    this.selectLeaf = db.prepare("SELECT leaf_id FROM transcripts WHERE session_id = ?");
    this.updateLeaf = db.prepare("UPDATE transcripts SET leaf_id = ?, updated_at = ? WHERE session_id = ?");
    this.insertEntry = db.prepare(
      "INSERT INTO transcript_entries (session_id, id, parent_id, type, timestamp, body) VALUES (?, ?, ?, ?, ?, ?) " +
        "ON CONFLICT (session_id, id) DO NOTHING",
    );
    this.selectEntry = db.prepare("SELECT body FROM transcript_entries WHERE session_id = ? AND id = ?");
    this.entryExists = db.prepare("SELECT 1 AS one FROM transcript_entries WHERE session_id = ? AND id = ?");
    this.selectSeq = db.prepare("SELECT seq FROM transcript_entries WHERE session_id = ? AND id = ?");
    // A parent is always appended before its child, so a branch is found by scanning the session's entries
    // backwards from the leaf (index on session_id, seq), keeping those on the parent chain.
    this.scanBack = db.prepare(
      "SELECT id, parent_id, body FROM transcript_entries WHERE session_id = ? AND seq <= ? ORDER BY seq DESC LIMIT ?",
    );
    this.selectAll = db.prepare("SELECT body FROM transcript_entries WHERE session_id = ? ORDER BY seq");
    this.selectChildren = db.prepare(
      "SELECT body FROM transcript_entries WHERE session_id = ? AND parent_id = ? ORDER BY seq",
    );
    this.selectRoots = db.prepare(
      "SELECT body FROM transcript_entries WHERE session_id = ? AND parent_id IS NULL ORDER BY seq",
    );
    this.countEntries = db.prepare("SELECT COUNT(*) AS n FROM transcript_entries WHERE session_id = ?");
  }
}

/** Creates the transcript row if it is missing (concurrent creators are fine: the first header wins). */
export function createTranscriptIfMissing(
  statements: TranscriptStatements,
  agentId: string,
  header: TranscriptHeader,
): void {
  const now = new Date().toISOString();
  statements.insertHeader.run(header.id, agentId, JSON.stringify(header), now, now);
}

export function transcriptExists(statements: TranscriptStatements, sessionId: string): boolean {
  return statements.selectHeader.get(sessionId) !== undefined;
}

export class SqliteTranscriptHandle implements SqliteTranscript {
  readonly agentId: string;
  readonly sessionId: string;
  readonly #statements: TranscriptStatements;
  #header: TranscriptHeader | undefined;
  readonly #appendOne: (entry: TranscriptEntry) => void;
  readonly #appendMany: (entries: readonly TranscriptEntry[]) => void;
  readonly #appendAtLeaf: (draft: TranscriptEntryDraft) => TranscriptEntry;

  constructor(statements: TranscriptStatements, agentId: string, sessionId: string) {
    this.#statements = statements;
    this.agentId = agentId;
    this.sessionId = sessionId;
    // IMMEDIATE: take the write lock before reading, so a concurrent writer waits (busy_timeout) instead of
    // failing with SQLITE_BUSY when a read transaction tries to upgrade.
    this.#appendOne = statements.db.transaction((entry: TranscriptEntry) => {
      this.#insert(entry);
    }).immediate;
    this.#appendMany = statements.db.transaction((entries: readonly TranscriptEntry[]) => {
      for (const entry of entries) this.#insert(entry);
    }).immediate;
    this.#appendAtLeaf = statements.db.transaction((draft: TranscriptEntryDraft): TranscriptEntry => {
      const entry: TranscriptEntry = {
        ...draft,
        type: draft.type,
        id: draft.id,
        timestamp: draft.timestamp,
        parentId: this.getLeafId(),
      };
      this.#insert(entry);
      return entry;
    }).immediate;
  }

  getHeader(): TranscriptHeader | undefined {
    if (this.#header === undefined) {
      const row = this.#statements.selectHeader.get(this.sessionId);
      this.#header = row === undefined ? undefined : (JSON.parse(row.header) as TranscriptHeader);
    }
    return this.#header;
  }

  append(entry: TranscriptEntry): void {
    assertEntryShape(entry);
    this.#appendOne(entry);
  }

  appendMany(entries: readonly TranscriptEntry[]): void {
    for (const entry of entries) assertEntryShape(entry);
    this.#appendMany(entries);
  }

  appendAtLeaf(draft: TranscriptEntryDraft): TranscriptEntry {
    assertEntryShape({
      ...draft,
      type: draft.type,
      id: draft.id,
      timestamp: draft.timestamp,
      parentId: null,
    });
    return this.#appendAtLeaf(draft);
  }

  setLeaf(id: string | null): void {
    if (id !== null && this.#statements.entryExists.get(this.sessionId, id) === undefined) {
      throw new TranscriptConflictError(`cannot move the leaf of session ${this.sessionId}: no entry ${id}`);
    }
    this.#statements.updateLeaf.run(id, new Date().toISOString(), this.sessionId);
  }

  getLeafId(): string | null {
    return this.#statements.selectLeaf.get(this.sessionId)?.leaf_id ?? null;
  }

  getEntry(id: string): TranscriptEntry | undefined {
    const row = this.#statements.selectEntry.get(this.sessionId, id);
    return row === undefined ? undefined : parseEntry(row);
  }

  /**
   * An unknown `leafId` (or a null leaf) gives an empty branch, as pi's `getBranch` does. Reads backwards from
   * the leaf in pages that start at the next wanted ancestor: a linear stretch costs one sequential read, and
   * entries of other branches are skipped without parsing (pages shrink when they hold off-branch entries).
   */
  getBranch(leafId?: string | null): TranscriptEntry[] {
    let wanted = leafId === undefined ? this.getLeafId() : leafId;
    const bodies: string[] = [];
    let pageSize = 64;
    while (wanted !== null) {
      const start = this.#statements.selectSeq.get(this.sessionId, wanted);
      if (start === undefined) break;
      let onBranch = 0;
      for (const row of this.#statements.scanBack.all(this.sessionId, start.seq, pageSize)) {
        if (row.id !== wanted) continue;
        bodies.push(row.body);
        onBranch++;
        wanted = row.parent_id;
        if (wanted === null) break;
      }
      pageSize = onBranch === pageSize ? Math.min(pageSize * 4, 1024) : Math.max(16, onBranch * 2);
    }
    bodies.reverse();
    return bodies.map((body) => JSON.parse(body) as TranscriptEntry);
  }

  getEntries(): TranscriptEntry[] {
    return this.#statements.selectAll.all(this.sessionId).map(parseEntry);
  }

  getChildren(parentId: string | null): TranscriptEntry[] {
    const rows =
      parentId === null
        ? this.#statements.selectRoots.all(this.sessionId)
        : this.#statements.selectChildren.all(this.sessionId, parentId);
    return rows.map(parseEntry);
  }

  count(): number {
    return this.#statements.countEntries.get(this.sessionId)?.n ?? 0;
  }

  /** Runs inside a write transaction. */
  #insert(entry: TranscriptEntry): void {
    const statements = this.#statements;
    if (entry.parentId !== null && statements.entryExists.get(this.sessionId, entry.parentId) === undefined) {
      throw new TranscriptConflictError(
        `cannot append entry ${entry.id} to session ${this.sessionId}: its parent ${entry.parentId} does not exist`,
      );
    }
    const body = JSON.stringify(entry);
    const inserted = statements.insertEntry.run(
      this.sessionId,
      entry.id,
      entry.parentId,
      entry.type,
      entry.timestamp,
      body,
    );
    if (inserted.changes === 0) {
      const stored = statements.selectEntry.get(this.sessionId, entry.id);
      if (stored === undefined || canonicalJson(JSON.parse(stored.body)) !== canonicalJson(entry)) {
        throw new TranscriptConflictError(
          `entry ${entry.id} already exists in session ${this.sessionId} with different content`,
        );
      }
    }
    statements.updateLeaf.run(entry.id, new Date().toISOString(), this.sessionId);
  }
}

function parseEntry(row: EntryRow): TranscriptEntry {
  return JSON.parse(row.body) as TranscriptEntry;
}

function assertEntryShape(entry: TranscriptEntry): void {
  const problems: string[] = [];
  if (typeof entry.type !== "string" || entry.type === "") problems.push("type must be a non-empty string");
  if (typeof entry.id !== "string" || entry.id === "") problems.push("id must be a non-empty string");
  if (entry.parentId !== null && typeof entry.parentId !== "string")
    problems.push("parentId must be a string or null");
  if (typeof entry.timestamp !== "string") problems.push("timestamp must be a string");
  if (entry.parentId === entry.id) problems.push("an entry cannot be its own parent");
  if (problems.length > 0) {
    throw new SessionStoreError(
      `invalid transcript entry ${JSON.stringify(entry.id)}: ${problems.join("; ")}`,
    );
  }
}

/** JSON with object keys sorted, so that two equal entries built in another key order compare equal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return inner;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(inner).sort()) sorted[key] = (inner as Record<string, unknown>)[key];
    return sorted;
  });
}
