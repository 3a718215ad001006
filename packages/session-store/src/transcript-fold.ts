// Folding the append journal into SQLite, beside the statements that run it: the batch insert inside the
// fold's write transaction (an entry stored identically meanwhile is kept, a conflict refused with its
// journaled descendants), the refusals a fold found (kept per session until a call reports them), the
// process's journaled stores per database, and folding them when the process exits without closing them.
// Does not own: the statements or when a fold runs (transcript-statements.ts), the journal file
// (sqlite/append-journal.ts) or the replay of a gone owner's journal (transcript-replay.ts).
import { TranscriptConflictError } from "./errors.ts";
import type { PendingAppend } from "./sqlite/append-journal.ts";
import { transcriptCache } from "./transcript-cache.ts";
import type { TranscriptStatements } from "./transcript-statements.ts";

/**
 * Per session (its cache key, which names its database), what folds refused (a conflict with what another
 * process stored meanwhile) and no call has reported yet: thrown once by the next call on that session through
 * any store of this process, and by `store.flush()`; a session with one commits directly until then.
 */
export const refusalsBySession = new Map<string, { listed: string[]; more: number }>();

/** Per database (its cache key), the statements of every store in this process that journals appends to it. */
export const journaledDatabases = new Map<string, Set<TranscriptStatements>>();
let exitHookInstalled = false;

/**
 * A process that exits without closing its stores (a CLI that returns from main) still folds and removes its
 * journals: `exit` listeners run synchronously, as better-sqlite3 does. A journal whose fold fails there stays
 * for the next open to replay.
 */
export function foldJournalsOnExit(): void {
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

export interface FoldOutcome {
  /** Per entry of the batch: its seq, or 0 when it was not inserted. */
  readonly seqs: number[];
  readonly refusals: { readonly cacheKey: string; readonly reason: string }[];
}

/**
 * Throws (once) the refusals of one session (`cacheKey`), or of every session of the database `databaseKey`
 * when `cacheKey` is undefined.
 */
export function throwRefused(databaseKey: string, cacheKey?: string): void {
  const ofThisDatabase = `${databaseKey}\u0000`;
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

/** Keeps what a fold refused, per session, for the next call on it to throw (`throwRefused`). */
export function recordRefusals(refusals: FoldOutcome["refusals"]): void {
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

/**
 * Inside the fold's write transaction: the batch in order; an entry stored identically meanwhile is kept.
 */
export function insertBatch(statements: TranscriptStatements, batch: readonly PendingAppend[]): FoldOutcome {
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
    const seq = statements.insertRow(sessionId, entry, body, parentKnown);
    seqs.push(seq);
    // Another process may have stored the same entry first: kept, as an identical repeat is.
    const reason = seq === 0 ? statements.settleUninserted(sessionId, entry) : undefined;
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
