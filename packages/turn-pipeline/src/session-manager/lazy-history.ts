// A pi SessionManager that holds the active branch from where the model context starts, not the whole
// transcript. Owns: seeding pi's in-memory manager with the context (the latest compaction on the active
// branch and the tail it keeps, session-store's `readTranscriptContext`), answering pi's SessionManager API
// as the whole transcript would — the branch before the context start as entries known by id, parent and
// type whose bodies are read from the store when something looks inside one; every other branch read from
// the store the first time something asks for the tree (`getEntries`, `getTree`, `getChildren`, an entry
// pi does not hold, a label, a leaf move) — and the latest entry of a type on the branch without walking
// the history (`latestOnBranch`). Does not own: mirroring writes (pi-session-manager.ts) or the store's reads.
//
// Why: pi rebuilds the model context from `getEntries()` several times a turn, so a manager holding every
// entry of every branch costs ≈ 5 µs per entry per turn, and opening it parses all of them. The context
// only needs the compaction and its tail, and the model and thinking level recorded before it.
//
// How pi's answers stay pi's: the context is pi's own `buildSessionProjection` over the tail (pi's walk
// from the leaf stops where the tail starts, and a path with a compaction yields the same context entries
// whether or not it holds what the compaction summarised); only the model and thinking level, which pi takes
// from the whole path, are completed from the omitted part when the tail records none. While partial, the
// leaf only ever moves by appends (a leaf move loads the whole tree first), so the tail is one path.
// Caveat: an omitted entry handed out by `getBranch` is a read-only view (a Proxy) of the stored entry, not
// the stored object itself (`getEntry` returns the stored object); `structuredClone` refuses it.
import type { OmittedBranch, Transcript, TranscriptContext } from "@agent-kernel/session-store";
import {
  buildContextEntries,
  buildSessionProjection,
  type FileEntry,
  type SessionEntry,
  SessionManager,
  type SessionProjection,
} from "@earendil-works/pi-coding-agent";

/** The fields of pi's manager (0.87.1) this module reads and replaces; private in pi's `.d.ts`. */
interface PiManagerInternals {
  fileEntries: FileEntry[];
  byId: Map<string, SessionEntry>;
  leafId: string | null;
  _buildIndex(): void;
}

/** What one partially loaded manager knows. */
interface LazyState {
  full: boolean;
  readonly omitted: OmittedBranch;
  /**
   * How many entries of `omitted` (from its start) are still omitted: a compaction appended later may keep
   * entries from before the first one's start, which then join the tail (`widen`).
   */
  omittedCount: number;
  /** The latest mark entry before the context start, when the store knows it (`TranscriptContext`). */
  readonly latestBefore: TranscriptContext["latestBefore"];
  /** The omitted entries as read-only views, root first (made by the first `getBranch` that reaches them). */
  readonly views: () => SessionEntry[];
  /** Omitted entries whose body was read, by index. */
  readonly bodies: (SessionEntry | undefined)[];
  readonly read: (index: number) => SessionEntry;
  /** The model and thinking level the omitted part records last (computed on first use). */
  settings: { thinkingLevel: string | undefined; model: SessionProjection["model"] | undefined } | undefined;
  /** Loads every entry of the transcript into pi's manager (the first call does; later ones return). */
  readonly loadAll: () => void;
}

const lazyStates = new WeakMap<SessionManager, LazyState>();

/**
 * pi's in-memory manager over `context` (the active branch from where the model context starts, see
 * session-store's `readTranscriptContext`), answering for the whole of `transcript`.
 */
export function lazyHistoryManager(
  cwd: string,
  header: FileEntry,
  transcript: Transcript,
  context: TranscriptContext,
): SessionManager {
  const tail = context.entries as unknown as SessionEntry[];
  const sessionManager = SessionManager.inMemory(cwd, undefined, [header, ...tail]);
  const pi = sessionManager as unknown as PiManagerInternals;
  const omitted = context.omitted;
  const bodies: (SessionEntry | undefined)[] = [];
  const read = (index: number): SessionEntry => {
    const known = bodies[index];
    if (known !== undefined) return known;
    const id = omitted.ids[index] ?? "";
    const entry = transcript.getEntry(id) as unknown as SessionEntry | undefined;
    if (entry === undefined) {
      throw new Error(
        `session ${transcript.agentId}/${transcript.sessionId}: entry ${id} of the active branch is no longer in the store`,
      );
    }
    bodies[index] = entry;
    return entry;
  };
  let views: SessionEntry[] | undefined;

  // The omitted part's length is read on first use: a context read from the store's mark index reads the
  // history's shape only when something needs it (see session-store's `TranscriptContext.omitted`).
  let omittedCount: number | undefined;
  const state: LazyState = {
    full: false,
    omitted,
    get omittedCount() {
      omittedCount ??= omitted.ids.length;
      return omittedCount;
    },
    set omittedCount(count: number) {
      omittedCount = count;
    },
    latestBefore: context.latestBefore,
    settings: undefined,
    views: () => {
      views ??= omitted.ids.map((id, index) =>
        entryView(
          new ViewTarget(id, omitted.parentIds[index] ?? null, omitted.types[index] ?? "", index, read),
        ),
      );
      return views;
    },
    bodies,
    read,
    loadAll: () => {
      if (state.full) return;
      const stored = transcript.getEntries() as unknown as SessionEntry[];
      const storedIds = new Set(stored.map((entry) => entry.id));
      // Entries pi holds that the store does not yet (held by deferred writes) stay, after the stored ones.
      const held = pi.fileEntries.filter(
        (entry): entry is SessionEntry => entry.type !== "session" && !storedIds.has(entry.id),
      );
      const leaf = pi.leafId;
      pi.fileEntries = [pi.fileEntries[0] ?? header, ...stored, ...held];
      pi._buildIndex();
      pi.leafId = leaf;
      state.full = true;
    },
  };
  lazyStates.set(sessionManager, state);
  installOverrides(sessionManager, pi, state);
  return sessionManager;
}

/** True while `sessionManager` holds the context only (no call has loaded the whole transcript yet). */
export function holdsContextOnly(sessionManager: SessionManager): boolean {
  const state = lazyStates.get(sessionManager);
  return state !== undefined && !state.full;
}

/**
 * The latest entry of `type` on the active branch for which `matches` holds, or undefined. On a manager made
 * by `lazyHistoryManager` this reads the tail and then only the omitted entries of that type (a look at
 * their type, then a body each), never the whole history; on any other manager it walks `getBranch()`.
 */
export function latestOnBranch(
  sessionManager: SessionManager,
  type: string,
  matches: (entry: SessionEntry) => boolean = anyEntry,
): SessionEntry | undefined {
  const state = lazyStates.get(sessionManager);
  if (state === undefined || state.full) {
    const branch = sessionManager.getBranch();
    for (let index = branch.length - 1; index >= 0; index--) {
      const entry = branch[index];
      if (entry?.type === type && matches(entry)) return entry;
    }
    return undefined;
  }
  const pi = sessionManager as unknown as PiManagerInternals;
  const entries = pi.fileEntries;
  // What an earlier call found holds until an entry pushed since matches: the tail is only appended to
  // while the omitted part stays as it was (a widening moves omitted entries to the tail's start, so the
  // tail's first entry tells; the omitted part's count is not read here: it may be read from the store).
  const memos = latestMemosOf(state, type, matches);
  const memo = memos.get(matches);
  const from =
    memo !== undefined &&
    memo.entries === entries &&
    memo.scanned <= entries.length &&
    memo.first === entries[1]
      ? memo.scanned
      : 1;
  for (let index = entries.length - 1; index >= from; index--) {
    const entry = entries[index] as SessionEntry | undefined;
    if (entry?.type === type && matches(entry)) {
      memos.set(matches, { entries, scanned: entries.length, first: entries[1], found: entry });
      return entry;
    }
  }
  const found = from > 1 ? memo?.found : latestOmitted(state, type, matches);
  memos.set(matches, { entries, scanned: entries.length, first: entries[1], found });
  return found;
}

/** `latestOnBranch`'s default: any entry of the type. One function, so that its memo is found again. */
const anyEntry = (): boolean => true;

/** The latest entry of `type` before the tail (the omitted part) for which `matches` holds. */
function latestOmitted(
  state: LazyState,
  type: string,
  matches: (entry: SessionEntry) => boolean,
): SessionEntry | undefined {
  const known = state.latestBefore?.(type);
  if (known === null) return undefined;
  if (known !== undefined && matches(known as unknown as SessionEntry))
    return known as unknown as SessionEntry;
  const types = state.omitted.types;
  for (let index = state.omittedCount - 1; index >= 0; index--) {
    if (types[index] !== type) continue;
    const entry = state.read(index);
    if (matches(entry)) return entry;
  }
  return undefined;
}

/**
 * What `latestOnBranch` found on a lazy manager, for one type and matcher: a warm session's turn asks for the
 * same few (its model, thinking level, bootstrap and skills records, whether a user message exists), and
 * without this each ask walked the whole tail back to the session's start, every turn.
 */
interface LatestMemo {
  /** pi's `fileEntries` as scanned (the same array: entries are pushed to it, never replaced). */
  readonly entries: readonly FileEntry[];
  /** How many of them were scanned: later ones are looked at next time. */
  readonly scanned: number;
  /** The tail's first entry when scanned: another one means omitted entries joined the tail (`widen`). */
  readonly first: FileEntry | undefined;
  readonly found: SessionEntry | undefined;
}

const latestMemos = new WeakMap<LazyState, Map<string, Map<(entry: SessionEntry) => boolean, LatestMemo>>>();

const MAX_MATCHERS_PER_TYPE = 8;

function latestMemosOf(
  state: LazyState,
  type: string,
  matches: (entry: SessionEntry) => boolean,
): Map<(entry: SessionEntry) => boolean, LatestMemo> {
  let byType = latestMemos.get(state);
  if (byType === undefined) {
    byType = new Map();
    latestMemos.set(state, byType);
  }
  let memos = byType.get(type);
  // A caller passing a new matcher each call would only add memos never found again: bounded (a matcher already
  // kept keeps its memo at the bound).
  if (memos === undefined || (memos.size >= MAX_MATCHERS_PER_TYPE && !memos.has(matches))) {
    memos = new Map();
    byType.set(type, memos);
  }
  return memos;
}

function installOverrides(sessionManager: SessionManager, pi: PiManagerInternals, state: LazyState): void {
  const proto = SessionManager.prototype;
  // Read on use: the omitted part's arrays may be read from the store on first use (see lazyHistoryManager).
  const indexOfOmitted = (id: string): number =>
    state.omittedCount === 0 ? -1 : state.omitted.ids.lastIndexOf(id, state.omittedCount - 1);
  // The tail as pi holds it: the header, then the branch from the context start, appends pushed after.
  const tailEntries = (): SessionEntry[] => pi.fileEntries.slice(1) as SessionEntry[];
  let tailIndex = new Map<string, SessionEntry>();
  let indexed = 1;
  // The tail must hold what the latest compaction keeps: one appended with a `firstKeptEntryId` in the
  // omitted part (pi's own compactions keep entries after the previous one; a hook's may not) moves the
  // omitted entries from there into the tail, read from the store.
  let checkedUpTo = 1;
  const widen = (): void => {
    const entries = pi.fileEntries;
    for (let index = entries.length - 1; index >= checkedUpTo; index--) {
      const entry = entries[index] as SessionEntry;
      if (entry.type !== "compaction") continue;
      // A kept entry pi holds is not omitted (the tail's own latest compaction keeps the tail's start).
      const from = pi.byId.has(entry.firstKeptEntryId) ? -1 : indexOfOmitted(entry.firstKeptEntryId);
      if (from >= 0) {
        const joining: SessionEntry[] = [];
        for (let at = from; at < state.omittedCount; at++) joining.push(state.read(at));
        for (const joined of joining) pi.byId.set(joined.id, joined);
        pi.fileEntries.splice(1, 0, ...joining);
        state.omittedCount = from;
        state.settings = undefined;
        tailIndex = new Map();
        indexed = 1;
      }
      break;
    }
    checkedUpTo = pi.fileEntries.length;
  };
  const tailById = (): Map<string, SessionEntry> => {
    for (; indexed < pi.fileEntries.length; indexed++) {
      const entry = pi.fileEntries[indexed] as SessionEntry;
      tailIndex.set(entry.id, entry);
    }
    return tailIndex;
  };
  const loaded = <Args extends unknown[], Result>(call: (...args: Args) => Result) =>
    function (this: SessionManager, ...args: Args): Result {
      state.loadAll();
      return call.apply(this, args);
    };

  sessionManager.getEntries = loaded(proto.getEntries);
  sessionManager.getTree = loaded(proto.getTree);
  sessionManager.getChildren = loaded(proto.getChildren);
  sessionManager.getLabel = loaded(proto.getLabel);
  sessionManager.getSessionName = loaded(proto.getSessionName);
  // A leaf move may leave the tail: the whole tree first, then pi's own rules (mirrorWrites wraps these).
  sessionManager.branch = loaded(proto.branch);
  sessionManager.resetLeaf = loaded(proto.resetLeaf);
  sessionManager.branchWithSummary = loaded(proto.branchWithSummary);
  // Targets on another branch are in pi's index only once the tree is loaded.
  const withTarget = <Args extends [string, ...unknown[]], Result>(call: (...args: Args) => Result) =>
    function (this: SessionManager, ...args: Args): Result {
      if (!pi.byId.has(args[0])) state.loadAll();
      return call.apply(this, args);
    };
  sessionManager.appendLabelChange = withTarget(proto.appendLabelChange);
  sessionManager.appendContextEdit = withTarget(proto.appendContextEdit);

  sessionManager.getEntry = (id: string): SessionEntry | undefined => {
    const entry = pi.byId.get(id);
    if (entry !== undefined || state.full) return entry;
    const at = indexOfOmitted(id);
    if (at >= 0) return state.read(at);
    state.loadAll();
    return pi.byId.get(id);
  };

  sessionManager.getBranch = (fromId?: string): SessionEntry[] => {
    if (state.full) return proto.getBranch.call(sessionManager, fromId);
    const startId = fromId ?? pi.leafId;
    if (startId === null || startId === undefined) return [];
    const at = pi.byId.get(startId);
    if (at === undefined) {
      const omittedAt = indexOfOmitted(startId);
      if (omittedAt >= 0) return state.views().slice(0, omittedAt + 1);
      state.loadAll();
      return proto.getBranch.call(sessionManager, fromId);
    }
    // The last omitted entry is the tail's first entry's parent (null: nothing omitted).
    const lastOmitted = (pi.fileEntries[1] as SessionEntry | undefined)?.parentId ?? undefined;
    const path: SessionEntry[] = [];
    let current: SessionEntry | undefined = at;
    while (current !== undefined) {
      path.push(current);
      const parentId: string | null = current.parentId;
      if (parentId === null) break;
      if (parentId === lastOmitted) return state.views().slice(0, state.omittedCount).concat(path.reverse());
      current = tailById().get(parentId);
    }
    return path.reverse();
  };

  // Computed once per tail: what the tail records only grows (a leaf move loads the whole tree first).
  const settingsOfOmitted = (needs: { thinking: boolean; model: boolean }) => {
    state.settings ??= omittedSettings(state, needs);
    return state.settings;
  };
  sessionManager.buildSessionProjection = (): SessionProjection => {
    if (state.full) return proto.buildSessionProjection.call(sessionManager);
    widen();
    const entries = tailEntries();
    const projection = buildSessionProjection(entries, pi.leafId, tailById());
    // pi takes the model and thinking level from the whole path: the tail's when it records them.
    let thinking = false;
    let model = false;
    for (const entry of entries) {
      if (entry.type === "thinking_level_change") thinking = true;
      else if (entry.type === "model_change") model = true;
      else if (entry.type === "message" && entry.message.role === "assistant") model = true;
      if (thinking && model) break;
    }
    if (thinking && model) return projection;
    const before = settingsOfOmitted({ thinking: !thinking, model: !model });
    return {
      ...projection,
      thinkingLevel: thinking ? projection.thinkingLevel : (before.thinkingLevel ?? projection.thinkingLevel),
      model: model ? projection.model : (before.model ?? projection.model),
    };
  };
  sessionManager.buildContextEntries = (): SessionEntry[] => {
    if (state.full) return proto.buildContextEntries.call(sessionManager);
    widen();
    return buildContextEntries(tailEntries(), pi.leafId, tailById());
  };
}

/** The thinking level and model the omitted part of the branch records last (pi's path rules). */
function omittedSettings(
  state: LazyState,
  needs: { readonly thinking: boolean; readonly model: boolean },
): NonNullable<LazyState["settings"]> {
  let thinkingLevel: string | undefined;
  if (needs.thinking) {
    const known = state.latestBefore?.("thinking_level_change");
    if (known !== undefined) {
      if (known?.type === "thinking_level_change") thinkingLevel = known.thinkingLevel as string;
    } else {
      const count = state.omittedCount;
      const thinkingAt =
        count === 0 ? -1 : state.omitted.types.lastIndexOf("thinking_level_change", count - 1);
      if (thinkingAt >= 0) {
        const entry = state.read(thinkingAt);
        if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
      }
    }
  }
  let model: SessionProjection["model"] | undefined;
  // An assistant message also sets the model (pi's path rule), and the store does not index those.
  const types = needs.model ? state.omitted.types.slice(0, state.omittedCount) : [];
  for (let index = types.length - 1; index >= 0 && model === undefined; index--) {
    const type = types[index];
    if (type !== "model_change" && type !== "message") continue;
    const entry = state.read(index);
    if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "message" && entry.message.role === "assistant")
      model = { provider: entry.message.provider, modelId: entry.message.model };
  }
  return { thinkingLevel, model };
}

/** What a view knows without the body, and how to read the body (the one object a view allocates). */
class ViewTarget {
  readonly viewId: string;
  readonly viewParentId: string | null;
  readonly viewType: string;
  readonly index: number;
  readonly read: (index: number) => SessionEntry;

  constructor(
    viewId: string,
    viewParentId: string | null,
    viewType: string,
    index: number,
    read: (index: number) => SessionEntry,
  ) {
    this.viewId = viewId;
    this.viewParentId = viewParentId;
    this.viewType = viewType;
    this.index = index;
    this.read = read;
  }
}

const bodyOf = (target: ViewTarget) => target.read(target.index) as unknown as Record<PropertyKey, unknown>;

/** One handler for every view: a view costs its target and the Proxy, no closures. */
const viewHandler: ProxyHandler<ViewTarget> = {
  get: (target, key) => {
    if (key === "id") return target.viewId;
    if (key === "parentId") return target.viewParentId;
    if (key === "type") return target.viewType;
    return Reflect.get(bodyOf(target), key);
  },
  has: (target, key) => key in bodyOf(target),
  ownKeys: (target) => Reflect.ownKeys(bodyOf(target)),
  getOwnPropertyDescriptor: (target, key) => {
    const descriptor = Reflect.getOwnPropertyDescriptor(bodyOf(target), key);
    // The target's own fields are configurable: a descriptor of the view must say configurable too.
    return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
  },
  getPrototypeOf: () => Object.prototype,
  set: () => false,
  defineProperty: () => false,
  deleteProperty: () => false,
};

/**
 * A read-only view of a stored entry known by id, parent and type: those three answer at once, anything else
 * reads the entry's body (once) from the store.
 */
function entryView(target: ViewTarget): SessionEntry {
  return new Proxy(target, viewHandler) as unknown as SessionEntry;
}
