// The process-wide transcript read cache. Owns: per (database file, session) the tree's shape in append order
// (seq, id, parentId and type of every entry seen so far) and the parsed entries read so far, deep-frozen so no
// caller can corrupt what the next caller gets; each session's size as the entries of its model context (see
// `CachedSession.contextEntries`); a least-recently-used bound on the total of those sizes. Does not own:
// reading SQLite (transcript.ts fills and refreshes it) or deciding what is on a branch for a read.
//
// Why it is sound: transcript entries are immutable once written (append-only, stored verbatim, never
// updated or deleted by the store), and SQLite gives every new row a seq larger than any committed row, so a
// cached session only ever needs the rows with a larger seq than the last one it saw. A database is named by
// its path and the random identity its migration 4 wrote, so a file replaced at the same path starts cold.
// A row whose body turns out damaged stays where it is (transcript-quarantine.ts lists it elsewhere), so the
// append-only shape holds; the cache only remembers to skip it.
//
// Why sized by the context: a turn reads its model context — from the latest compaction's kept entry on the
// active branch to the leaf — and nothing before it; a long session that compacts costs a warm turn what its
// context costs. Counting raw entries (or their bytes) made a 10k-entry session that keeps 400 weigh as 10k,
// and ten of those filled the cache. History entries are known by their shape only (a few small columns, no
// body), so they count as a fraction of a context entry.
import type { TranscriptEntry } from "./transcript-types.ts";

/**
 * Entries of a session outside its model context that weigh as one context entry: such an entry is held as its
 * shape (seq, id, parent, type, a map slot: ≈ 100 bytes) against a parsed context entry's object (≈ 1–2 KB).
 */
const HISTORY_ENTRIES_PER_CONTEXT_ENTRY = 16;
/** Entries in context across every cached session (≈ 100 MB at 1 KB an entry). */
const DEFAULT_MAX_CONTEXT_ENTRIES = 100_000;

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
  /** Per position: how deep the entry is on its branch (a root is 1), so a context is counted by subtraction. */
  readonly #depths: number[] = [];
  /** Per position: the latest compaction on the branch ending there (its position), -1 for none. */
  readonly #compactions: number[] = [];
  /** Per compaction position whose body was read: the depth its context starts at (found once). */
  readonly #keptDepths = new Map<number, number>();
  readonly entries: (TranscriptEntry | undefined)[] = [];
  /**
   * Stored JSON of entries this process appended, by position, until a read parses them. Not filled any more
   * (see `setUnparsedBody`): a read of such an entry reads its body from SQLite.
   */
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
    const position = this.seqs.length;
    const parent = parentId === null ? undefined : this.positionById.get(parentId);
    this.positionById.set(id, position);
    this.seqs.push(seq);
    this.ids.push(id);
    this.parentIds.push(parentId);
    this.types.push(type);
    this.entries.push(undefined);
    this.#depths.push(parent === undefined ? 1 : (this.#depths[parent] ?? 0) + 1);
    this.#compactions.push(
      type === "compaction" ? position : parent === undefined ? -1 : (this.#compactions[parent] ?? -1),
    );
    return true;
  }

  setEntry(position: number, entry: TranscriptEntry, _jsonLength: number): void {
    if (this.entries[position] !== undefined) return;
    this.entries[position] = entry;
    this.unparsedBodies.delete(position);
  }

  /**
   * Was: keep the stored JSON of an entry this process appended until a read parses it. Not kept: the
   * process that appended it holds the entry already (pi's session manager over the binding), and an idle
   * warm session held every entry of it twice (measured: 13–20 KiB of a 2-turn session's ≈ 90). A later read
   * of the entry reads its body from SQLite (one range scan for a run of them).
   */
  setUnparsedBody(_position: number, _body: string): void {}

  /**
   * The entries of the model context of the branch ending at the last appended entry: from the first entry
   * the latest compaction on that branch keeps (the compaction itself when its body was not read yet or the
   * kept entry is not on the branch, pi's `buildContextEntries` rule) to that entry; the whole branch without
   * a compaction. The leaf is the last appended entry, as it is unless a caller moved it (a moved leaf is
   * counted as the branch the last append made: an approximation for sizing only, never for reading).
   */
  get contextEntries(): number {
    const leaf = this.seqs.length - 1;
    if (leaf < 0) return 0;
    const depth = this.#depths[leaf] ?? 1;
    const compaction = this.#compactions[leaf] ?? -1;
    if (compaction < 0) return depth;
    return depth - this.#keptDepth(compaction) + 1;
  }

  /** Entries known by their shape only: the ones outside the context. */
  get historyEntries(): number {
    return Math.max(0, this.seqs.length - this.quarantined.size - this.contextEntries);
  }

  /** What the session weighs against the cache's bound, in context entries. */
  get weight(): number {
    return this.contextEntries + Math.ceil(this.historyEntries / HISTORY_ENTRIES_PER_CONTEXT_ENTRY);
  }

  /** The depth where the context of `compaction` starts: its kept entry's when known and on its branch. */
  #keptDepth(compaction: number): number {
    const known = this.#keptDepths.get(compaction);
    if (known !== undefined) return known;
    const compactionDepth = this.#depths[compaction] ?? 1;
    const entry = this.entries[compaction] as { firstKeptEntryId?: unknown } | undefined;
    // Not read yet: counted from the compaction, and looked at again once it is.
    if (entry === undefined) return compactionDepth;
    const depth = this.#startDepth(compaction, compactionDepth, entry.firstKeptEntryId);
    this.#keptDepths.set(compaction, depth);
    return depth;
  }

  #startDepth(compaction: number, compactionDepth: number, firstKept: unknown): number {
    const kept = typeof firstKept === "string" ? this.positionById.get(firstKept) : undefined;
    if (kept === undefined) return compactionDepth;
    const keptDepth = this.#depths[kept] ?? compactionDepth;
    if (keptDepth >= compactionDepth) return compactionDepth;
    // On the branch: walking up from the compaction reaches it after exactly the difference in depth.
    let at: number | undefined = compaction;
    for (let steps = compactionDepth - keptDepth; steps > 0 && at !== undefined; steps--) {
      const parentId: string | null = this.parentIds[at] ?? null;
      at = parentId === null ? undefined : this.positionById.get(parentId);
    }
    return at === kept ? keptDepth : compactionDepth;
  }
}

/** A least-recently-used set of cached sessions, bounded by the entries of their model contexts. */
export class TranscriptCache {
  #maxContextEntries: number;
  #totalWeight = 0;
  readonly #sessions = new Map<string, CachedSession>();
  readonly #weights = new Map<string, number>();

  constructor(maxContextEntries: number = DEFAULT_MAX_CONTEXT_ENTRIES) {
    this.#maxContextEntries = maxContextEntries;
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
    const weight = session.weight;
    if (weight > this.#maxContextEntries) {
      // It cannot fit on its own: it goes, not every other session before it.
      this.#drop(session.key);
      return;
    }
    this.#totalWeight += weight - (this.#weights.get(session.key) ?? 0);
    this.#weights.set(session.key, weight);
    this.#evictOverBound();
  }

  clear(): void {
    this.#sessions.clear();
    this.#weights.clear();
    this.#totalWeight = 0;
  }

  configure(maxContextEntries: number): void {
    if (!Number.isFinite(maxContextEntries) || maxContextEntries < 0) {
      throw new RangeError(
        `transcript cache size must be a non-negative number of context entries, got ${maxContextEntries}`,
      );
    }
    this.#maxContextEntries = maxContextEntries;
    this.#evictOverBound();
  }

  /** Sessions cached, their weight in context entries (see `CachedSession.weight`) and the bound. */
  get stats(): {
    readonly sessions: number;
    readonly contextEntries: number;
    readonly maxContextEntries: number;
  } {
    return {
      sessions: this.#sessions.size,
      contextEntries: this.#totalWeight,
      maxContextEntries: this.#maxContextEntries,
    };
  }

  #evictOverBound(): void {
    for (const key of this.#sessions.keys()) {
      if (this.#totalWeight <= this.#maxContextEntries) break;
      this.#drop(key);
    }
  }

  #drop(key: string): void {
    this.#sessions.delete(key);
    this.#totalWeight -= this.#weights.get(key) ?? 0;
    this.#weights.delete(key);
  }
}

/** The cache every SQLite transcript in this process reads through. */
export const transcriptCache: TranscriptCache = new TranscriptCache();

/**
 * Sets the bound of the process-wide transcript read cache, in entries of the cached sessions' model contexts
 * (default 100,000; an entry outside a context weighs a sixteenth, see `CachedSession.weight`). `0` disables
 * caching: every read parses from SQLite.
 */
export function configureTranscriptCache(options: { readonly maxContextEntries: number }): void {
  transcriptCache.configure(options.maxContextEntries);
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
