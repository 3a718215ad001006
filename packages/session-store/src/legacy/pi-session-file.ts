// Reading a pi JSONL session file (format v1–v3) into store-ready entries. Owns: line-by-line parsing with
// every malformed line reported by line number, the header check, pi's v1→v2→v3 migration
// (`migrateSessionEntries` in pi-coding-agent 0.87.1 `dist/core/session-manager.js`) and the checks the
// store needs (string ids and timestamps, parents that exist). Pure: text in, entries and problems out.
// Does not own: reading files or writing the store (import.ts).
//
// One deliberate difference from pi: v1 entries get ids derived from the session id and the line number
// (8 hex chars of a SHA-256) instead of pi's random ones, so importing the same file twice yields the same
// ids and the second import changes nothing. The model context is unaffected: ids never reach the model.
import { createHash } from "node:crypto";
import type { TranscriptEntry, TranscriptHeader } from "../transcript.ts";
import type { ImportNote } from "./report.ts";

/** pi's current session format version (`CURRENT_SESSION_VERSION`). */
export const PI_SESSION_FORMAT_VERSION = 3;

export interface ParsedPiSession {
  /** The header as stored (pi's header fields verbatim, `version` raised to 3). */
  readonly header: TranscriptHeader;
  /** The version the file was written in (1 when its header has none). */
  readonly formatVersion: number;
  /** Entries in file order, migrated to v3, each parent present before its child. */
  readonly entries: readonly TranscriptEntry[];
  /** The 1-based line of each entry in `entries`, same index. */
  readonly entryLines: readonly number[];
  /** Lines or entries left out, with why. */
  readonly skipped: readonly ImportNote[];
  /** Entries changed so the store accepts them, with why (pi's context from them is unchanged). */
  readonly repaired: readonly ImportNote[];
}

export type PiSessionParse =
  | { readonly ok: true; readonly session: ParsedPiSession }
  | { readonly ok: false; readonly reason: string; readonly skipped: readonly ImportNote[] };

type MutableEntry = { [field: string]: unknown };

interface ParsedLine {
  readonly line: number;
  readonly value: MutableEntry;
}

/** Parses and migrates one pi session file's text. `file` only labels the notes. */
export function parsePiSessionText(text: string, file: string): PiSessionParse {
  const skipped: ImportNote[] = [];
  const repaired: ImportNote[] = [];
  const parsed: ParsedLine[] = [];
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      skipped.push({ file, line, reason: `malformed JSON (${errorMessage(error)})` });
      continue;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      skipped.push({ file, line, reason: "not a JSON object" });
      continue;
    }
    parsed.push({ line, value: value as MutableEntry });
  }

  const first = parsed[0];
  if (first === undefined)
    return { ok: false, reason: "no session header: the file has no JSON lines", skipped };
  if (first.value.type !== "session" || typeof first.value.id !== "string" || first.value.id === "") {
    return {
      ok: false,
      reason: `not a pi session file: line ${first.line} is not a session header ({"type":"session","id":...})`,
      skipped,
    };
  }
  const headerValue = first.value;
  const sessionId = headerValue.id as string;
  const formatVersion = typeof headerValue.version === "number" ? headerValue.version : 1;
  if (formatVersion > PI_SESSION_FORMAT_VERSION) {
    return {
      ok: false,
      reason: `session format version ${formatVersion} is newer than the supported ${PI_SESSION_FORMAT_VERSION}`,
      skipped,
    };
  }

  // Migrate on copies, in pi's order and with pi's indexing (the parsed list, header included).
  const values = parsed.map(({ value }) => structuredClone(value));
  if (formatVersion < 2) migrateV1ToV2(values, sessionId, parsed);
  if (formatVersion < 3) migrateV2ToV3(values);

  const entries: TranscriptEntry[] = [];
  const entryLines: number[] = [];
  const seen = new Map<string, string>();
  for (const [index, value] of values.entries()) {
    const line = parsed[index]?.line ?? 0;
    if (index === 0) continue;
    if (value.type === "session") {
      // pi indexes no second header (its getEntries() filters them out), so neither do we.
      skipped.push({ file, line, reason: "a second session header; pi ignores it" });
      continue;
    }
    const shapeProblem = entryShapeProblem(value);
    if (shapeProblem !== undefined) {
      skipped.push({ file, line, reason: shapeProblem });
      continue;
    }
    const id = value.id as string;
    const serialised = JSON.stringify(value);
    const earlier = seen.get(id);
    if (earlier !== undefined) {
      skipped.push({
        file,
        line,
        reason:
          earlier === serialised
            ? `entry ${id} repeats an earlier line verbatim`
            : `entry id ${id} is already used by an earlier line with other content; pi would keep only one`,
      });
      continue;
    }
    if (value.parentId === undefined) {
      value.parentId = null;
      repaired.push({
        file,
        line,
        reason: `entry ${id} had no parentId; stored as a root (pi reads it as one)`,
      });
    } else if (value.parentId !== null && !seen.has(value.parentId as string)) {
      const parent = value.parentId as string;
      value.parentId = null;
      repaired.push({
        file,
        line,
        reason:
          parent === id
            ? `entry ${id} named itself as its parent; stored as a root`
            : `entry ${id}'s parent ${parent} is not an earlier entry of the file; stored as a root (pi's branch stops there too)`,
      });
    }
    seen.set(id, JSON.stringify(value));
    entries.push(value as unknown as TranscriptEntry);
    entryLines.push(line);
  }

  const header = { ...headerValue, version: PI_SESSION_FORMAT_VERSION } as unknown as TranscriptHeader;
  if (typeof header.timestamp !== "string" || typeof header.cwd !== "string") {
    return { ok: false, reason: "the session header lacks its timestamp or cwd", skipped };
  }
  return { ok: true, session: { header, formatVersion, entries, entryLines, skipped, repaired } };
}

/** pi's v1→v2: every non-header entry gets an id and the previous entry as parent; compaction indexes become ids. */
function migrateV1ToV2(values: MutableEntry[], sessionId: string, parsed: readonly ParsedLine[]): void {
  const ids = new Set<string>();
  let previousId: string | null = null;
  for (const [index, entry] of values.entries()) {
    if (entry.type === "session") {
      entry.version = 2;
      continue;
    }
    const id = stableEntryId(sessionId, parsed[index]?.line ?? index, ids);
    ids.add(id);
    entry.id = id;
    entry.parentId = previousId;
    previousId = id;
    if (entry.type === "compaction") {
      if (typeof entry.firstKeptEntryIndex === "number") {
        const target = values[entry.firstKeptEntryIndex];
        if (target && target.type !== "session") entry.firstKeptEntryId = target.id;
        delete entry.firstKeptEntryIndex;
      }
    }
  }
}

/** pi's v2→v3: the `hookMessage` role became `custom`. */
function migrateV2ToV3(values: MutableEntry[]): void {
  for (const entry of values) {
    if (entry.type === "session") {
      entry.version = 3;
      continue;
    }
    const message = entry.message;
    if (entry.type === "message" && message !== null && typeof message === "object") {
      const record = message as MutableEntry;
      if (record.role === "hookMessage") record.role = "custom";
    }
  }
}

function stableEntryId(sessionId: string, line: number, taken: ReadonlySet<string>): string {
  for (let attempt = 0; ; attempt++) {
    const id = createHash("sha256").update(`${sessionId}\n${line}\n${attempt}`).digest("hex").slice(0, 8);
    if (!taken.has(id)) return id;
  }
}

function entryShapeProblem(value: MutableEntry): string | undefined {
  if (typeof value.type !== "string" || value.type === "") return "entry without a type";
  if (typeof value.id !== "string" || value.id === "") return `${value.type} entry without an id`;
  if (value.parentId !== undefined && value.parentId !== null && typeof value.parentId !== "string") {
    return `entry ${value.id}: parentId is neither a string nor null`;
  }
  if (typeof value.timestamp !== "string") return `entry ${value.id} has no timestamp`;
  return undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
