// The append journal of one agent database connection. Owns: the journal file (one per open store and agent
// database, named after its owner: host, pid and the store's token), writing an appended entry to it as one
// line in one write(2) (O_APPEND; durable against a crash of the process when it returns, the class of pi's
// JSONL and of a WAL commit without fsync), with a marker line before a session's first entry of a burst,
// emptying it once its entries are folded, the entries written but not yet folded into SQLite, when a fold
// is due (a group commit in the next event-loop turn), and finding and reading the journals whose owner is gone. Does not own: the fold itself or the
// replay (transcript.ts inserts the entries with the transcript's rules) or whether an owner is alive (runs.ts).
//
// Why: one durable SQLite commit costs about 20–30 µs here (two WAL frames, six fcntl locks), three times an
// appendFileSync; a line in a file kept open costs about 1.5 µs, and folding a burst of lines into SQLite in
// one transaction costs a few µs per entry. So an append is durable as soon as its line is written, and SQLite
// receives the entries together: in a group commit after the current event-loop turn (`setImmediate`: a turn's
// writes never wait for it), before any read or other write through this process's stores, or when the group
// grows past `FOLD_AT_ENTRIES`.
import {
  closeSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { PRIVATE_FILE_MODE } from "../private-files.ts";
import type { RunOwner } from "../runs.ts";
import type { TranscriptEntry } from "../transcript.ts";

/** An entry whose journal line is written and which SQLite has not received yet. */
export interface PendingAppend {
  readonly sessionId: string;
  /** The session's key in the process-wide read cache. */
  readonly cacheKey: string;
  readonly entry: TranscriptEntry;
  readonly body: string;
}

/** A burst this long is folded at once: bounds the memory held and how long other processes wait to see it. */
export const FOLD_AT_ENTRIES = 512;
const FOLD_AT_BYTES = 4 * 1024 * 1024;
const SEPARATOR = "+";

export class AppendJournal {
  readonly path: string;
  readonly #scheduleFold: () => void;
  #fd: number | undefined;
  #unusable = false;
  #pending: PendingAppend[] = [];
  #pendingBytes = 0;
  readonly #pendingIds = new Map<string, Set<string>>();
  #foldScheduled = false;
  #burstEndScheduled = false;
  #burst = 0;

  /**
   * `scheduleFold` runs once per group of appends: in a `setImmediate` after the first one (the group commit,
   * off the turn path); readers and writers of this process fold before they touch the database anyway.
   */
  constructor(databasePath: string, owner: RunOwner, scheduleFold: () => void) {
    this.path = journalPath(databasePath, owner);
    this.#scheduleFold = scheduleFold;
  }

  get pending(): readonly PendingAppend[] {
    return this.#pending;
  }

  /**
   * Changes at the end of every synchronous burst of appends and at every fold: what an appender proved
   * about SQLite at its first journaled append of a burst holds for the rest of it (a fold checks again).
   */
  get burst(): number {
    return this.#burst;
  }

  /** True when the pending burst should be folded now rather than at its end. */
  get full(): boolean {
    return this.#pending.length >= FOLD_AT_ENTRIES || this.#pendingBytes >= FOLD_AT_BYTES;
  }

  isPending(cacheKey: string, id: string): boolean {
    return this.#pendingIds.get(cacheKey)?.has(id) === true;
  }

  hasPendingFor(cacheKey: string): boolean {
    return this.#pendingIds.has(cacheKey);
  }

  /**
   * Writes the entry's line, after a marker line when `marker` is given (in the same write); false when the
   * journal cannot be written (its file cannot be opened or a write came up short), after which this journal
   * is never used again and the caller commits directly. `linePrefix` is `linePrefixFor(sessionId)`.
   */
  write(append: PendingAppend, linePrefix: string, marker?: JournalMarker): boolean {
    if (this.#unusable) return false;
    const entryLine = `${linePrefix}${append.body}}\n`;
    const line = marker === undefined ? entryLine : `${markerLine(marker)}${entryLine}`;
    try {
      // Owner-only from its creation (private-files.ts): the lines are transcript entries.
      this.#fd ??= openSync(this.path, "a", PRIVATE_FILE_MODE);
      if (writeSync(this.#fd, line) !== Buffer.byteLength(line)) throw new Error("short write");
    } catch {
      // A torn line, if any, is reported by the replay of this file and skipped; the entry is committed directly.
      this.#unusable = true;
      return false;
    }
    this.#written(append);
    return true;
  }

  /**
   * Writes the entries' lines (after a marker line when `marker` is given) in ONE write: `appendMany` made
   * durable as one line per entry. False, as for `write`, when the journal cannot be written; a crash
   * mid-write leaves a torn last line that the replay reports and skips (the caller never saw it return).
   */
  writeMany(appends: readonly PendingAppend[], linePrefix: string, marker?: JournalMarker): boolean {
    if (this.#unusable) return false;
    let text = marker === undefined ? "" : markerLine(marker);
    for (const append of appends) text += `${linePrefix}${append.body}}\n`;
    try {
      this.#fd ??= openSync(this.path, "a", PRIVATE_FILE_MODE);
      if (writeSync(this.#fd, text) !== Buffer.byteLength(text)) throw new Error("short write");
    } catch {
      this.#unusable = true;
      return false;
    }
    for (const append of appends) this.#written(append);
    return true;
  }

  #written(append: PendingAppend): void {
    this.#pending.push(append);
    this.#pendingBytes += append.body.length;
    let ids = this.#pendingIds.get(append.cacheKey);
    if (ids === undefined) {
      ids = new Set();
      this.#pendingIds.set(append.cacheKey, ids);
    }
    ids.add(append.entry.id);
    if (!this.#burstEndScheduled) {
      this.#burstEndScheduled = true;
      queueMicrotask(() => {
        this.#burstEndScheduled = false;
        this.#burst++;
      });
    }
    if (!this.#foldScheduled) {
      this.#foldScheduled = true;
      // The group commit: after the current event-loop turn (off the path of the caller's synchronous work
      // and of the promise chain it is in), together with whatever else this turn journaled.
      setImmediate(() => {
        this.#foldScheduled = false;
        this.#scheduleFold();
      });
    }
  }

  /** The pending entries are in SQLite now: forgets them and empties the file (it holds only what is not). */
  folded(): void {
    this.startBurst();
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#pendingIds.clear();
    if (this.#fd === undefined) return;
    try {
      ftruncateSync(this.#fd, 0);
    } catch {
      // Left as it is: a replay finds those lines already stored.
    }
  }

  /** Ends the current burst: the next journaled append of every handle proves its cache again (and marks it). */
  startBurst(): void {
    this.#burst++;
  }

  /** Closes the file; removes it when nothing is pending (otherwise the next open replays it). */
  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    this.#unusable = true;
    if (this.#pending.length === 0) {
      try {
        unlinkSync(this.path);
      } catch {
        // Already gone, or a read-only folder: a replay finds every line stored.
      }
    }
  }
}

/** The start of a journal line for a session: `{"s":<session id>,"e":` (the entry's JSON and `}` follow). */
export function linePrefixFor(sessionId: string): string {
  return `{"s":${JSON.stringify(sessionId)},"e":`;
}

function journalPath(databasePath: string, owner: RunOwner): string {
  const name = [
    `${basename(databasePath)}-appends`,
    encodeURIComponent(owner.host),
    String(owner.pid),
    encodeURIComponent(owner.token),
  ].join(SEPARATOR);
  return join(dirname(databasePath), `${name}.jsonl`);
}

/** A journal file left next to a database, and the owner its name gives. */
export interface JournalFile {
  readonly path: string;
  readonly owner: RunOwner;
}

/** The journals next to `databasePath` (any owner, this process's too). */
export function listJournals(databasePath: string): JournalFile[] {
  const prefix = `${basename(databasePath)}-appends${SEPARATOR}`;
  let names: string[];
  try {
    names = readdirSync(dirname(databasePath));
  } catch {
    return [];
  }
  const journals: JournalFile[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(".jsonl")) continue;
    const [host, pid, token] = name.slice(prefix.length, -".jsonl".length).split(SEPARATOR);
    if (host === undefined || pid === undefined || token === undefined || !/^\d+$/.test(pid)) continue;
    journals.push({
      path: join(dirname(databasePath), name),
      owner: { host: decodeURIComponent(host), pid: Number(pid), token: decodeURIComponent(token) },
    });
  }
  return journals;
}

/**
 * What the owner knew of a session when it proved its cache current, just before journaling the entries that
 * follow: every row of the session up to `seq` (`m`), at `time` (`t`, ISO). A replay compares the session with
 * it: a row above `seq`, or a leaf moved after `time`, means another writer went on with the session that the
 * owner never saw; then the owner's unfolded entries do not take the leaf.
 */
export interface JournalMarker {
  readonly seq: number;
  readonly time: string;
}

function markerLine(marker: JournalMarker): string {
  return `{"m":${marker.seq},"t":${JSON.stringify(marker.time)}}\n`;
}

/** One line of a journal being replayed: an entry, a marker, or why the line is unusable. */
export type JournalLine =
  | { readonly line: number; readonly marker: JournalMarker }
  | {
      readonly line: number;
      readonly sessionId: string;
      readonly entry: TranscriptEntry;
      readonly body: string;
    }
  | { readonly line: number; readonly problem: string };

/** Reads a journal file line by line; a malformed line (a torn last write) is reported, never fatal. */
export function readJournal(path: string): JournalLine[] {
  const text = readFileSync(path, "utf8");
  const lines: JournalLine[] = [];
  text.split("\n").forEach((raw, index) => {
    if (raw === "") return;
    const line = index + 1;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      lines.push({ line, problem: "not a complete JSON line (a write cut short?)" });
      return;
    }
    const record = parsed as { s?: unknown; e?: unknown; m?: unknown; t?: unknown };
    if (typeof record.m === "number" && typeof record.t === "string") {
      lines.push({ line, marker: { seq: record.m, time: record.t } });
      return;
    }
    if (typeof record.s !== "string" || record.e === null || typeof record.e !== "object") {
      lines.push({ line, problem: 'not a journal record ({"s": session id, "e": entry})' });
      return;
    }
    const entry = record.e as TranscriptEntry;
    lines.push({ line, sessionId: record.s, entry, body: JSON.stringify(entry) });
  });
  return lines;
}
