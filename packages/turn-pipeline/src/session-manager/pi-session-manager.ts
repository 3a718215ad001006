// The pi `SessionManager` adapter over a session-store `Transcript`. Owns: rehydrating pi's manager from the
// store, writing every entry pi appends through to the store (synchronously, or held and written as one
// batch when the caller defers writes), recording leaf moves, refusing the pi calls that would bypass the
// store, and the thinking-level rule on restart. Does not own: the storage itself (session-store), creating
// the AgentSession or choosing its model, or deciding when held writes must be durable (the turn executor).
//
// Choice: option A, "mirror" (pi-sdk.md §3.4). We keep pi's own `SessionManager.inMemory(...)` as the tree
// and projection engine and override three things on the instance: `_persist` (pi's single synchronous write
// hook: every `append*` and `branchWithSummary` goes `_appendEntry → push → index → leaf = id → _persist`),
// `branch`/`resetLeaf` (leaf moves are state, not entries) and the session-swapping calls (refused). Why
// not option B (a ~35-method duck-typed replacement): with A the model context, entry ids, label maps,
// context-edit validation, compaction `systemMessage` snapshots and tree ordering stay pi's own code, so a pi
// upgrade cannot silently drift our projection from pi's; B would re-implement all of it and still depend
// on pi's exported projection functions. What A costs: on a SQLite store the manager holds the active branch
// from where the model context starts (lazy-history.ts: the latest compaction and the tail it keeps; the
// history before it and the other branches are read when something asks for them); on other stores the
// whole session, as pi holds it. `_persist` is underscore-named though declared public in pi's `.d.ts` — pi is pinned at 0.87.1 and the
// end-to-end test fails if the hook stops being called.
//
// Caveats handled (pi-sdk.md §3.4):
// - entry ids are pi's 8-hex ids, unique per session only: the store keys entries by (agent, session, id);
// - the leaf pointer is state: `branch`/`resetLeaf` write it through `Transcript.setLeaf`, and a reopened
//   manager is moved to the stored leaf (pi's rehydration would put it on the last appended entry);
// - `createBranchedSession`, `newSession` and `setSessionFile` swap the session inside the manager without
//   calling `_persist`: they throw; fork to a new kernel session in the store instead;
// - deferred writes (`deferWrites`/`flushWrites`/`writeThrough`): a turn appends several entries (a first
//   turn six, a turn with tool calls two per call); one transaction for the entries held since the last
//   flush costs one commit instead of one per entry. Held entries are in pi's memory only: the binding is
//   not in sync while any is held, a leaf move flushes first (its target must be stored), and a failed
//   flush fails the mirror like a failed append;
// - thinking level on restart: an explicit `thinkingLevel` passed to `createAgentSession` for an existing
//   transcript wins without writing an entry, so agent and transcript disagree. `thinkingLevelForCreate`
//   returns `undefined` for a transcript that already records one (pi restores it); call
//   `session.setThinkingLevel()` afterwards to change it, which records the change.
import {
  readTranscriptContext,
  type Transcript,
  type TranscriptEntry,
  type TranscriptHeader,
} from "@agent-kernel/session-store";
import {
  CURRENT_SESSION_VERSION,
  type FileEntry,
  type SessionEntry,
  type SessionHeader,
  SessionManager,
} from "@earendil-works/pi-coding-agent";
import { latestOnBranch, lazyHistoryManager } from "./lazy-history.ts";

/** What the adapter needs from a store: opening one session's transcript (session-store's `openTranscript`). */
export interface TranscriptOpener {
  openTranscript(agentId: string, sessionId: string, init?: { header: TranscriptHeader }): Transcript;
}

export interface PiSessionBinding {
  /** pi's manager, every write mirrored into `transcript`; pass it as `createAgentSession({ sessionManager })`. */
  readonly sessionManager: SessionManager;
  readonly transcript: Transcript;
  /** True when the transcript held no entries when it was opened. */
  readonly isNew: boolean;
  /** The thinking level recorded on the active branch when opened, if any. */
  readonly storedThinkingLevel: string | undefined;
  /**
   * True while pi's manager holds exactly what the store holds: no write through it failed, none is held
   * (`deferWrites`), and nobody appended to the transcript or moved its leaf behind its back (one look at
   * the store's read cache). A binding in sync can serve the session's next turn as it is (binding-cache.ts).
   */
  isInSync(): boolean;
  /** Entries the store holds for this session as far as the binding knows (its own writes included). */
  storedCount(): number;
  /**
   * From now on, entries pi appends are held in memory until `flushWrites` or `writeThrough` stores them,
   * all held entries in one transaction. For a caller that knows when entries must be durable (the turn
   * executor: before every model request and at the end of the turn).
   */
  deferWrites(): void;
  /** Stores the held entries now, in one transaction; throws (and fails the mirror) if the store refuses. */
  flushWrites(): void;
  /** `flushWrites`, then back to storing every entry when pi appends it. */
  writeThrough(): void;
}

/** The header a new session's transcript starts with: pi's own header shape, format version 3. */
export function newTranscriptHeader(
  sessionId: string,
  cwd: string,
  options: { parentSession?: string; now?: Date } = {},
): TranscriptHeader {
  return {
    type: "session",
    version: CURRENT_SESSION_VERSION,
    id: sessionId,
    timestamp: (options.now ?? new Date()).toISOString(),
    cwd,
    ...(options.parentSession === undefined ? {} : { parentSession: options.parentSession }),
  };
}

/** Opens (creating it when absent) the transcript `{agentId, sessionId}` and binds a pi manager to it. */
export function openPiSessionManager(
  store: TranscriptOpener,
  target: { agentId: string; sessionId: string; cwd: string },
): PiSessionBinding {
  const transcript = store.openTranscript(target.agentId, target.sessionId, {
    header: newTranscriptHeader(target.sessionId, target.cwd),
  });
  return bindPiSessionManager(transcript, { cwd: target.cwd });
}

/**
 * Binds a pi manager to an already opened transcript. `cwd` defaults to the one in the transcript's header.
 * Throws when the transcript has no header (open it with `{ header: newTranscriptHeader(...) }`).
 */
export function bindPiSessionManager(
  transcript: Transcript,
  options: { cwd?: string } = {},
): PiSessionBinding {
  const header = transcript.getHeader();
  if (header === undefined) {
    throw new Error(
      `transcript ${transcript.agentId}/${transcript.sessionId} has no session header; open it with { header: newTranscriptHeader(sessionId, cwd) }`,
    );
  }
  if (header.id !== transcript.sessionId) {
    throw new Error(
      `transcript ${transcript.agentId}/${transcript.sessionId} carries the header of session "${header.id}"; refusing to mix sessions`,
    );
  }
  const cwd = options.cwd ?? header.cwd;
  // The active branch from where the model context starts (SQLite): the history before it and the other
  // branches are read when something asks for them (lazy-history.ts). Else every entry, as pi would hold.
  const context = readTranscriptContext(transcript);
  let sessionManager: SessionManager;
  let stored: number;
  if (context !== undefined) {
    sessionManager = lazyHistoryManager(cwd, toPiHeader(header), transcript, context);
    stored = transcript.count();
  } else {
    const entries = transcript.getEntries();
    const fileEntries: FileEntry[] = [toPiHeader(header), ...entries.map(toPiEntry)];
    // With preloaded entries pi takes the session id from the header and indexes every entry; the leaf lands
    // on the last appended one. No file I/O happens in memory mode.
    sessionManager = SessionManager.inMemory(cwd, undefined, fileEntries);
    const storedLeaf = transcript.getLeafId();
    if (storedLeaf === null && entries.length > 0) sessionManager.resetLeaf();
    else if (storedLeaf !== null && storedLeaf !== sessionManager.getLeafId())
      sessionManager.branch(storedLeaf);
    stored = entries.length;
  }

  const mirror = mirrorWrites(sessionManager, transcript, stored);
  // One look at the store for both (SQLite: one data_version read while nothing was committed since), else two.
  const syncState = (transcript as Transcript & SyncState).syncState?.bind(transcript);
  return {
    sessionManager,
    transcript,
    isNew: stored === 0,
    storedThinkingLevel: latestThinkingLevel(sessionManager),
    // Entries are immutable and only ever appended, so the same count and leaf mean the same transcript.
    isInSync: () => {
      if (mirror.failed() || mirror.holding()) return false;
      if (syncState === undefined)
        return (
          transcript.count() === mirror.storedCount() && transcript.getLeafId() === sessionManager.getLeafId()
        );
      const stored = syncState();
      return stored.count === mirror.storedCount() && stored.leafId === sessionManager.getLeafId();
    },
    storedCount: mirror.storedCount,
    deferWrites: mirror.defer,
    flushWrites: mirror.flush,
    writeThrough: mirror.writeThrough,
  };
}

/**
 * The `thinkingLevel` option to pass to `createAgentSession`: the requested level for a session that records
 * none yet, `undefined` (let pi restore it from the transcript) otherwise. Passing a level for a restored
 * session would make pi run it without recording it (pi-sdk.md §3.4).
 */
export function thinkingLevelForCreate<Level extends string>(
  binding: PiSessionBinding,
  requested: Level | undefined,
): Level | undefined {
  return binding.storedThinkingLevel === undefined ? requested : undefined;
}

/** What the mirror knows about its writes, and the deferred-write controls (see `PiSessionBinding`). */
interface MirrorState {
  failed(): boolean;
  holding(): boolean;
  storedCount(): number;
  defer(): void;
  flush(): void;
  writeThrough(): void;
}

/** What the SQLite transcript offers beyond the contract: its count and leaf in one look. */
interface SyncState {
  syncState?(): { readonly count: number; readonly leafId: string | null };
}

/** What a transcript may offer beyond the contract: both session-store backends have it. */
interface BatchAppend {
  appendMany?(entries: readonly TranscriptEntry[]): void;
}

function mirrorWrites(sessionManager: SessionManager, transcript: Transcript, loaded: number): MirrorState {
  let failure: Error | undefined;
  let stored = loaded;
  let deferring = false;
  let held: TranscriptEntry[] = [];
  const where = `${transcript.agentId}/${transcript.sessionId}`;
  const appendMany = (transcript as Transcript & BatchAppend).appendMany?.bind(transcript);
  const refuseAfterFailure = (): void => {
    if (failure !== undefined) {
      throw new Error(`session ${where}: an earlier transcript write failed; reopen the session`, {
        cause: failure,
      });
    }
  };
  const fail = (error: unknown, what: string): Error => {
    failure = error instanceof Error ? error : new Error(String(error));
    return new Error(`session ${where}: could not store ${what}`, { cause: failure });
  };
  const flush = (): void => {
    if (held.length === 0) return;
    refuseAfterFailure();
    const batch = held;
    held = [];
    try {
      if (appendMany !== undefined) appendMany(batch);
      else for (const entry of batch) transcript.append(entry);
      stored += batch.length;
    } catch (error) {
      const first = batch[0];
      const what = `entry ${first?.id} (${first?.type})`;
      throw fail(error, batch.length === 1 ? what : `${batch.length} entries from ${what} on`);
    }
  };
  // Every pi append reaches this hook synchronously, after pi put the entry in memory. If the store
  // refuses it, memory and store disagree from here on: the manager refuses any further write, so nothing
  // is ever appended under a parent the store does not hold. Reopen the session to continue.
  sessionManager._persist = (entry: SessionEntry): void => {
    refuseAfterFailure();
    if (deferring) {
      held.push(toTranscriptEntry(entry));
      return;
    }
    try {
      transcript.append(toTranscriptEntry(entry));
      stored += 1;
    } catch (error) {
      throw fail(error, `entry ${entry.id} (${entry.type})`);
    }
  };

  // A leaf move names an entry the store must already hold: held entries go first.
  const piBranch = sessionManager.branch.bind(sessionManager);
  sessionManager.branch = (branchFromId: string): void => {
    piBranch(branchFromId);
    flush();
    transcript.setLeaf(branchFromId);
  };
  const piResetLeaf = sessionManager.resetLeaf.bind(sessionManager);
  sessionManager.resetLeaf = (): void => {
    piResetLeaf();
    flush();
    transcript.setLeaf(null);
  };

  const refuse = (call: string) => (): never => {
    throw new Error(
      `session ${where}: SessionManager.${call}() would swap the session without storing it; create or fork a session in the store instead`,
    );
  };
  sessionManager.createBranchedSession = refuse("createBranchedSession");
  sessionManager.newSession = refuse("newSession");
  sessionManager.setSessionFile = refuse("setSessionFile");
  return {
    failed: () => failure !== undefined,
    holding: () => held.length > 0,
    storedCount: () => stored,
    defer: () => {
      deferring = true;
    },
    flush,
    writeThrough: () => {
      flush();
      deferring = false;
    },
  };
}

/** The thinking level the latest `thinking_level_change` on the manager's active branch records, if any. */
export function latestThinkingLevel(sessionManager: SessionManager): string | undefined {
  const entry = latestOnBranch(sessionManager, "thinking_level_change");
  return entry?.type === "thinking_level_change" ? entry.thinkingLevel : undefined;
}

// The store holds pi entries verbatim (its `TranscriptEntry` is "a pi SessionEntry, any type"), so these
// conversions only change the static type. pi's entry interfaces have no index signature, hence the casts.
function toTranscriptEntry(entry: SessionEntry): TranscriptEntry {
  return entry as unknown as TranscriptEntry;
}

function toPiEntry(entry: TranscriptEntry): SessionEntry {
  return entry as unknown as SessionEntry;
}

function toPiHeader(header: TranscriptHeader): SessionHeader {
  return { ...header };
}
