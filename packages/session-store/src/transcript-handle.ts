// One session's SQLite transcript handle. Owns: the `SqliteTranscript` calls — appends and `appendMany`
// (journaled when the read cache proves them safe, transcript-journaled-appends.ts; else one autocommit
// statement, with a write transaction for the slow path, a batch and `appendAtLeaf`), leaf moves and the reads
// (through transcript-reads.ts; `syncState` through transcript-sync-state.ts) — and turning what they throw on
// a full disk, a read-only or a damaged file into a `StorageFailure` naming the agent database.
// Does not own: the statements, the journal's fold or replay (transcript-statements.ts, transcript-fold.ts,
// transcript-replay.ts), the read cache (transcript-reads.ts, transcript-cache.ts) or damaged rows
// (transcript-quarantine.ts).
import { TranscriptConflictError } from "./errors.ts";
import { toStorageFailure } from "./storage-errors.ts";
import { transcriptCache } from "./transcript-cache.ts";
import { branchShape, omittedOnDemand, readContext, type TranscriptContext } from "./transcript-context.ts";
import { readContextFromStart, recordContextFacts } from "./transcript-context-start.ts";
import { parseHeader } from "./transcript-header.ts";
import { JournaledAppends } from "./transcript-journaled-appends.ts";
import { listQuarantined } from "./transcript-quarantine.ts";
import { leafOf, ownAppendsTarget, recordOwnAppend, SessionReads, type Shape } from "./transcript-reads.ts";
import type { TranscriptStatements } from "./transcript-statements.ts";
import { readCount, readLeafId, SessionSyncState, type SyncState } from "./transcript-sync-state.ts";
import {
  assertEntryShape,
  type QuarantinedRow,
  type SqliteTranscript,
  type TranscriptEntry,
  type TranscriptEntryDraft,
  type TranscriptHeader,
} from "./transcript-types.ts";

/**
 * Entries come back deep-frozen and shared: the process-wide read cache (transcript-cache.ts) hands the same
 * objects to every reader, so a repeated read costs a look at what was appended since, not a parse.
 */
export class SqliteTranscriptHandle implements SqliteTranscript {
  readonly agentId: string;
  readonly sessionId: string;
  readonly #statements: TranscriptStatements;
  readonly #cacheKey: string;
  readonly #reads: SessionReads;
  #header: TranscriptHeader | undefined;
  // Write transactions, made on first use: most handles live for one turn and only ever take the
  // one-statement fast path of `append`, and making a better-sqlite3 transaction costs more than that path.
  #appendSlowPath: ((entry: TranscriptEntry, body: string) => number) | undefined;
  #appendMany: ((entries: readonly TranscriptEntry[], bodies: string[], seqs: number[]) => void) | undefined;
  #appendAtLeaf: ((draft: TranscriptEntryDraft) => [TranscriptEntry, string, number]) | undefined;
  /** The last entry this handle committed directly: the usual parent of its next direct append. */
  #lastAppendedId: string | undefined;
  readonly #journaled: JournaledAppends;
  readonly #syncState: SessionSyncState;

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
    this.#reads = new SessionReads(statements, agentId, sessionId, this.#cacheKey);
    this.#journaled = new JournaledAppends(statements, sessionId, this.#cacheKey, this.#reads);
    this.#syncState = new SessionSyncState(statements, this.#reads, sessionId, this.#cacheKey);
  }

  /** What a call threw, as a `StorageFailure` naming this database when the file is at fault. */
  #failure(error: unknown): unknown {
    return toStorageFailure(error, this.#statements.path) ?? error;
  }

  getHeader(): TranscriptHeader | undefined {
    if (this.#header === undefined) {
      try {
        const row = this.#statements.selectHeader.get(this.sessionId);
        this.#header =
          row === undefined ? undefined : parseHeader(this.#statements, this.sessionId, row.header);
      } catch (error) {
        throw this.#failure(error);
      }
    }
    return this.#header;
  }

  append(entry: TranscriptEntry): void {
    try {
      this.#append(entry);
    } catch (error) {
      throw this.#failure(error);
    }
    if (entry.type === "compaction") this.#noteContextStart(entry);
  }

  /**
   * After a compaction is appended: records what a first read from its kept entry needs from the history
   * (transcript-context-start.ts), from this process's read cache when it holds the whole branch there;
   * otherwise the first read that reads the history records it. Best effort, and a fact that never changes:
   * it needs no transaction with the append.
   */
  #noteContextStart(compaction: TranscriptEntry): void {
    const keptId = compaction.firstKeptEntryId;
    if (typeof keptId !== "string" || transcriptCache.find(this.#cacheKey)?.loaded !== true) return;
    // The kept entry may still be in the append journal: folded now (quietly: a failure or a refusal stays
    // for the next call to report), so the cache holds it. A compaction is rare; its turn is a long one.
    if (transcriptCache.find(this.#cacheKey)?.positionById.has(keptId) !== true) this.#statements.foldBurst();
    const session = transcriptCache.find(this.#cacheKey);
    const position = session?.positionById.get(keptId);
    if (session === undefined || position === undefined) return;
    recordContextFacts(
      this.#statements.db,
      this.sessionId,
      keptId,
      branchShape({ session, bodies: [] }, session.parentIds[position] ?? null),
    );
  }

  #append(entry: TranscriptEntry): void {
    assertEntryShape(entry);
    const body = JSON.stringify(entry);
    if (this.#journaled.append(entry, body)) return;
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

  appendMany(entries: readonly TranscriptEntry[]): void {
    try {
      this.#appendManyEntries(entries);
    } catch (error) {
      throw this.#failure(error);
    }
    for (const entry of entries) if (entry.type === "compaction") this.#noteContextStart(entry);
  }

  #appendManyEntries(entries: readonly TranscriptEntry[]): void {
    for (const entry of entries) assertEntryShape(entry);
    if (entries.length > 0 && this.#journaled.appendMany(entries)) return;
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
    let appended: TranscriptEntry;
    try {
      appended = this.#appendDraftAtLeaf(draft);
    } catch (error) {
      throw this.#failure(error);
    }
    if (appended.type === "compaction") this.#noteContextStart(appended);
    return appended;
  }

  #appendDraftAtLeaf(draft: TranscriptEntryDraft): TranscriptEntry {
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
    try {
      this.#setLeaf(id);
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #setLeaf(id: string | null): void {
    this.#statements.fold(this.#cacheKey);
    if (id !== null && this.#statements.entryExists.get(this.sessionId, id) === undefined) {
      throw new TranscriptConflictError(`cannot move the leaf of session ${this.sessionId}: no entry ${id}`);
    }
    this.#statements.updateLeaf.run(id, new Date().toISOString(), this.sessionId);
    this.#statements.noteOwnCommit();
  }

  getLeafId(): string | null {
    try {
      return this.#getLeafId();
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #getLeafId(): string | null {
    this.#statements.foldSession(this.#cacheKey);
    return this.#leafId();
  }

  #leafId(): string | null {
    return readLeafId(this.#statements, this.#reads, this.sessionId);
  }

  /**
   * `count()` and `getLeafId()` together, as one look at SQLite when this process holds the session in its
   * read cache: one `data_version` read proves both the cached shape and the leaf row read at the last call
   * current (no other connection committed since, and this connection moved no leaf); otherwise the rows
   * are read as those two calls read them. What a warm binding asks before each turn (is the store still
   * exactly what I hold?).
   */
  syncState(): SyncState {
    try {
      return this.#readSyncState();
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #readSyncState(): SyncState {
    this.#statements.foldSession(this.#cacheKey);
    return this.#syncState.read();
  }

  getEntry(id: string): TranscriptEntry | undefined {
    try {
      return this.#getEntry(id);
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #getEntry(id: string): TranscriptEntry | undefined {
    this.#statements.fold(this.#cacheKey);
    const shape = this.#reads.shape();
    const position = shape.session.positionById.get(id);
    return position === undefined ? undefined : this.#reads.entriesAt(shape, [position])[0];
  }

  /** An unknown `leafId` (or a null leaf) gives an empty branch, as pi's `getBranch` does. */
  getBranch(leafId?: string | null): TranscriptEntry[] {
    try {
      return this.#getBranch(leafId);
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #getBranch(leafId?: string | null): TranscriptEntry[] {
    this.#statements.fold(this.#cacheKey);
    let shape: Shape;
    let wanted: string | null;
    if (leafId === undefined) {
      const row = this.#statements.selectLeaf.get(this.sessionId);
      shape = this.#reads.shape();
      wanted = leafOf(shape.session, row?.leaf_id ?? null, row?.leaf_seq ?? null);
    } else {
      shape = this.#reads.shape();
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
    // A branch stops before its first damaged entry: it goes on from its last good ancestor (see
    // transcript-quarantine.ts for why it does not skip over it).
    const cut =
      session.quarantined.size === 0 ? -1 : positions.findIndex((at) => session.quarantined.has(at));
    return this.#reads.entriesAt(shape, cut < 0 ? positions : positions.slice(0, cut), "cut");
  }

  /**
   * The active branch split where the model context starts (transcript-context.ts). A session not in this
   * process's read cache is read from the latest compaction's kept entry on (transcript-context-start.ts),
   * its history's shape read only when something uses `omitted`.
   */
  readContext(): TranscriptContext | undefined {
    try {
      this.#statements.fold(this.#cacheKey);
      if (transcriptCache.find(this.#cacheKey)?.loaded !== true) {
        const fromStart = readContextFromStart(this.#statements, this.sessionId);
        if (fromStart !== undefined) {
          const historyEnd = fromStart.entries[0]?.parentId ?? null;
          return {
            leafId: fromStart.leafId,
            entries: fromStart.entries,
            // The start's ancestors never change (entries are never deleted or re-parented): read later, the
            // same as now.
            omitted: omittedOnDemand(() => {
              this.#statements.fold(this.#cacheKey);
              const omitted = branchShape(this.#reads.shape(), historyEnd);
              // What the next first read needs from this history, kept so it need not read it again.
              const startId = fromStart.entries[0]?.id;
              if (startId !== undefined)
                recordContextFacts(this.#statements.db, this.sessionId, startId, omitted);
              return omitted;
            }),
            latestBefore: fromStart.latestBefore,
          };
        }
      }
      const row = this.#statements.selectLeaf.get(this.sessionId);
      const shape = this.#reads.shape();
      return readContext(
        this.#reads,
        shape,
        leafOf(shape.session, row?.leaf_id ?? null, row?.leaf_seq ?? null),
      );
    } catch (error) {
      throw this.#failure(error);
    }
  }

  getEntries(): TranscriptEntry[] {
    try {
      return this.#getEntries();
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #getEntries(): TranscriptEntry[] {
    this.#statements.fold(this.#cacheKey);
    const shape = this.#reads.shape();
    return this.#reads.entriesAt(
      shape,
      shape.session.seqs.map((_seq, position) => position),
    );
  }

  getChildren(parentId: string | null): TranscriptEntry[] {
    try {
      return this.#getChildren(parentId);
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #getChildren(parentId: string | null): TranscriptEntry[] {
    this.#statements.fold(this.#cacheKey);
    const shape = this.#reads.shape();
    const positions: number[] = [];
    shape.session.parentIds.forEach((parent, position) => {
      if (parent === parentId) positions.push(position);
    });
    return this.#reads.entriesAt(shape, positions);
  }

  count(): number {
    try {
      return this.#count();
    } catch (error) {
      throw this.#failure(error);
    }
  }

  #count(): number {
    this.#statements.foldSession(this.#cacheKey);
    return readCount(this.#statements, this.#reads, this.sessionId, this.#cacheKey);
  }

  /**
   * True when `parentId` is null or certainly committed: the entry this handle appended last, or one in this
   * session's read cache (filled only from committed rows). Entries are never deleted, so it stays true.
   */
  #parentIsKnown(parentId: string | null): boolean {
    if (parentId === null || parentId === this.#lastAppendedId) return true;
    const session = transcriptCache.find(this.#cacheKey);
    const position = session?.positionById.get(parentId);
    // A damaged parent (set aside) is left to the insert's own check.
    return position !== undefined && session?.quarantined.has(position) === false;
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

  quarantined(): QuarantinedRow[] {
    try {
      this.#statements.fold(this.#cacheKey);
      return listQuarantined(this.#statements.db, this.sessionId);
    } catch (error) {
      throw this.#failure(error);
    }
  }
}
