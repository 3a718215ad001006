// A session handle's journaled appends: one entry, or a batch, written as lines of the store's append journal
// (sqlite/append-journal.ts) when the read cache proves every id new and every parent stored or journaled
// before it. Owns: that proof, the burst bookkeeping (the cache is proven current by a `data_version` query at
// a handle's first journaled append of a synchronous burst) and the session's line prefix. Does not own: the
// direct commit a refused journaled append falls back to (transcript-handle.ts), the journal file or its fold
// (sqlite/append-journal.ts, transcript-statements.ts).
import { type JournalMarker, linePrefixFor, type PendingAppend } from "./sqlite/append-journal.ts";
import { transcriptCache } from "./transcript-cache.ts";
import type { SessionReads } from "./transcript-reads.ts";
import type { TranscriptStatements } from "./transcript-statements.ts";
import type { TranscriptEntry } from "./transcript-types.ts";

/** One session handle's journaled appends (see the module header). */
export class JournaledAppends {
  readonly #statements: TranscriptStatements;
  readonly #sessionId: string;
  readonly #cacheKey: string;
  readonly #reads: SessionReads;
  /** `linePrefixFor(sessionId)`, made on the first journaled append. */
  #linePrefix: string | undefined;
  /** The journal's burst of this handle's last journaled append (see `append`). */
  #journaledInBurst = -1;

  constructor(statements: TranscriptStatements, sessionId: string, cacheKey: string, reads: SessionReads) {
    this.#statements = statements;
    this.#sessionId = sessionId;
    this.#cacheKey = cacheKey;
    this.#reads = reads;
  }

  /**
   * The journaled append: when this session's cache is current and proves the id new and the parent stored
   * (or journaled before it), one line in the journal makes the entry durable; SQLite gets it with the rest
   * of the burst (see sqlite/append-journal.ts). False: the caller commits directly instead.
   */
  append(entry: TranscriptEntry, body: string): boolean {
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
      session = this.#reads.shape().session;
      marker = { seq: session.scannedSeq, time };
    }
    const known = session.positionById;
    const parentId = entry.parentId;
    if (known.has(entry.id) || journal.isPending(key, entry.id)) return false;
    if (parentId !== null && !known.has(parentId) && !journal.isPending(key, parentId)) return false;
    this.#linePrefix ??= linePrefixFor(this.#sessionId);
    if (!journal.write({ sessionId: this.#sessionId, cacheKey: key, entry, body }, this.#linePrefix, marker))
      return false;
    this.#journaledInBurst = journal.burst;
    // The entry is durable in the journal; a fold failure or a refusal is reported by the next call.
    if (journal.full) statements.foldBurst();
    return true;
  }

  /**
   * `appendMany` through the journal: when the cache proves every entry new and every parent stored (or
   * journaled, or earlier in the batch), all the lines go out in one write — durable together, folded with
   * the rest of the group. False: the caller commits the batch in one transaction instead (nothing written).
   */
  appendMany(entries: readonly TranscriptEntry[]): boolean {
    const statements = this.#statements;
    const journal = statements.journal;
    const key = this.#cacheKey;
    if (journal === undefined || statements.hasRefusal(key) || statements.pendingInAnotherStore(key))
      return false;
    let session = this.#journaledInBurst === journal.burst ? transcriptCache.find(key) : undefined;
    let marker: JournalMarker | undefined;
    if (session === undefined || !session.loaded) {
      if (statements.db.inTransaction) return false;
      const time = new Date().toISOString();
      session = this.#reads.shape().session;
      marker = { seq: session.scannedSeq, time };
    }
    const known = session.positionById;
    const inBatch = new Set<string>();
    const appends: PendingAppend[] = [];
    for (const entry of entries) {
      const parentId = entry.parentId;
      if (known.has(entry.id) || journal.isPending(key, entry.id) || inBatch.has(entry.id)) return false;
      if (
        parentId !== null &&
        !known.has(parentId) &&
        !journal.isPending(key, parentId) &&
        !inBatch.has(parentId)
      )
        return false;
      inBatch.add(entry.id);
      appends.push({ sessionId: this.#sessionId, cacheKey: key, entry, body: JSON.stringify(entry) });
    }
    this.#linePrefix ??= linePrefixFor(this.#sessionId);
    if (!journal.writeMany(appends, this.#linePrefix, marker)) return false;
    this.#journaledInBurst = journal.burst;
    if (journal.full) statements.foldBurst();
    return true;
  }
}
