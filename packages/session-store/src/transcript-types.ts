// The transcript's shapes and the rules every backend shares. Owns: the contract (`Transcript`, and what the
// SQLite one adds), the stored entry, header and draft shapes, what a replayed journal reports, the tree-field
// check every append runs and the canonical JSON that decides whether two entries are the same. Does not own:
// storing or reading them (transcript-statements.ts, transcript-handle.ts; postgres/transcript.ts).
import { SessionStoreError } from "./errors.ts";

/** A pi SessionEntry stored verbatim (message, model_change, thinking_level_change, compaction, branch_summary, context_edit, label, session_info, custom, custom_message, usage, ...). */
export interface TranscriptEntry {
  readonly type: string;
  readonly id: string;
  readonly parentId: string | null;
  readonly timestamp: string;
  readonly [field: string]: unknown;
}

export interface TranscriptHeader {
  readonly type: "session";
  readonly version: number;
  readonly id: string;
  readonly timestamp: string;
  readonly cwd: string;
  readonly parentSession?: string;
}

/** An entry without its parent: `appendAtLeaf` fills `parentId` with the leaf inside the write transaction. */
export interface TranscriptEntryDraft {
  readonly type: string;
  readonly id: string;
  readonly timestamp: string;
  readonly [field: string]: unknown;
}

/** One session's transcript. Every method is synchronous. */
export interface Transcript {
  readonly agentId: string;
  readonly sessionId: string;
  getHeader(): TranscriptHeader | undefined;
  /** Durable when it returns. parentId must be null or an existing id. Appending an id that exists with identical content is a no-op (idempotent); with different content it throws. Moves the leaf to entry.id. */
  append(entry: TranscriptEntry): void;
  /** Moves the leaf (pi's branch/resetLeaf); persisted; an unknown id throws. */
  setLeaf(id: string | null): void;
  getLeafId(): string | null;
  getEntry(id: string): TranscriptEntry | undefined;
  /** Root→leaf inclusive (default: the current leaf), without loading the whole tree. */
  getBranch(leafId?: string | null): TranscriptEntry[];
  /** The whole tree in append order. */
  getEntries(): TranscriptEntry[];
  getChildren(parentId: string | null): TranscriptEntry[];
  count(): number;
}

/** What the SQLite transcript offers beyond the contract. */
export interface SqliteTranscript extends Transcript {
  /**
   * Appends `draft` as a child of the current leaf, reading the leaf and writing in one write transaction, so
   * concurrent writers (other processes) extend one chain instead of branching. Returns the stored entry.
   */
  appendAtLeaf(draft: TranscriptEntryDraft): TranscriptEntry;
  /** Appends many entries in one transaction (import): all or nothing, each with `append`'s rules. */
  appendMany(entries: readonly TranscriptEntry[]): void;
  /**
   * This session's rows set aside as damaged (transcript-quarantine.ts), in seq order. Optional so that a
   * wrapper of a handle (a fenced one) keeps compiling; it delegates when it has it.
   */
  quarantined?(): QuarantinedRow[];
  /**
   * `count()` and `getLeafId()` in one call, answered from this process's read cache after one look at SQLite
   * when nothing was committed since the last call. Optional, as `quarantined`: a wrapper delegates.
   */
  syncState?(): { readonly count: number; readonly leafId: string | null };
}

/**
 * A transcript row whose stored body is not a usable entry (not JSON, or not the entry its columns name): left
 * in place, byte for byte, listed in the agent database's `transcript_quarantine` table, and skipped by every
 * read (the active branch ends at its last good ancestor).
 */
export interface QuarantinedRow {
  readonly sessionId: string;
  readonly seq: number;
  readonly id: string;
  /** What is wrong with it ("is not valid JSON (…)"). */
  readonly problem: string;
  /** When it was set aside, ISO. */
  readonly quarantinedAt: string;
}

/** What replaying one gone owner's journal did. */
export interface AppendReplay {
  readonly file: string;
  /** Entries stored by the replay: journaled, but not yet folded when the owner stopped. */
  readonly stored: number;
  /** Entries the owner had folded already. */
  readonly alreadyStored: number;
  /** Lines that could not be stored, with why (a torn last line, a conflict, a missing parent). */
  readonly problems: readonly { readonly line: number; readonly problem: string }[];
}

/** Throws a SessionStoreError listing everything wrong with an entry's tree fields (every backend checks the same). */
export function assertEntryShape(entry: TranscriptEntry): void {
  const problems: string[] = [];
  if (typeof entry.type !== "string" || entry.type === "") problems.push("type must be a non-empty string");
  if (typeof entry.id !== "string" || entry.id === "") problems.push("id must be a non-empty string");
  if (entry.parentId !== null && typeof entry.parentId !== "string")
    problems.push("parentId must be a string or null");
  if (typeof entry.timestamp !== "string") problems.push("timestamp must be a string");
  if (entry.parentId === entry.id) problems.push("an entry cannot be its own parent");
  if (problems.length > 0) {
    throw new SessionStoreError(
      `invalid transcript entry ${JSON.stringify(entry.id)}: ${problems.join("; ")}`,
    );
  }
}

/** JSON with object keys sorted, so that two equal entries built in another key order compare equal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return inner;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(inner).sort()) sorted[key] = (inner as Record<string, unknown>)[key];
    return sorted;
  });
}
