// The transcript contract and its SQLite implementation. Owns: one session's pi entries stored verbatim as a
// tree (id, parentId) with a persisted leaf, synchronous durable appends (idempotent by id) through the append
// journal and their fold into SQLite (./sqlite/append-journal.ts owns the file), the replay of a gone owner's
// journal, the active branch read through the process-wide read cache (./transcript-cache.ts), branching and
// forking. Does not own: what the entries mean (pi's projection does that), the pi SessionManager adapter
// (turn-pipeline), or legacy file import (src/legacy).
import { unlinkSync } from "node:fs";
import type { Database, Statement } from "better-sqlite3";
import { SessionStoreError, TranscriptConflictError } from "./errors.ts";
import type { RunOwner } from "./runs.ts";
import {
  AppendJournal,
  type JournalFile,
  type JournalLine,
  type JournalMarker,
  linePrefixFor,
  type PendingAppend,
  readJournal,
} from "./sqlite/append-journal.ts";
import { type CachedSession, deepFreeze, transcriptCache } from "./transcript-cache.ts";

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

/** Prepared statements of one agent database, shared by all transcripts in it. */
export class TranscriptStatements {
  readonly db: Database;
  /** Names this database in the process-wide read cache: its path and the identity migration 4 wrote. */
  readonly cacheKey: string;
  readonly insertHeader: Statement<[string, string, string, string, string]>;
  readonly selectHeader: Statement<[string], { header: string }>;
  readonly selectLeaf: Statement<[string], { leaf_id: string | null; leaf_seq: number | null }>;
  readonly updateLeaf: Statement<[string | null, string, string]>;
  readonly insertEntry: Statement<
    [string, string, string | null, string, string, string, string | null, string, string | null]
  >;
  readonly insertEntryKnownParent: Statement<[string, string, string | null, string, string, string]>;
  readonly selectBody: Statement<[string, string], string>;
  readonly entryExists: Statement<[string, string], { one: number }>;
  readonly selectShape: Statement<[string], [number | null, string | null, string | null]>;
  readonly selectSpan: Statement<[string], [number | null, number | null, number, number | null]>;
  readonly selectRangeShape: Statement<[number, number, string], [number, string, string | null]>;
  readonly selectRangeBodies: Statement<[number, number, string], [number, string]>;
  readonly selectRowsAfter: Statement<
    [number, string],
    [number | null, string | null, string | null, string | null]
  >;
  readonly selectBodies: Statement<[string], [number, string]>;
  /** Changes whenever another connection commits (this connection's own commits leave it alone). */
  readonly dataVersion: Statement<[], number>;
  readonly selectLastEntry: Statement<[string], [number, string]>;
  readonly selectRowAbove: Statement<[number, string], [number]>;
  /** When the session's leaf last moved (or the transcript was created): its `updated_at`, ISO. */
  readonly selectHeaderTime: Statement<[string], string>;
  /** Undefined: every append is its own commit (`appends: "commit"`, or durability `full`). */
  journal: AppendJournal | undefined;
  #foldTransaction: ((batch: readonly PendingAppend[]) => FoldOutcome) | undefined;

  constructor(db: Database, path: string) {
    this.db = db;
    const identity = db.prepare("SELECT id FROM transcript_store_identity").pluck().get();
    this.cacheKey = `${path}\u0000${String(identity)}`;
    this.insertHeader = db.prepare(
      "INSERT OR IGNORE INTO transcripts (session_id, agent_id, header, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
    );
    this.selectHeader = db.prepare("SELECT header FROM transcripts WHERE session_id = ?");
    this.selectLeaf = db.prepare("SELECT leaf_id, leaf_seq FROM transcripts WHERE session_id = ?");
    // leaf_seq: the highest seq in the table when the leaf moved; a later append (larger seq) supersedes it.
    this.updateLeaf = db.prepare(
      "UPDATE transcripts SET leaf_id = ?, leaf_seq = (SELECT MAX(seq) FROM transcript_entries), updated_at = ? " +
        "WHERE session_id = ?",
    );
    // One autocommit statement per append: the parent check happens inside the insert, so a commit writes
    // the table and its one index and nothing else. No row inserted (changes 0) means a duplicate id or a
    // missing parent; the slow path in `#appendOne` tells them apart.
    this.insertEntry = db.prepare(
      "INSERT INTO transcript_entries (session_id, id, parent_id, type, timestamp, body) " +
        "SELECT ?, ?, ?, ?, ?, ? WHERE ? IS NULL OR EXISTS " +
        "(SELECT 1 FROM transcript_entries WHERE session_id = ? AND id = ?) " +
        "ON CONFLICT (session_id, id) DO NOTHING",
    );
    // The same insert when the parent is known to exist (null, or an entry this process has seen committed:
    // entries are never deleted). A plain VALUES insert: an INSERT ... SELECT that reads its own table makes
    // SQLite stage the SELECT's row in an ephemeral table first (OpenEphemeral in its plan), which cost a
    // durable append about 37% more user-space instructions (callgrind, 10k-entry bench shape).
    this.insertEntryKnownParent = db.prepare(
      "INSERT INTO transcript_entries (session_id, id, parent_id, type, timestamp, body) " +
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, id) DO NOTHING",
    );
    this.selectBody = db
      .prepare<[string, string], string>(
        "SELECT body FROM transcript_entries WHERE session_id = ? AND id = ?",
      )
      .pluck();
    this.entryExists = db.prepare("SELECT 1 AS one FROM transcript_entries WHERE session_id = ? AND id = ?");
    // A session's shape (no bodies: a branch read parses and even reads only the entries on the branch)
    // through the (session_id, id) index, in id order; sorted by seq in JS, cheaper than a temporary b-tree.
    // The last row (id NULL: no entry has one) is the table's highest seq, read in the same statement and so
    // the same snapshot: the watermark the next read starts from.
    this.selectShape = db
      .prepare<[string], [number | null, string | null, string | null]>(
        "SELECT seq, id, parent_id FROM transcript_entries WHERE session_id = ? " +
          "UNION ALL SELECT MAX(seq), NULL, NULL FROM transcript_entries",
      )
      .raw();
    // Where a session's rows lie (first and last seq, how many) and the table's highest seq, from one
    // snapshot: an index-only scan of the session's (session_id, id) entries.
    this.selectSpan = db
      .prepare<[string], [number | null, number | null, number, number | null]>(
        "SELECT MIN(seq), MAX(seq), COUNT(*), (SELECT MAX(seq) FROM transcript_entries) " +
          "FROM transcript_entries WHERE session_id = ?",
      )
      .raw();
    // A session's shape in one rowid range scan, already in append order: the first read of a session whose
    // rows are mostly contiguous, instead of the (session_id, id) index and a table lookup per row.
    this.selectRangeShape = db
      .prepare<[number, number, string], [number, string, string | null]>(
        "SELECT seq, id, parent_id FROM transcript_entries WHERE seq BETWEEN ? AND ? AND +session_id = ?",
      )
      .raw();
    // The bodies of a run of wanted rows that lie close together (a branch is mostly contiguous runs).
    this.selectRangeBodies = db
      .prepare<[number, number, string], [number, string]>(
        "SELECT seq, body FROM transcript_entries WHERE seq BETWEEN ? AND ? AND +session_id = ?",
      )
      .raw();
    // What was appended since the watermark: a rowid range (`+` keeps SQLite off the id index), and the new
    // watermark as above (a lookup of the last rowid).
    this.selectRowsAfter = db
      .prepare<[number, string], [number | null, string | null, string | null, string | null]>(
        "SELECT seq, id, parent_id, body FROM transcript_entries WHERE seq > ? AND +session_id = ? " +
          "UNION ALL SELECT MAX(seq), NULL, NULL, NULL FROM transcript_entries",
      )
      .raw();
    // The bodies of exactly the wanted rows (a JSON array of seqs), one rowid lookup each inside SQLite.
    this.selectBodies = db
      .prepare<[string], [number, string]>(
        "SELECT e.seq, e.body FROM json_each(?) AS wanted JOIN transcript_entries AS e ON e.seq = wanted.value",
      )
      .raw();
    this.dataVersion = db.prepare<[], number>("PRAGMA data_version").pluck();
    this.selectLastEntry = db
      .prepare<[string], [number, string]>(
        "SELECT seq, id FROM transcript_entries WHERE seq = " +
          "(SELECT MAX(seq) FROM transcript_entries WHERE session_id = ?)",
      )
      .raw();
    this.selectRowAbove = db
      .prepare<[number, string], [number]>(
        "SELECT 1 FROM transcript_entries WHERE seq > ? AND +session_id = ? LIMIT 1",
      )
      .raw();
    this.selectHeaderTime = db
      .prepare<[string], string>("SELECT updated_at FROM transcripts WHERE session_id = ?")
      .pluck();
  }

  /** Appends go through a journal file owned by `owner` from now on (see sqlite/append-journal.ts). */
  enableJournal(databasePath: string, owner: RunOwner): void {
    this.journal = new AppendJournal(databasePath, owner, () => this.#foldQuietly());
    foldJournalsOnExit();
    let peers = journaledDatabases.get(this.cacheKey);
    if (peers === undefined) {
      peers = new Set();
      journaledDatabases.set(this.cacheKey, peers);
    }
    peers.add(this);
  }

  /**
   * Brings SQLite up to date with every append this process journaled to this database (through any open
   * store), so what follows reads or writes the whole tree; then throws, once, a refusal found by a fold.
   * A fold that fails (the write lock not granted within the busy timeout, a full disk) throws and keeps the
   * entries pending (they are in the journal either way); the next call tries again.
   */
  fold(cacheKey?: string): void {
    const peers = journaledDatabases.get(this.cacheKey);
    if (peers !== undefined) for (const peer of peers) peer.#foldPending();
    this.#throwRefused(cacheKey);
  }

  /**
   * After a commit of this store outside the journal (a direct append, `appendMany`, `appendAtLeaf`,
   * `setLeaf`): a new burst, so the next journaled append marks what it knows after that commit and a replay
   * does not take this store's own write for another writer's.
   */
  noteOwnCommit(): void {
    this.journal?.startBurst();
  }

  /** True when a fold refused an entry of this session and no call has reported it yet. */
  hasRefusal(cacheKey: string): boolean {
    return refusalsBySession.has(cacheKey);
  }

  /** Folds this store's pending appends now (a burst grew long); a failure waits for the next call. */
  foldBurst(): void {
    this.#foldQuietly();
  }

  /** Throws (once) the refusals of one session, or of every session when `cacheKey` is undefined. */
  #throwRefused(cacheKey?: string): void {
    const ofThisDatabase = `${this.cacheKey}\u0000`;
    const keys =
      cacheKey === undefined
        ? [...refusalsBySession.keys()].filter((key) => key.startsWith(ofThisDatabase))
        : [cacheKey];
    const messages: string[] = [];
    for (const key of keys) {
      const refusal = refusalsBySession.get(key);
      if (refusal === undefined) continue;
      refusalsBySession.delete(key);
      const more = refusal.more > 0 ? ` (and ${refusal.more} more)` : "";
      messages.push(`${refusal.listed.join("; ")}${more}`);
    }
    if (messages.length > 0) {
      throw new TranscriptConflictError(
        `journaled appends refused when folded into SQLite: ${messages.join("; ")}`,
      );
    }
  }

  /**
   * True when another store of this process has appends to this session that are not folded yet: an append
   * here must then fold them first and commit, or the two stores' folds could store the session's entries out
   * of their order (a session's pending entries are only ever in one journal).
   */
  pendingInAnotherStore(cacheKey: string): boolean {
    const peers = journaledDatabases.get(this.cacheKey);
    if (peers !== undefined)
      for (const peer of peers) if (peer !== this && peer.journal?.hasPendingFor(cacheKey)) return true;
    return false;
  }

  /**
   * Folds this store's pending appends (only its own: another store's failing fold must not keep them) and
   * closes the journal, removing its file when nothing is left in it; then throws a refusal not reported yet.
   */
  closeJournal(): void {
    const journal = this.journal;
    if (journal === undefined) return;
    try {
      this.#foldPending();
      this.#throwRefused();
    } finally {
      journal.close();
      this.journal = undefined;
      const peers = journaledDatabases.get(this.cacheKey);
      peers?.delete(this);
      if (peers?.size === 0) journaledDatabases.delete(this.cacheKey);
    }
  }

  /**
   * Stores the entries of a journal whose owner is gone, in its order, in one write transaction, with
   * `append`'s rules (an entry already stored identically was folded before the owner stopped); then removes
   * the file. The file is read under the write lock, so concurrent replayers replay it once; undefined when
   * another one already did. A session's leaf follows the replayed entries, as it followed the owner's
   * appends, unless another writer went on with the session after the owner last folded (a row, or a leaf
   * move, above the journal's marker): then it stays where that writer left it and they form a side branch.
   */
  replayJournal(file: JournalFile): AppendReplay | undefined {
    const touched: string[] = [];
    const replay = this.db
      .transaction((): AppendReplay | undefined => {
        let lines: JournalLine[];
        try {
          lines = readJournal(file.path);
        } catch (error) {
          if ((error as { code?: unknown }).code === "ENOENT") return undefined;
          const reason = error instanceof Error ? error.message : String(error);
          return { file: file.path, stored: 0, alreadyStored: 0, problems: [{ line: 0, problem: reason }] };
        }
        let stored = 0;
        let alreadyStored = 0;
        const problems: { line: number; problem: string }[] = [];
        // Per session: its leaf before the replay when another writer went on with it (else undefined).
        const keepLeaf = new Map<string, string | null | undefined>();
        const storedIn = new Set<string>();
        let marker: JournalMarker | undefined;
        for (const line of lines) {
          if ("problem" in line) {
            problems.push({ line: line.line, problem: line.problem });
            continue;
          }
          if ("marker" in line) {
            marker = line.marker;
            continue;
          }
          const { sessionId, entry } = line;
          try {
            assertEntryShape(entry);
            if (!keepLeaf.has(sessionId)) {
              const wentOn = marker !== undefined && this.#changedAfter(sessionId, marker);
              keepLeaf.set(sessionId, wentOn ? this.#storedLeaf(sessionId) : undefined);
            }
            if (this.insertRow(sessionId, entry, line.body, false) !== 0) {
              stored++;
              storedIn.add(sessionId);
            } else if (this.#storedIdentically(sessionId, entry)) alreadyStored++;
            else problems.push({ line: line.line, problem: this.#whyRefused(sessionId, entry) });
          } catch (error) {
            problems.push({
              line: line.line,
              problem: error instanceof Error ? error.message : String(error),
            });
          }
        }
        const now = new Date().toISOString();
        for (const sessionId of storedIn) {
          touched.push(sessionId);
          const leaf = keepLeaf.get(sessionId);
          if (leaf !== undefined) this.updateLeaf.run(leaf, now, sessionId);
        }
        return { file: file.path, stored, alreadyStored, problems };
      })
      .immediate();
    // This connection's own commit leaves its data_version alone: sessions it had proven current are not.
    for (const sessionId of touched) {
      const session = transcriptCache.find(`${this.cacheKey}\u0000${sessionId}`);
      if (session !== undefined) session.verifiedBy = undefined;
    }
    if (replay !== undefined && replay.problems[0]?.line !== 0) {
      try {
        unlinkSync(file.path);
      } catch {
        // Gone already, or a read-only folder: replaying it again changes nothing.
      }
    }
    return replay;
  }

  /** True when the session has a row above the marker's seq, or its leaf moved after the marker's time. */
  #changedAfter(sessionId: string, marker: JournalMarker): boolean {
    if (this.selectRowAbove.get(marker.seq, sessionId) !== undefined) return true;
    const movedAt = this.selectHeaderTime.get(sessionId);
    return movedAt !== undefined && movedAt > marker.time;
  }

  /** A session's leaf as stored: its last entry, unless `setLeaf` moved it after that entry was appended. */
  #storedLeaf(sessionId: string): string | null {
    const last = this.selectLastEntry.get(sessionId);
    const moved = this.selectLeaf.get(sessionId);
    if (last !== undefined && (moved?.leaf_seq == null || last[0] > moved.leaf_seq)) return last[1];
    return moved?.leaf_id ?? null;
  }

  /** One insert (autocommit outside a transaction); the row's seq when it was written, else 0. */
  insertRow(sessionId: string, entry: TranscriptEntry, body: string, parentKnown: boolean): number {
    const parentId = entry.parentId;
    const result = parentKnown
      ? this.insertEntryKnownParent.run(sessionId, entry.id, parentId, entry.type, entry.timestamp, body)
      : this.insertEntry.run(
          sessionId,
          entry.id,
          parentId,
          entry.type,
          entry.timestamp,
          body,
          parentId,
          sessionId,
          parentId,
        );
    return result.changes === 1 ? Number(result.lastInsertRowid) : 0;
  }

  /**
   * For an append that inserted nothing (inside its write transaction): undefined when the same entry is
   * stored already (an identical repeat, a no-op for the tree that, like any append, moves the leaf to it),
   * else why the append is refused (the id holds other content, or the parent does not exist).
   */
  settleUninserted(sessionId: string, entry: TranscriptEntry): string | undefined {
    if (!this.#storedIdentically(sessionId, entry)) return this.#whyRefused(sessionId, entry);
    this.updateLeaf.run(entry.id, new Date().toISOString(), sessionId);
    return undefined;
  }

  #storedIdentically(sessionId: string, entry: TranscriptEntry): boolean {
    const stored = this.selectBody.get(sessionId, entry.id);
    return stored !== undefined && canonicalJson(JSON.parse(stored)) === canonicalJson(entry);
  }

  #whyRefused(sessionId: string, entry: TranscriptEntry): string {
    return this.selectBody.get(sessionId, entry.id) === undefined
      ? `cannot append entry ${entry.id} to session ${sessionId}: its parent ${entry.parentId} does not exist`
      : `entry ${entry.id} already exists in session ${sessionId} with different content`;
  }

  /** The microtask at the end of a burst of appends: a failure leaves the entries pending for the next call. */
  #foldQuietly(): void {
    try {
      this.#foldPending();
    } catch {
      // Kept pending (and journaled); the next call on this database folds again and reports the failure.
    }
  }

  #foldPending(): void {
    const journal = this.journal;
    // Never inside a caller's transaction: its rollback would take the entries with it.
    if (journal === undefined || journal.pending.length === 0 || !this.db.open || this.db.inTransaction)
      return;
    const batch = journal.pending;
    this.#foldTransaction ??= this.db.transaction((batch: readonly PendingAppend[]) =>
      this.#insertBatch(batch),
    ).immediate;
    const { seqs, refusals } = this.#foldTransaction(batch);
    journal.folded();
    // Committed: what this process just stored is known without reading it back.
    const targets = new Map<string, CachedSession | undefined>();
    batch.forEach((append, index) => {
      const seq = seqs[index] ?? 0;
      if (seq === 0) return;
      if (!targets.has(append.cacheKey))
        targets.set(append.cacheKey, ownAppendsTarget(this, append.cacheKey));
      const session = targets.get(append.cacheKey);
      if (session !== undefined) recordOwnAppend(session, seq, append.entry, append.body);
    });
    for (const { cacheKey, reason } of refusals) {
      let refusal = refusalsBySession.get(cacheKey);
      if (refusal === undefined) {
        refusal = { listed: [], more: 0 };
        refusalsBySession.set(cacheKey, refusal);
      }
      if (refusal.listed.length < 5) refusal.listed.push(reason);
      else refusal.more++;
    }
  }

  /** Inside the fold's write transaction: the batch in order; an entry stored identically meanwhile is kept. */
  #insertBatch(batch: readonly PendingAppend[]): FoldOutcome {
    const seqs: number[] = [];
    const refusals: { cacheKey: string; reason: string }[] = [];
    // Entries of this batch already in SQLite, per session: later entries may name them as parents.
    const stored = new Map<string, Set<string>>();
    // Refused entries (per session key and id): their journaled descendants are refused with them, as a
    // caller whose append threw would not have appended them.
    const refused = new Set<string>();
    for (const { sessionId, cacheKey, entry, body } of batch) {
      const parentId = entry.parentId;
      if (parentId !== null && refused.has(`${cacheKey}\u0000${parentId}`)) {
        seqs.push(0);
        refused.add(`${cacheKey}\u0000${entry.id}`);
        refusals.push({
          cacheKey,
          reason: `entry ${entry.id} of session ${sessionId}: its parent ${parentId} was refused`,
        });
        continue;
      }
      let storedHere = stored.get(cacheKey);
      const parentKnown =
        parentId === null ||
        storedHere?.has(parentId) === true ||
        transcriptCache.find(cacheKey)?.positionById.has(parentId) === true;
      const seq = this.insertRow(sessionId, entry, body, parentKnown);
      seqs.push(seq);
      // Another process may have stored the same entry first: kept, as an identical repeat is.
      const reason = seq === 0 ? this.settleUninserted(sessionId, entry) : undefined;
      if (reason !== undefined) {
        refused.add(`${cacheKey}\u0000${entry.id}`);
        refusals.push({ cacheKey, reason });
        continue;
      }
      if (storedHere === undefined) {
        storedHere = new Set();
        stored.set(cacheKey, storedHere);
      }
      storedHere.add(entry.id);
    }
    return { seqs, refusals };
  }
}

/**
 * Per session (its cache key, which names its database), what folds refused (a conflict with what another
 * process stored meanwhile) and no call has reported yet: thrown once by the next call on that session through
 * any store of this process, and by `store.flush()`; a session with one commits directly until then.
 */
const refusalsBySession = new Map<string, { listed: string[]; more: number }>();

/** Per database (its cache key), the statements of every store in this process that journals appends to it. */
const journaledDatabases = new Map<string, Set<TranscriptStatements>>();
let exitHookInstalled = false;

/**
 * A process that exits without closing its stores (a CLI that returns from main) still folds and removes its
 * journals: `exit` listeners run synchronously, as better-sqlite3 does. A journal whose fold fails there stays
 * for the next open to replay.
 */
function foldJournalsOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const peers of journaledDatabases.values()) {
      for (const statements of [...peers]) {
        try {
          statements.closeJournal();
        } catch (error) {
          // A failed fold leaves the journal on disk for the next open to replay; a refusal has no caller left
          // to throw to, so it is said on stderr rather than lost.
          if (error instanceof TranscriptConflictError)
            process.stderr.write(`session-store: ${error.message}\n`);
        }
      }
    }
  });
}

interface FoldOutcome {
  /** Per entry of the batch: its seq, or 0 when it was not inserted. */
  readonly seqs: number[];
  readonly refusals: { readonly cacheKey: string; readonly reason: string }[];
}

/** What replaying one gone owner's journal did. */
export interface AppendReplay {
  readonly file: string;
  /** Entries stored by the replay: journaled, but not yet folded when the owner stopped. */
  readonly stored: number;
  /** Entries the owner had folded already. */
  readonly alreadyStored: number;
  /** Lines that could not be stored, with why (a torn last line, a conflict, a missing parent). */
  readonly problems: readonly { readonly line: number; readonly problem: string }[];
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
  if (row !== undefined) return JSON.parse(row.header) as TranscriptHeader;
  if (init === undefined) return undefined;
  const now = new Date().toISOString();
  const json = JSON.stringify(init);
  if (statements.insertHeader.run(init.id, agentId, json, now, now).changes === 1) {
    return JSON.parse(json) as TranscriptHeader;
  }
  // A concurrent creator won: its header is the session's.
  const winner = statements.selectHeader.get(sessionId);
  return winner === undefined ? undefined : (JSON.parse(winner.header) as TranscriptHeader);
}

export function transcriptExists(statements: TranscriptStatements, sessionId: string): boolean {
  return statements.selectHeader.get(sessionId) !== undefined;
}

/**
 * Entries come back deep-frozen and shared: the process-wide read cache (transcript-cache.ts) hands the same
 * objects to every reader, so a repeated read costs a look at what was appended since, not a parse.
 */
export class SqliteTranscriptHandle implements SqliteTranscript {
  readonly agentId: string;
  readonly sessionId: string;
  readonly #statements: TranscriptStatements;
  readonly #cacheKey: string;
  #header: TranscriptHeader | undefined;
  // Write transactions, made on first use: most handles live for one turn and only ever take the
  // one-statement fast path of `append`, and making a better-sqlite3 transaction costs more than that path.
  #appendSlowPath: ((entry: TranscriptEntry, body: string) => number) | undefined;
  #appendMany: ((entries: readonly TranscriptEntry[], bodies: string[], seqs: number[]) => void) | undefined;
  #appendAtLeaf: ((draft: TranscriptEntryDraft) => [TranscriptEntry, string, number]) | undefined;
  /** The last entry this handle committed directly: the usual parent of its next direct append. */
  #lastAppendedId: string | undefined;
  /** `linePrefixFor(sessionId)`, made on the first journaled append. */
  #linePrefix: string | undefined;
  /** The journal's burst of this handle's last journaled append (see #appendToJournal). */
  #journaledInBurst = -1;

  /** `header`: the stored header when the opener has just read it (saves reading it again). */
  constructor(
    statements: TranscriptStatements,
    agentId: string,
    sessionId: string,
    header?: TranscriptHeader,
  ) {
    this.#statements = statements;
    this.agentId = agentId;
    this.sessionId = sessionId;
    this.#header = header;
    this.#cacheKey = `${statements.cacheKey}\u0000${sessionId}`;
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
    const body = JSON.stringify(entry);
    if (this.#appendToJournal(entry, body)) return;
    this.#statements.fold(this.#cacheKey);
    // The direct path: one autocommit statement, durable when it returns (WAL). It inserts nothing for a
    // duplicate id or a missing parent; the slow path then decides under the write lock.
    let seq = this.#statements.insertRow(this.sessionId, entry, body, this.#parentIsKnown(entry.parentId));
    if (seq === 0) {
      // IMMEDIATE (all three): take the write lock before reading, so a concurrent writer waits
      // (busy_timeout) instead of failing with SQLITE_BUSY when a read transaction tries to upgrade.
      this.#appendSlowPath ??= this.#statements.db.transaction((entry: TranscriptEntry, body: string) =>
        this.#insert(entry, body, false),
      ).immediate;
      seq = this.#appendSlowPath(entry, body);
    }
    this.#statements.noteOwnCommit();
    this.#lastAppendedId = entry.id;
    if (seq !== 0) {
      const session = ownAppendsTarget(this.#statements, this.#cacheKey);
      if (session !== undefined) recordOwnAppend(session, seq, entry, body);
    }
  }

  /**
   * The journaled append: when this session's cache is current and proves the id new and the parent stored
   * (or journaled before it), one line in the journal makes the entry durable; SQLite gets it with the rest
   * of the burst (see sqlite/append-journal.ts). False: the caller commits directly instead.
   */
  #appendToJournal(entry: TranscriptEntry, body: string): boolean {
    const statements = this.#statements;
    const journal = statements.journal;
    const key = this.#cacheKey;
    // An unreported refusal of this session goes to this caller (the direct path folds and throws it): an
    // append after it may name the refused entry as its parent.
    if (journal === undefined || statements.hasRefusal(key) || statements.pendingInAnotherStore(key))
      return false;
    // The cache is proven current (a data_version query) at this handle's first journaled append of a
    // synchronous burst, not at every one: another process committing the same id within the burst is
    // the race the fold settles anyway (an identical entry is kept, another one refused and reported).
    let session = this.#journaledInBurst === journal.burst ? transcriptCache.find(this.#cacheKey) : undefined;
    let marker: JournalMarker | undefined;
    if (session === undefined || !session.loaded) {
      // Inside a caller's transaction the entry must commit (or roll back) with it.
      if (statements.db.inTransaction) return false;
      const time = new Date().toISOString();
      session = this.#shape().session;
      marker = { seq: session.scannedSeq, time };
    }
    const known = session.positionById;
    const parentId = entry.parentId;
    if (known.has(entry.id) || journal.isPending(key, entry.id)) return false;
    if (parentId !== null && !known.has(parentId) && !journal.isPending(key, parentId)) return false;
    this.#linePrefix ??= linePrefixFor(this.sessionId);
    if (!journal.write({ sessionId: this.sessionId, cacheKey: key, entry, body }, this.#linePrefix, marker))
      return false;
    this.#journaledInBurst = journal.burst;
    // The entry is durable in the journal; a fold failure or a refusal is reported by the next call.
    if (journal.full) statements.foldBurst();
    return true;
  }

  appendMany(entries: readonly TranscriptEntry[]): void {
    for (const entry of entries) assertEntryShape(entry);
    this.#statements.fold(this.#cacheKey);
    this.#appendMany ??= this.#statements.db.transaction(
      (entries: readonly TranscriptEntry[], bodies: string[], seqs: number[]) => {
        // Entries inserted earlier in this transaction exist for the rest of it (and roll back with it).
        const inserted = new Set<string>();
        for (const entry of entries) {
          const parentId = entry.parentId;
          const known = this.#parentIsKnown(parentId) || (parentId !== null && inserted.has(parentId));
          const body = JSON.stringify(entry);
          bodies.push(body);
          seqs.push(this.#insert(entry, body, known));
          inserted.add(entry.id);
        }
      },
    ).immediate;
    const bodies: string[] = [];
    const seqs: number[] = [];
    this.#appendMany(entries, bodies, seqs);
    this.#statements.noteOwnCommit();
    const last = entries.at(-1);
    if (last !== undefined) this.#lastAppendedId = last.id;
    // committed: what this process just stored is known without reading it back
    const session = ownAppendsTarget(this.#statements, this.#cacheKey);
    if (session === undefined) return;
    entries.forEach((entry, index) => {
      const seq = seqs[index] ?? 0;
      if (seq !== 0) recordOwnAppend(session, seq, entry, bodies[index] ?? "");
    });
  }

  appendAtLeaf(draft: TranscriptEntryDraft): TranscriptEntry {
    assertEntryShape({
      ...draft,
      type: draft.type,
      id: draft.id,
      timestamp: draft.timestamp,
      parentId: null,
    });
    this.#statements.fold(this.#cacheKey);
    this.#appendAtLeaf ??= this.#statements.db.transaction(
      (next: TranscriptEntryDraft): [TranscriptEntry, string, number] => {
        const entry: TranscriptEntry = {
          ...next,
          type: next.type,
          id: next.id,
          timestamp: next.timestamp,
          parentId: this.#leafId(),
        };
        const body = JSON.stringify(entry);
        return [entry, body, this.#insert(entry, body, this.#parentIsKnown(entry.parentId))];
      },
    ).immediate;
    const [appended, body, seq] = this.#appendAtLeaf(draft);
    this.#statements.noteOwnCommit();
    this.#lastAppendedId = appended.id;
    if (seq !== 0) {
      const session = ownAppendsTarget(this.#statements, this.#cacheKey);
      if (session !== undefined) recordOwnAppend(session, seq, appended, body);
    }
    return appended;
  }

  setLeaf(id: string | null): void {
    this.#statements.fold(this.#cacheKey);
    if (id !== null && this.#statements.entryExists.get(this.sessionId, id) === undefined) {
      throw new TranscriptConflictError(`cannot move the leaf of session ${this.sessionId}: no entry ${id}`);
    }
    this.#statements.updateLeaf.run(id, new Date().toISOString(), this.sessionId);
    this.#statements.noteOwnCommit();
  }

  getLeafId(): string | null {
    this.#statements.fold(this.#cacheKey);
    return this.#leafId();
  }

  #leafId(): string | null {
    // The leaf row first, then the shape: whatever the row names was committed before the shape is read.
    const row = this.#statements.selectLeaf.get(this.sessionId);
    return leafOf(this.#shape().session, row?.leaf_id ?? null, row?.leaf_seq ?? null);
  }

  getEntry(id: string): TranscriptEntry | undefined {
    this.#statements.fold(this.#cacheKey);
    const shape = this.#shape();
    const position = shape.session.positionById.get(id);
    return position === undefined ? undefined : this.#entriesAt(shape, [position])[0];
  }

  /** An unknown `leafId` (or a null leaf) gives an empty branch, as pi's `getBranch` does. */
  getBranch(leafId?: string | null): TranscriptEntry[] {
    this.#statements.fold(this.#cacheKey);
    let shape: Shape;
    let wanted: string | null;
    if (leafId === undefined) {
      const row = this.#statements.selectLeaf.get(this.sessionId);
      shape = this.#shape();
      wanted = leafOf(shape.session, row?.leaf_id ?? null, row?.leaf_seq ?? null);
    } else {
      shape = this.#shape();
      wanted = leafId;
    }
    const session = shape.session;
    const positions: number[] = [];
    while (wanted !== null) {
      const position = session.positionById.get(wanted);
      if (position === undefined) break;
      positions.push(position);
      wanted = session.parentIds[position] ?? null;
    }
    positions.reverse();
    return this.#entriesAt(shape, positions);
  }

  getEntries(): TranscriptEntry[] {
    this.#statements.fold(this.#cacheKey);
    const shape = this.#shape();
    return this.#entriesAt(
      shape,
      shape.session.seqs.map((_seq, position) => position),
    );
  }

  getChildren(parentId: string | null): TranscriptEntry[] {
    this.#statements.fold(this.#cacheKey);
    const shape = this.#shape();
    const positions: number[] = [];
    shape.session.parentIds.forEach((parent, position) => {
      if (parent === parentId) positions.push(position);
    });
    return this.#entriesAt(shape, positions);
  }

  count(): number {
    this.#statements.fold(this.#cacheKey);
    return this.#shape().session.seqs.length;
  }

  /**
   * This session in the read cache, brought up to date with what was appended since it was last read. The
   * bodies of new rows read on the way come back by position, so parsing them needs no second query.
   */
  #shape(): Shape {
    const session = transcriptCache.session(this.#cacheKey);
    const statements = this.#statements;
    // Proven current by this connection and nothing committed by another one since: no query needed.
    const version = statements.dataVersion.get() ?? -1;
    if (session.loaded && session.verifiedBy === statements && version === session.verifiedVersion)
      return { session, bodies: NO_BODIES };
    const bodies: string[] = [];
    if (!session.loaded) this.#loadShape(session);
    // New rows since the last read come with their bodies: they are few and usually on the active branch.
    const rows = this.#statements.selectRowsAfter.all(session.scannedSeq, this.sessionId);
    const watermark = takeWatermark(rows);
    if (rows.length > 1) rows.sort(bySeq);
    for (const [seq, id, parentId, body] of rows) {
      if (session.addShape(seq ?? 0, id ?? "", parentId) && body !== null)
        bodies[session.seqs.length - 1] = body;
    }
    session.scannedSeq = Math.max(session.scannedSeq, watermark);
    // `version` was read before the rows: a commit after it changes data_version again, and the next read
    // looks (at worst once more than needed).
    session.verifiedBy = statements;
    session.verifiedVersion = version;
    transcriptCache.settle(session);
    return { session, bodies };
  }

  /**
   * The first read of a session in this process: its shape only (bodies are read for the entries a caller
   * asks for, see #entriesAt). When at least half the rows between its first and last seq are its own (a
   * session written mostly on its own: the common case), one rowid range scan in append order; otherwise
   * through the (session_id, id) index, sorted here.
   */
  #loadShape(session: CachedSession): void {
    const span = this.#statements.selectSpan.get(this.sessionId);
    const [first, last, count, tableMax] = span ?? [null, null, 0, null];
    if (first !== null && last !== null && count * 2 >= last - first + 1) {
      // Every row appended after that snapshot has a seq above its table maximum (SQLite never reuses a
      // rowid below the maximum, and entries are never deleted), so [first, last] holds exactly this
      // session's rows up to `tableMax`, and the refresh that follows picks up the rest.
      for (const [seq, id, parentId] of this.#statements.selectRangeShape.all(first, last, this.sessionId)) {
        session.addShape(seq, id, parentId);
      }
      session.scannedSeq = Math.max(session.scannedSeq, tableMax ?? 0);
    } else {
      const rows = this.#statements.selectShape.all(this.sessionId);
      const watermark = takeWatermark(rows);
      rows.sort(bySeq);
      for (const [seq, id, parentId] of rows) session.addShape(seq ?? 0, id ?? "", parentId);
      session.scannedSeq = Math.max(session.scannedSeq, watermark);
    }
    session.loaded = true;
  }

  /** The entries at these positions, parsing (and caching, frozen) those not parsed yet. */
  #entriesAt({ session, bodies }: Shape, positions: readonly number[]): TranscriptEntry[] {
    const missing: number[] = [];
    let parsed = false;
    for (const position of positions) {
      if (session.entries[position] !== undefined) continue;
      const body = bodies[position] ?? session.unparsedBodies.get(position);
      if (body === undefined) {
        missing.push(session.seqs[position] ?? 0);
      } else {
        session.setEntry(position, deepFreeze(JSON.parse(body) as TranscriptEntry), body.length);
        parsed = true;
      }
    }
    if (missing.length > 0) {
      this.#readBodies(
        session,
        missing.sort((a, b) => a - b),
      );
      parsed = true;
    }
    if (parsed) transcriptCache.settle(session);
    const entries: TranscriptEntry[] = [];
    for (const position of positions) {
      const entry = session.entries[position];
      if (entry === undefined) {
        throw new SessionStoreError(
          `transcript ${this.agentId}/${this.sessionId}: entry ${session.ids[position]} vanished from the database`,
        );
      }
      entries.push(entry);
    }
    return entries;
  }

  /**
   * Reads, parses and caches the entries at these seqs (ascending): runs of seqs that lie close together
   * (a branch is mostly a few long runs) in one rowid range scan each, the rest by one lookup per seq.
   */
  #readBodies(session: CachedSession, seqs: readonly number[]): void {
    const store = (seq: number, body: string) => {
      const position = positionOfSeq(session, seq);
      if (position === undefined || session.entries[position] !== undefined) return;
      session.setEntry(position, deepFreeze(JSON.parse(body) as TranscriptEntry), body.length);
    };
    const scattered: number[] = [];
    let start = 0;
    while (start < seqs.length) {
      let end = start;
      while (end + 1 < seqs.length && (seqs[end + 1] ?? 0) - (seqs[end] ?? 0) <= RUN_GAP) end++;
      if (end - start + 1 >= RUN_MIN) {
        const wanted = new Set(seqs.slice(start, end + 1));
        const rows = this.#statements.selectRangeBodies.all(seqs[start] ?? 0, seqs[end] ?? 0, this.sessionId);
        for (const [seq, body] of rows) if (wanted.has(seq)) store(seq, body);
      } else {
        for (let index = start; index <= end; index++) scattered.push(seqs[index] ?? 0);
      }
      start = end + 1;
    }
    if (scattered.length > 0) {
      for (const [seq, body] of this.#statements.selectBodies.all(JSON.stringify(scattered)))
        store(seq, body);
    }
  }

  /**
   * True when `parentId` is null or certainly committed: the entry this handle appended last, or one in this
   * session's read cache (filled only from committed rows). Entries are never deleted, so it stays true.
   */
  #parentIsKnown(parentId: string | null): boolean {
    if (parentId === null || parentId === this.#lastAppendedId) return true;
    return transcriptCache.find(this.#cacheKey)?.positionById.has(parentId) === true;
  }

  /**
   * Runs inside a write transaction: inserts (returning the seq), or explains why not (0 for an identical
   * repeat; a conflict or a missing parent throws).
   */
  #insert(entry: TranscriptEntry, body: string, parentKnown: boolean): number {
    const seq = this.#statements.insertRow(this.sessionId, entry, body, parentKnown);
    if (seq !== 0) return seq;
    const refused = this.#statements.settleUninserted(this.sessionId, entry);
    if (refused !== undefined) throw new TranscriptConflictError(refused);
    return 0;
  }
}

const NO_BODIES: readonly (string | undefined)[] = [];
/** Wanted seqs at most this far apart are read by one range scan (the rows between are read and dropped)… */
const RUN_GAP = 4;
/** …when the run holds at least this many (fewer are looked up one by one). */
const RUN_MIN = 16;

/**
 * The cached session that this process's just-committed appends can be added to, or undefined when they
 * must be read back instead: it is not cached, not proven current by this connection, or another connection
 * has committed since (its rows may come before this process's in seq order).
 */
function ownAppendsTarget(statements: TranscriptStatements, cacheKey: string): CachedSession | undefined {
  const session = transcriptCache.find(cacheKey);
  if (session === undefined || !session.loaded || session.verifiedBy !== statements) return undefined;
  // Inside a caller's transaction nothing is committed yet (it may still roll back), or another connection
  // committed first: read back instead, and no read may skip SQLite until one has.
  if (statements.db.inTransaction || statements.dataVersion.get() !== session.verifiedVersion) {
    session.verifiedBy = undefined;
    return undefined;
  }
  return session;
}

/** Adds an entry this process committed (at `seq`) to its session's cache, its JSON parsed on first read. */
function recordOwnAppend(session: CachedSession, seq: number, entry: TranscriptEntry, body: string): void {
  if (session.addShape(seq, entry.id, entry.parentId)) {
    session.setUnparsedBody(session.seqs.length - 1, body);
    transcriptCache.settle(session);
  }
}

/** A cached session after a refresh, with the bodies of the rows that refresh read (by position). */
interface Shape {
  readonly session: CachedSession;
  readonly bodies: readonly (string | undefined)[];
}

/** Removes the watermark row (the one without an id) from a shape read and returns the seq it carries. */
function takeWatermark(rows: (readonly [number | null, string | null, ...unknown[]])[]): number {
  const at = rows.findLastIndex((row) => row[1] === null);
  if (at < 0) return 0;
  const [marker] = rows.splice(at, 1);
  return marker?.[0] ?? 0;
}

function bySeq(a: readonly [number | null, ...unknown[]], b: readonly [number | null, ...unknown[]]): number {
  return (a[0] ?? 0) - (b[0] ?? 0);
}

/** The leaf: the last appended entry, unless `setLeaf` moved it after that append (leaf_seq ≥ its seq). */
function leafOf(session: CachedSession, movedTo: string | null, movedAtSeq: number | null): string | null {
  const last = session.seqs.length - 1;
  const lastSeq = session.seqs[last];
  if (lastSeq !== undefined && (movedAtSeq === null || lastSeq > movedAtSeq))
    return session.ids[last] ?? null;
  return movedTo;
}

/** Where `seq` is in the session's append order (seqs are sorted: a binary search). */
function positionOfSeq(session: CachedSession, seq: number): number | undefined {
  let low = 0;
  let high = session.seqs.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = session.seqs[middle] ?? 0;
    if (at === seq) return middle;
    if (at < seq) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

/** Throws a SessionStoreError listing everything wrong with an entry's tree fields (every backend checks the same). */
export function assertEntryShape(entry: TranscriptEntry): void {
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
