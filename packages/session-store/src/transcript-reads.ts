// The read side of a SQLite transcript: one session in the process-wide read cache (transcript-cache.ts).
// Owns: bringing the cached shape up to date (the first read's range scan or index read, then only the rows
// appended since), reading and parsing the bodies a caller asks for (runs of nearby rows in one range scan,
// the rest by seq), checking each parsed body against its row (transcript-quarantine.ts sets a damaged one
// aside and reports it once), adding this process's own commits to the cache without reading them back, and
// the derived leaf. Does not own: writing (transcript-handle.ts, transcript-statements.ts) or the cache's
// bounds (transcript-cache.ts).
import { SessionStoreError } from "./errors.ts";
import { type CachedSession, deepFreeze, transcriptCache } from "./transcript-cache.ts";
import {
  type DamagedRow,
  parseStoredEntry,
  quarantinedFailure,
  quarantineRows,
} from "./transcript-quarantine.ts";
import type { TranscriptStatements } from "./transcript-statements.ts";
import type { TranscriptEntry } from "./transcript-types.ts";

/** A cached session after a refresh, with the bodies of the rows that refresh read (by position). */
export interface Shape {
  readonly session: CachedSession;
  readonly bodies: readonly (string | undefined)[];
}

/** A damaged row and where it is in its cached session. */
interface DamagedPosition extends DamagedRow {
  readonly position: number;
}

/** One session's reads through the cache. */
export class SessionReads {
  readonly #statements: TranscriptStatements;
  readonly #sessionId: string;
  readonly #cacheKey: string;
  /** `agentId/sessionId`, for messages. */
  readonly #label: string;

  constructor(statements: TranscriptStatements, agentId: string, sessionId: string, cacheKey: string) {
    this.#statements = statements;
    this.#sessionId = sessionId;
    this.#cacheKey = cacheKey;
    this.#label = `${agentId}/${sessionId}`;
  }

  /**
   * This session in the read cache, brought up to date with what was appended since it was last read. The
   * bodies of new rows read on the way come back by position, so parsing them needs no second query.
   * `dataVersion`: the connection's `PRAGMA data_version` if the caller read it just before.
   */
  shape(dataVersion?: number): Shape {
    const session = transcriptCache.session(this.#cacheKey);
    const statements = this.#statements;
    // Proven current by this connection and nothing committed by another one since: no query needed. A caller
    // that has just read `data_version` passes it (read before anything it read since).
    const version = dataVersion ?? statements.dataVersion.get() ?? -1;
    if (session.loaded && session.verifiedBy === statements && version === session.verifiedVersion)
      return { session, bodies: NO_BODIES };
    const bodies: string[] = [];
    if (!session.loaded) this.#loadShape(session);
    // New rows since the last read come with their bodies: they are few and usually on the active branch.
    const rows = this.#statements.selectRowsAfter.all(session.scannedSeq, this.#sessionId);
    const watermark = takeWatermark(rows);
    if (rows.length > 1) rows.sort(bySeq);
    for (const [seq, id, parentId, body, type] of rows) {
      if (session.addShape(seq ?? 0, id ?? "", parentId, type ?? "") && body !== null)
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
    const span = this.#statements.selectSpan.get(this.#sessionId);
    const [first, last, count, tableMax] = span ?? [null, null, 0, null];
    if (first !== null && last !== null && count * 2 >= last - first + 1) {
      // Every row appended after that snapshot has a seq above its table maximum (SQLite never reuses a
      // rowid below the maximum, and entries are never deleted), so [first, last] holds exactly this
      // session's rows up to `tableMax`, and the refresh that follows picks up the rest.
      for (const [seq, id, parentId, type] of this.#statements.selectRangeShape.all(
        first,
        last,
        this.#sessionId,
      )) {
        session.addShape(seq, id, parentId, type);
      }
      session.scannedSeq = Math.max(session.scannedSeq, tableMax ?? 0);
    } else {
      const rows = this.#statements.selectShape.all(this.#sessionId);
      const watermark = takeWatermark(rows);
      rows.sort(bySeq);
      for (const [seq, id, parentId, type] of rows)
        session.addShape(seq ?? 0, id ?? "", parentId, type ?? "");
      session.scannedSeq = Math.max(session.scannedSeq, watermark);
    }
    session.loaded = true;
  }

  /**
   * The entries at these positions, parsing (and caching, frozen) those not parsed yet. Rows set aside as
   * damaged are skipped (`skip`), or end the list (`cut`: a branch, root first, stops before its first
   * damaged entry). A damaged row found here is set aside (transcript-quarantine.ts) and, the first time any
   * reader finds it, reported by throwing its `StorageFailure`.
   */
  entriesAt(
    { session, bodies }: Shape,
    positions: readonly number[],
    damagedRows: "skip" | "cut" = "skip",
  ): TranscriptEntry[] {
    const missing: number[] = [];
    const damaged: DamagedPosition[] = [];
    let parsed = false;
    for (const position of positions) {
      if (session.entries[position] !== undefined || session.quarantined.has(position)) continue;
      const body = bodies[position] ?? session.unparsedBodies.get(position);
      if (body === undefined) {
        missing.push(session.seqs[position] ?? 0);
      } else {
        parseInto(session, position, body, damaged);
        parsed = true;
      }
    }
    if (missing.length > 0) {
      this.#readBodies(
        session,
        missing.sort((a, b) => a - b),
        damaged,
      );
      parsed = true;
    }
    if (parsed) transcriptCache.settle(session);
    if (damaged.length > 0) this.#setAside(session, damaged);
    const entries: TranscriptEntry[] = [];
    // Almost always empty: then no lookup per entry on the read path.
    const setAside = session.quarantined.size > 0 ? session.quarantined : undefined;
    for (const position of positions) {
      if (setAside?.has(position)) {
        if (damagedRows === "cut") break;
        continue;
      }
      const entry = session.entries[position];
      if (entry === undefined) {
        throw new SessionStoreError(
          `transcript ${this.#label}: entry ${session.ids[position]} vanished from the database`,
        );
      }
      entries.push(entry);
    }
    return entries;
  }

  /** Sets damaged rows aside, marks them skipped in the cache, and reports them if no reader had yet. */
  #setAside(session: CachedSession, damaged: readonly DamagedPosition[]): void {
    damaged = [...damaged].sort((a, b) => a.seq - b.seq);
    const outcome = quarantineRows(this.#statements, this.#sessionId, damaged);
    for (const row of damaged) session.quarantined.add(row.position);
    transcriptCache.settle(session);
    if (outcome.newlyQuarantined > 0)
      throw quarantinedFailure(this.#statements.path, this.#sessionId, damaged, outcome);
  }

  /**
   * Reads, parses and caches the entries at these seqs (ascending): runs of seqs that lie close together
   * (a branch is mostly a few long runs) in one rowid range scan each, the rest by one lookup per seq.
   */
  #readBodies(session: CachedSession, seqs: readonly number[], damaged: DamagedPosition[]): void {
    const store = (seq: number, body: string) => {
      const position = positionOfSeq(session, seq);
      if (position === undefined || session.entries[position] !== undefined) return;
      parseInto(session, position, body, damaged);
    };
    const scattered: number[] = [];
    let start = 0;
    while (start < seqs.length) {
      let end = start;
      while (end + 1 < seqs.length && (seqs[end + 1] ?? 0) - (seqs[end] ?? 0) <= RUN_GAP) end++;
      if (end - start + 1 >= RUN_MIN) {
        const wanted = new Set(seqs.slice(start, end + 1));
        const rows = this.#statements.selectRangeBodies.all(
          seqs[start] ?? 0,
          seqs[end] ?? 0,
          this.#sessionId,
        );
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
}

/** Parses the body at `position` into the cache, or notes the row as damaged. */
function parseInto(session: CachedSession, position: number, body: string, damaged: DamagedPosition[]): void {
  const id = session.ids[position] ?? "";
  const entry = parseStoredEntry(body, id, session.parentIds[position] ?? null);
  if (typeof entry === "string") {
    damaged.push({ position, seq: session.seqs[position] ?? 0, id, problem: entry });
    return;
  }
  session.setEntry(position, deepFreeze(entry), body.length);
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
export function ownAppendsTarget(
  statements: TranscriptStatements,
  cacheKey: string,
): CachedSession | undefined {
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
export function recordOwnAppend(
  session: CachedSession,
  seq: number,
  entry: TranscriptEntry,
  body: string,
): void {
  if (session.addShape(seq, entry.id, entry.parentId, entry.type)) {
    session.setUnparsedBody(session.seqs.length - 1, body);
    transcriptCache.settle(session);
  }
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
export function leafOf(
  session: CachedSession,
  movedTo: string | null,
  movedAtSeq: number | null,
): string | null {
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
