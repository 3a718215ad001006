// A session's count and leaf as one look at SQLite: what a warm pi binding asks before each turn (is the store
// still exactly what I hold?). Owns: the leaf row kept from the last look with what proves it current (this
// connection's leaf writes and `data_version`), and the count and leaf reads when the session is not in this
// process's read cache. Does not own: folding the journal first (the handle does) or the read cache
// (transcript-reads.ts, transcript-cache.ts).
import { transcriptCache } from "./transcript-cache.ts";
import { countWithoutShape } from "./transcript-context-start.ts";
import { leafOf, type SessionReads } from "./transcript-reads.ts";
import type { TranscriptStatements } from "./transcript-statements.ts";

/** A session's entry count (rows set aside not counted) and its leaf. */
export interface SyncState {
  readonly count: number;
  readonly leafId: string | null;
}

/** The session's leaf: the leaf row first, then the shape (whatever the row names was committed before). */
export function readLeafId(
  statements: TranscriptStatements,
  reads: SessionReads,
  sessionId: string,
): string | null {
  const row = statements.selectLeaf.get(sessionId);
  return leafOf(reads.shape().session, row?.leaf_id ?? null, row?.leaf_seq ?? null);
}

/**
 * The session's entry count. A session not in the read cache: counted by SQLite (an index-only count) rather
 * than by reading its shape, when it has no rows set aside (those are not counted; the shape knows them).
 */
export function readCount(
  statements: TranscriptStatements,
  reads: SessionReads,
  sessionId: string,
  cacheKey: string,
): number {
  if (transcriptCache.find(cacheKey)?.loaded !== true) {
    const counted = countWithoutShape(statements, sessionId);
    if (counted !== undefined) return counted;
  }
  const session = reads.shape().session;
  return session.seqs.length - session.quarantined.size;
}

/** One session handle's `syncState()` (see the module header); the caller folds first. */
export class SessionSyncState {
  readonly #statements: TranscriptStatements;
  readonly #reads: SessionReads;
  readonly #sessionId: string;
  readonly #cacheKey: string;
  /**
   * The session's leaf row as last read, with what proves it unchanged since: this connection's leaf writes
   * (`leafWrites`) and `data_version` (other connections' commits) when it was read.
   */
  #leafRow: { leafId: string | null; leafSeq: number | null; writes: number; version: number } | undefined;

  constructor(statements: TranscriptStatements, reads: SessionReads, sessionId: string, cacheKey: string) {
    this.#statements = statements;
    this.#reads = reads;
    this.#sessionId = sessionId;
    this.#cacheKey = cacheKey;
  }

  /**
   * `count()` and `getLeafId()` together, as one look at SQLite when this process holds the session in its
   * read cache: one `data_version` read proves both the cached shape and the leaf row read at the last call
   * current (no other connection committed since, and this connection moved no leaf); otherwise the rows
   * are read as those two calls read them.
   */
  read(): SyncState {
    const statements = this.#statements;
    if (transcriptCache.find(this.#cacheKey)?.loaded !== true) {
      return {
        count: readCount(statements, this.#reads, this.#sessionId, this.#cacheKey),
        leafId: readLeafId(statements, this.#reads, this.#sessionId),
      };
    }
    // Read before the leaf row and the shape: a commit after it changes it again, and the next call reads.
    const version = statements.dataVersion.get() ?? -1;
    let row = this.#leafRow;
    if (row === undefined || row.version !== version || row.writes !== statements.leafWrites) {
      const writes = statements.leafWrites;
      const stored = statements.selectLeaf.get(this.#sessionId);
      row = { leafId: stored?.leaf_id ?? null, leafSeq: stored?.leaf_seq ?? null, writes, version };
      this.#leafRow = row;
    }
    const session = this.#reads.shape(version).session;
    return {
      count: session.seqs.length - session.quarantined.size,
      leafId: leafOf(session, row.leafId, row.leafSeq),
    };
  }
}
