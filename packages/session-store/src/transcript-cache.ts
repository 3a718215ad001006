// The process-wide transcript read cache. Owns: per (database file, session) the tree's shape in append order
// (seq, id, parentId and type of every entry seen so far) and the parsed entries read so far, deep-frozen so no caller
// can corrupt what the next caller gets; a least-recently-used bound on the bytes held. Does not own: reading
// SQLite (transcript.ts fills and refreshes it) or deciding what is on a branch.
//
// Why it is sound: transcript entries are immutable once written (append-only, stored verbatim, never
// updated or deleted by the store), and SQLite gives every new row a seq larger than any committed row, so a
// cached session only ever needs the rows with a larger seq than the last one it saw. A database is named by
// its path and the random identity its migration 4 wrote, so a file replaced at the same path starts cold.
// A row whose body turns out damaged stays where it is (transcript-quarantine.ts lists it elsewhere), so the
// append-only shape holds; the cache only remembers to skip it.
import type { TranscriptEntry } from "./transcript-types.ts";

/** What a cached session costs besides its entries' JSON: ids, parents, seqs and map slots, per entry. */
const SHAPE_BYTES_PER_ENTRY = 96;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** One session's tree shape (parallel arrays in append order) and the entries parsed so far. */
export class CachedSession {
  readonly key: string;
  /** False until the first full read of the session's shape. */
  loaded = false;
  /**
   * The highest seq of the whole table (every session) when this session was last read: every row of this
   * session up to it is known, so the next read looks only at rows after it. A session's own last seq would
   * do too, but for a new or quiet session it is far behind (0 for an empty one), and the read would scan
   * every row other sessions appended since.
   */
  scannedSeq = 0;
  readonly seqs: number[] = [];
  readonly ids: string[] = [];
  readonly parentIds: (string | null)[] = [];
  /**
   * Every entry's `type` column: where the model context starts (the latest compaction on a branch) and the
   * latest model or thinking-level change are found without parsing a body (transcript-context.ts).
   */
  readonly types: string[] = [];
  readonly positionById = new Map<string, number>();
  readonly entries: (TranscriptEntry | undefined)[] = [];
  /** Stored JSON of entries this process appended, by position, until a read parses them. */
  readonly unparsedBodies = new Map<number, string>();
  /**
   * Positions of rows whose stored body was found damaged and set aside (transcript-quarantine.ts): every
   * read skips them, and a branch stops before them. Never parsed again while this session stays cached.
   */
  readonly quarantined = new Set<number>();
  /**
   * The connection that last proved this session current, and its `PRAGMA data_version` then: while that
   * connection's data_version is unchanged no other connection has committed anything, so what this process
   * appended since (recorded by the appender) is all there is and a read needs no query. Undefined: not proven.
   */
  verifiedBy: object | undefined;
  verifiedVersion = -1;
  /** Approximate bytes held: the JSON length of parsed entries plus a fixed cost per known entry. */
  weight = 0;

  constructor(key: string) {
    this.key = key;
  }

  get lastSeq(): number {
    return this.seqs[this.seqs.length - 1] ?? 0;
  }

  /** Records a row; false for one already known (seqs only grow, so an older seq was seen before). */
  addShape(seq: number, id: string, parentId: string | null, type: string): boolean {
    if (seq <= this.lastSeq) return false;
    if (seq > this.scannedSeq) this.scannedSeq = seq;
    this.positionById.set(id, this.seqs.length);
    this.seqs.push(seq);
    this.ids.push(id);
    this.parentIds.push(parentId);
    this.types.push(type);
    this.entries.push(undefined);
    this.weight += SHAPE_BYTES_PER_ENTRY + id.length;
    return true;
  }

  setEntry(position: number, entry: TranscriptEntry, jsonLength: number): void {
    if (this.entries[position] !== undefined) return;
    this.entries[position] = entry;
    // an unparsed body was already counted at its length
    if (this.unparsedBodies.delete(position)) return;
    this.weight += jsonLength;
  }

  /** Keeps the stored JSON of an entry this process appended, parsed on its first read. */
  setUnparsedBody(position: number, body: string): void {
    if (this.entries[position] !== undefined || this.unparsedBodies.has(position)) return;
    this.unparsedBodies.set(position, body);
    this.weight += body.length;
  }
}

/** A least-recently-used set of cached sessions, bounded by their total weight. */
export class TranscriptCache {
  #maxBytes: number;
  #totalBytes = 0;
  readonly #sessions = new Map<string, CachedSession>();
  readonly #weights = new Map<string, number>();

  constructor(maxBytes: number = DEFAULT_MAX_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** The cached session (marked most recently used), or a new empty one. */
  session(key: string): CachedSession {
    const found = this.#sessions.get(key);
    if (found !== undefined) {
      this.#sessions.delete(key);
      this.#sessions.set(key, found);
      return found;
    }
    const created = new CachedSession(key);
    this.#sessions.set(key, created);
    this.#weights.set(key, 0);
    return created;
  }

  /** The cached session if there is one, without marking it used or creating it. */
  find(key: string): CachedSession | undefined {
    return this.#sessions.get(key);
  }

  /** Re-counts a session after it grew and evicts the least recently used sessions over the bound. */
  settle(session: CachedSession): void {
    if (this.#sessions.get(session.key) !== session) return;
    this.#totalBytes += session.weight - (this.#weights.get(session.key) ?? 0);
    this.#weights.set(session.key, session.weight);
    this.#evictOverBound();
  }

  clear(): void {
    this.#sessions.clear();
    this.#weights.clear();
    this.#totalBytes = 0;
  }

  configure(maxBytes: number): void {
    if (!Number.isFinite(maxBytes) || maxBytes < 0) {
      throw new RangeError(`transcript cache size must be a non-negative number of bytes, got ${maxBytes}`);
    }
    this.#maxBytes = maxBytes;
    this.#evictOverBound();
  }

  get stats(): { readonly sessions: number; readonly bytes: number; readonly maxBytes: number } {
    return { sessions: this.#sessions.size, bytes: this.#totalBytes, maxBytes: this.#maxBytes };
  }

  #evictOverBound(): void {
    for (const key of this.#sessions.keys()) {
      if (this.#totalBytes <= this.#maxBytes) break;
      this.#sessions.delete(key);
      this.#totalBytes -= this.#weights.get(key) ?? 0;
      this.#weights.delete(key);
    }
  }
}

/** The cache every SQLite transcript in this process reads through. */
export const transcriptCache: TranscriptCache = new TranscriptCache();

/**
 * Sets the bound of the process-wide transcript read cache, in bytes of entry JSON (default 64 MiB). `0`
 * disables caching: every read parses from SQLite.
 */
export function configureTranscriptCache(options: { readonly maxBytes: number }): void {
  transcriptCache.configure(options.maxBytes);
}

/** Empties the process-wide transcript read cache (the next read of every session is cold). */
export function clearTranscriptCache(): void {
  transcriptCache.clear();
}

/**
 * Freezes a freshly parsed JSON value and everything inside it (no cycles, nothing frozen yet). Loops
 * instead of `Object.values`, which allocates an array per object and doubled the cost of a cold read.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") freezeTree(value);
  return value;
}

function freezeTree(value: object): void {
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const inner: unknown = value[index];
      if (inner !== null && typeof inner === "object") freezeTree(inner);
    }
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const inner = record[key];
    if (inner !== null && typeof inner === "object") freezeTree(inner);
  }
}
