// The prepared statements of one agent database, shared by every transcript in it, and what they do together:
// inserting a row (the one-statement durable append and its slow path), settling an append that inserted
// nothing (an identical repeat or a refusal), the append journal of this store (sqlite/append-journal.ts owns
// the file) and when its entries are folded into SQLite. A fold that fails on a full disk or a read-only file
// throws a `StorageFailure` saying where the entries not stored yet are kept (the journal). Does not own: the
// fold's batch insert, the refusals it found and folding on exit (transcript-fold.ts), a session's header row
// (transcript-header.ts), the read cache (transcript-reads.ts), replaying a gone owner's journal
// (transcript-replay.ts) or a session's handle (transcript-handle.ts).
import type { Database, Statement } from "better-sqlite3";
import type { RunOwner } from "./runs.ts";
import {
  AppendJournal,
  type JournalFile,
  type JournalMarker,
  type PendingAppend,
} from "./sqlite/append-journal.ts";
import { StorageFailure, toStorageFailure } from "./storage-errors.ts";
import type { CachedSession } from "./transcript-cache.ts";
import {
  type FoldOutcome,
  foldJournalsOnExit,
  insertBatch,
  journaledDatabases,
  recordRefusals,
  refusalsBySession,
  throwRefused,
} from "./transcript-fold.ts";
import { ownAppendsTarget, recordOwnAppend } from "./transcript-reads.ts";
import { replayJournal } from "./transcript-replay.ts";
import { type AppendReplay, canonicalJson, type TranscriptEntry } from "./transcript-types.ts";

/** Prepared statements of one agent database, shared by all transcripts in it. */
export class TranscriptStatements {
  readonly db: Database;
  /** The agent database's file: what a `StorageFailure` names. */
  readonly path: string;
  /** Names this database in the process-wide read cache: its path and the identity migration 4 wrote. */
  readonly cacheKey: string;
  readonly insertHeader: Statement<[string, string, string, string, string]>;
  readonly selectHeader: Statement<[string], { header: string }>;
  readonly selectLeaf: Statement<[string], { leaf_id: string | null; leaf_seq: number | null }>;
  /** Moves a session's leaf; every call counts in `leafWrites` (whatever the outcome: a rollback only costs a read). */
  readonly updateLeaf: { run(leafId: string | null, now: string, sessionId: string): unknown };
  /**
   * How many leaf writes this connection made: with `data_version` (other connections' commits) it proves a
   * leaf row read earlier is still the stored one (transcript-handle.ts `syncState`).
   */
  leafWrites = 0;
  readonly insertEntry: Statement<
    [string, string, string | null, string, string, string, string | null, string, string | null]
  >;
  readonly insertEntryKnownParent: Statement<[string, string, string | null, string, string, string]>;
  readonly selectBody: Statement<[string, string], string>;
  readonly entryExists: Statement<[string, string], { one: number }>;
  readonly selectShape: Statement<[string], [number | null, string | null, string | null, string | null]>;
  readonly selectSpan: Statement<[string], [number | null, number | null, number, number | null]>;
  readonly selectRangeShape: Statement<[number, number, string], [number, string, string | null, string]>;
  readonly selectRangeBodies: Statement<[number, number, string], [number, string]>;
  readonly selectRowsAfter: Statement<
    [number, string],
    [number | null, string | null, string | null, string | null, string | null]
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
  /** The last group commit failed (a later fold has not succeeded yet). */
  #groupCommitFailed = false;

  constructor(db: Database, path: string) {
    this.db = db;
    this.path = path;
    const identity = db.prepare("SELECT id FROM transcript_store_identity").pluck().get();
    this.cacheKey = `${path}\u0000${String(identity)}`;
    this.insertHeader = db.prepare(
      "INSERT OR IGNORE INTO transcripts (session_id, agent_id, header, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
    );
    this.selectHeader = db.prepare("SELECT header FROM transcripts WHERE session_id = ?");
    this.selectLeaf = db.prepare("SELECT leaf_id, leaf_seq FROM transcripts WHERE session_id = ?");
    // leaf_seq: the highest seq in the table when the leaf moved; a later append (larger seq) supersedes it.
    const updateLeaf = db.prepare<[string | null, string, string]>(
      "UPDATE transcripts SET leaf_id = ?, leaf_seq = (SELECT MAX(seq) FROM transcript_entries), updated_at = ? " +
        "WHERE session_id = ?",
    );
    this.updateLeaf = {
      run: (leafId, now, sessionId) => {
        this.leafWrites++;
        return updateLeaf.run(leafId, now, sessionId);
      },
    };
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
    // A session's shape (id, parent and type; no bodies: a branch read parses and even reads only the entries on the branch)
    // through the (session_id, id) index, in id order; sorted by seq in JS, cheaper than a temporary b-tree.
    // The last row (id NULL: no entry has one) is the table's highest seq, read in the same statement and so
    // the same snapshot: the watermark the next read starts from.
    this.selectShape = db
      .prepare<[string], [number | null, string | null, string | null, string | null]>(
        "SELECT seq, id, parent_id, type FROM transcript_entries WHERE session_id = ? " +
          "UNION ALL SELECT MAX(seq), NULL, NULL, NULL FROM transcript_entries",
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
      .prepare<[number, number, string], [number, string, string | null, string]>(
        "SELECT seq, id, parent_id, type FROM transcript_entries WHERE seq BETWEEN ? AND ? AND +session_id = ?",
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
      .prepare<[number, string], [number | null, string | null, string | null, string | null, string | null]>(
        "SELECT seq, id, parent_id, body, type FROM transcript_entries WHERE seq > ? AND +session_id = ? " +
          "UNION ALL SELECT MAX(seq), NULL, NULL, NULL, NULL FROM transcript_entries",
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
    if (peers !== undefined) for (const peer of peers) peer.#foldOrExplain();
    this.#throwRefused(cacheKey);
  }

  /**
   * `fold` before a read of one session that looks at nothing else (its count, its leaf): folds only when a
   * store of this process holds appends of that session not in SQLite yet — other sessions' pending appends
   * change nothing it reads, and folding them here would make every such read a commit of its own.
   */
  foldSession(cacheKey: string): void {
    const peers = journaledDatabases.get(this.cacheKey);
    if (peers !== undefined) {
      for (const peer of peers) {
        if (peer.journal?.hasPendingFor(cacheKey)) {
          this.fold(cacheKey);
          return;
        }
      }
    }
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

  /**
   * Throws (once) the refusals a fold found in this database that no call has reported yet. Folds nothing,
   * unless the last group commit failed with entries still pending (the file refuses writes: read-only, a
   * full disk): then it folds again now, throwing the `StorageFailure` that says where they are kept.
   */
  reportRefusals(): void {
    if (this.#groupCommitFailed && (this.journal?.pending.length ?? 0) > 0) this.#foldOrExplain();
    this.#throwRefused();
  }

  /** Folds this store's pending appends now (a burst grew long); a failure waits for the next call. */
  foldBurst(): void {
    this.#foldQuietly();
  }

  /** Throws (once) the refusals of one session, or of every session when `cacheKey` is undefined. */
  #throwRefused(cacheKey?: string): void {
    throwRefused(this.cacheKey, cacheKey);
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
      this.#foldOrExplain();
      this.#throwRefused();
    } finally {
      journal.close();
      this.journal = undefined;
      const peers = journaledDatabases.get(this.cacheKey);
      peers?.delete(this);
      if (peers?.size === 0) journaledDatabases.delete(this.cacheKey);
    }
  }

  /** Replays the journal of a gone owner (transcript-replay.ts). */
  replayJournal(file: JournalFile): AppendReplay | undefined {
    return replayJournal(this, file);
  }

  /** True when the session has a row above the marker's seq, or its leaf moved after the marker's time. */
  changedAfter(sessionId: string, marker: JournalMarker): boolean {
    if (this.selectRowAbove.get(marker.seq, sessionId) !== undefined) return true;
    const movedAt = this.selectHeaderTime.get(sessionId);
    return movedAt !== undefined && movedAt > marker.time;
  }

  /** A session's leaf as stored: its last entry, unless `setLeaf` moved it after that entry was appended. */
  storedLeaf(sessionId: string): string | null {
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
    if (!this.storedIdentically(sessionId, entry)) return this.whyRefused(sessionId, entry);
    this.updateLeaf.run(entry.id, new Date().toISOString(), sessionId);
    return undefined;
  }

  storedIdentically(sessionId: string, entry: TranscriptEntry): boolean {
    const stored = this.selectBody.get(sessionId, entry.id);
    if (stored === undefined) return false;
    try {
      return canonicalJson(JSON.parse(stored)) === canonicalJson(entry);
    } catch {
      // A damaged stored body (transcript-quarantine.ts) is not this entry.
      return false;
    }
  }

  whyRefused(sessionId: string, entry: TranscriptEntry): string {
    return this.selectBody.get(sessionId, entry.id) === undefined
      ? `cannot append entry ${entry.id} to session ${sessionId}: its parent ${entry.parentId} does not exist`
      : `entry ${entry.id} already exists in session ${sessionId} with different content`;
  }

  /**
   * `#foldPending`, with a full disk or a read-only file thrown as a `StorageFailure` that says where the
   * entries not stored yet are kept meanwhile: in this store's journal, which a later fold, or the replay by
   * the next store to open the database once this process is gone, stores once the file can take them.
   */
  #foldOrExplain(): void {
    try {
      this.#foldPending();
    } catch (error) {
      const failure = toStorageFailure(error, this.path);
      if (failure === undefined) throw error;
      const journal = this.journal;
      if (journal === undefined || journal.pending.length === 0) throw failure;
      throw new StorageFailure({
        kind: failure.kind,
        path: failure.path,
        code: failure.code,
        problem: failure.problem,
        hint:
          `${failure.hint}; the ${journal.pending.length} appended entries not in it yet are kept in the ` +
          `append journal ${journal.path}, stored by the next fold (or by the next store to open the ` +
          `database, once this process is gone) when the file can take them`,
        keptIn: journal.path,
        cause: failure.cause,
      });
    }
  }

  /** The group commit after a burst of appends: a failure leaves the entries pending for the next call. */
  #foldQuietly(): void {
    try {
      this.#foldPending();
      this.#groupCommitFailed = false;
    } catch {
      // Kept pending (and journaled); the next call on this database folds again and reports the failure.
      this.#groupCommitFailed = true;
    }
  }

  #foldPending(): void {
    const journal = this.journal;
    // Never inside a caller's transaction: its rollback would take the entries with it.
    if (journal === undefined || journal.pending.length === 0 || !this.db.open || this.db.inTransaction)
      return;
    const batch = journal.pending;
    this.#foldTransaction ??= this.db.transaction((batch: readonly PendingAppend[]) =>
      insertBatch(this, batch),
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
    recordRefusals(refusals);
  }
}
