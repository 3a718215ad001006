// Where the model context of a session starts: the compaction-aware read of the active branch. Owns: finding,
// from the read cache's shape (ids, parents and types, no bodies), the latest compaction on the active branch
// and the first entry it keeps (`firstKeptEntryId`, pi's `buildContextEntries` rule); parsing only the
// branch from there to the leaf; and describing the rest of the branch (the history the compaction
// summarised) by id, parent and type, so that a reader can find the latest model or thinking-level change in
// it and parse just that entry. Does not own: the cache (transcript-cache.ts), reading bodies
// (transcript-reads.ts), or what pi makes of the entries (turn-pipeline's session manager).
//
// Why: a turn's context is the compaction plus the tail it keeps; parsing every entry of a long session
// before every first turn costs what its history costs (≈ 5 µs an entry). The shape is read anyway (one range
// scan of small columns), so the start of the context costs one walk over integers and one parsed body.
import type { SessionReads, Shape } from "./transcript-reads.ts";
import type { TranscriptEntry } from "./transcript-types.ts";

/** The active branch of a transcript, split where the model context starts. */
export interface TranscriptContext {
  /** The leaf the branch ends at (null: before the first entry). */
  readonly leafId: string | null;
  /**
   * The active branch from where the model context starts to the leaf, root side first: from the first entry
   * the latest compaction on the branch keeps (or the compaction itself), or the whole branch when it has
   * no compaction.
   */
  readonly entries: TranscriptEntry[];
  /**
   * The active branch before `entries`, root first, without bodies (read them with `getEntry`). A first read
   * through the store's mark index (transcript-context-start.ts) reads it on first use of its arrays: only
   * something that walks the whole branch pays for the history's shape.
   */
  readonly omitted: OmittedBranch;
  /**
   * The latest compaction, model change or thinking-level change on the branch before `entries`, when the
   * store knows it without reading `omitted`: the entry, null for none, undefined when it cannot tell (or
   * the type is another one, or the field is absent) — then look through `omitted`.
   */
  readonly latestBefore?: (type: string) => TranscriptEntry | null | undefined;
}

/** Entries of a branch known by id, parent and type only, root first (parallel arrays). */
export interface OmittedBranch {
  readonly ids: readonly string[];
  readonly parentIds: readonly (string | null)[];
  readonly types: readonly string[];
}

const NOTHING_OMITTED: OmittedBranch = { ids: [], parentIds: [], types: [] };

/**
 * The active branch ending at `leafId`, split at the start of the model context. Undefined when the session
 * has rows set aside as damaged (a branch then ends before its first damaged entry: the caller reads the
 * plain branch instead, which applies that rule).
 */
export function readContext(
  reads: SessionReads,
  shape: Shape,
  leafId: string | null,
): TranscriptContext | undefined {
  const session = shape.session;
  if (session.quarantined.size > 0) return undefined;
  const positions: number[] = [];
  let wanted = leafId;
  while (wanted !== null) {
    const position = session.positionById.get(wanted);
    if (position === undefined) break;
    positions.push(position);
    wanted = session.parentIds[position] ?? null;
  }
  positions.reverse();
  const start = contextStart(reads, shape, positions);
  if (start === 0)
    return { leafId, entries: reads.entriesAt(shape, positions, "cut"), omitted: NOTHING_OMITTED };
  const before = positions.slice(0, start);
  return {
    leafId,
    entries: reads.entriesAt(shape, positions.slice(start), "cut"),
    omitted: {
      ids: before.map((at) => session.ids[at] ?? ""),
      parentIds: before.map((at) => session.parentIds[at] ?? null),
      types: before.map((at) => session.types[at] ?? ""),
    },
  };
}

/** The branch ending at `leafId` (root first) by id, parent and type: what a context start omits. */
export function branchShape(shape: Shape, leafId: string | null): OmittedBranch {
  const session = shape.session;
  const ids: string[] = [];
  const parentIds: (string | null)[] = [];
  const types: string[] = [];
  let wanted = leafId;
  while (wanted !== null) {
    const position = session.positionById.get(wanted);
    if (position === undefined) break;
    ids.push(wanted);
    wanted = session.parentIds[position] ?? null;
    parentIds.push(wanted);
    types.push(session.types[position] ?? "");
  }
  return { ids: ids.reverse(), parentIds: parentIds.reverse(), types: types.reverse() };
}

/** An `OmittedBranch` whose arrays `load` makes on first use (once). */
export function omittedOnDemand(load: () => OmittedBranch): OmittedBranch {
  let loaded: OmittedBranch | undefined;
  const get = (): OmittedBranch => {
    loaded ??= load();
    return loaded;
  };
  return {
    get ids() {
      return get().ids;
    },
    get parentIds() {
      return get().parentIds;
    },
    get types() {
      return get().types;
    },
  };
}

/**
 * The index in `positions` (a branch, root first) where pi's context starts: the first entry the latest
 * compaction keeps when it is on the branch before the compaction, else the compaction; 0 without one.
 */
function contextStart(reads: SessionReads, shape: Shape, positions: readonly number[]): number {
  const session = shape.session;
  let compactionAt = -1;
  for (let index = positions.length - 1; index >= 0; index--) {
    if (session.types[positions[index] ?? -1] === "compaction") {
      compactionAt = index;
      break;
    }
  }
  if (compactionAt < 0) return 0;
  const [compaction] = reads.entriesAt(shape, [positions[compactionAt] ?? -1]);
  const firstKept = compaction?.firstKeptEntryId;
  for (let index = 0; index < compactionAt; index++) {
    if (session.ids[positions[index] ?? -1] === firstKept) return index;
  }
  return compactionAt;
}

/** What can read a transcript's context: a SQLite handle (`SqliteTranscriptHandle.readContext`). */
export interface ContextReader {
  readContext(): TranscriptContext | undefined;
}

/** Wrappers (the store's fenced transcripts) and the handle that reads for them. */
const readersOfWrappers = new WeakMap<object, ContextReader>();

/** Says that `wrapper`'s reads are `reader`'s (a fenced transcript delegates every read to its handle). */
export function registerContextReader(wrapper: object, reader: ContextReader): void {
  readersOfWrappers.set(wrapper, reader);
}

/**
 * The active branch of `transcript` split where the model context starts, when its store can read that
 * without parsing the history (SQLite); undefined otherwise (PostgreSQL, a transcript with damaged rows):
 * read the branch or the entries instead.
 */
export function readTranscriptContext(transcript: object): TranscriptContext | undefined {
  const reader =
    readersOfWrappers.get(transcript) ??
    (typeof (transcript as Partial<ContextReader>).readContext === "function"
      ? (transcript as ContextReader)
      : undefined);
  return reader?.readContext();
}
