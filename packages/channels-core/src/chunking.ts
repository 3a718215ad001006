// Splitting outbound text at a channel's limit. Owns: the per-channel limit (`textChunkLimit`, default 4000,
// capped by the adapter's `maxTextLength`), `chunkMode` ("length": break at the last newline, else
// whitespace, else a hard cut; "newline": prefer blank lines between paragraphs), and never breaking a code
// fence — except a fence that cannot fit, which is closed at the cut and reopened (with its info string) in
// the next chunk. Does not own: the fence grammar (`@agent-kernel/markdown`'s `scanFenceSpans`) or dialects
// (format.ts; `formatAndSplit` measures the formatted text).
//
// Like OpenClaw 2026.9.6's `chunkMarkdownText` (src/auto-reply/chunk.ts) in outcome; the code is our own and
// simpler (no paren-aware breakpoints, no grapheme clustering beyond surrogate pairs).
import { CHANNEL_DEFAULTS } from "@agent-kernel/config";
import { type FenceSpan, findFenceSpanAt, scanFenceSpans, sliceUtf16Safe } from "@agent-kernel/markdown";

/** How text is cut into messages: `length` fills each up to the limit, `newline` prefers paragraph breaks. */
export type ChunkMode = "length" | "newline";

/** One chunk with where it came from: `text` = `prefix + source.slice(start, end) + suffix`. */
export interface TextChunk {
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** A synthetic fence reopen line (`"```ts\n"`) when the previous chunk cut a fence; else "". */
  readonly prefix: string;
  /** A synthetic fence close (`"\n```"` or `"```"`) when this chunk cuts a fence; else "". */
  readonly suffix: string;
}

/** The text limit per message when the config sets none (`textChunkLimit`, 4000). */
export const DEFAULT_TEXT_CHUNK_LIMIT: number = CHANNEL_DEFAULTS.textChunkLimit;

/**
 * The limit a channel sends at: `textChunkLimit` (per account when set there, else the channel's, else
 * 4000), never above the adapter's hard `maxTextLength`.
 */
export function resolveTextLimit(
  config:
    | { readonly textChunkLimit?: number; readonly accounts?: Readonly<Record<string, object>> }
    | undefined,
  maxTextLength: number | undefined,
  accountId?: string,
): number {
  const account = accountId === undefined ? undefined : config?.accounts?.[accountId];
  const fromAccount =
    account !== undefined && "textChunkLimit" in account && typeof account.textChunkLimit === "number"
      ? account.textChunkLimit
      : undefined;
  const configured = fromAccount ?? config?.textChunkLimit ?? DEFAULT_TEXT_CHUNK_LIMIT;
  const limit = maxTextLength === undefined ? configured : Math.min(configured, maxTextLength);
  if (!(Number.isInteger(limit) && limit > 0))
    throw new RangeError(`text limit must be a positive integer, got ${limit}`);
  return limit;
}

/** Splits Markdown text into chunks of at most `limit` UTF-16 units. */
export function splitText(text: string, limit: number, mode: ChunkMode = "length"): string[] {
  return splitTextChunks(text, limit, mode).map((chunk) => chunk.text);
}

const PARAGRAPH_BREAK = /\n[ \t]*\n/g;

/** `splitText` with each chunk's source range and synthetic fence lines (for tests and re-splitting). */
export function splitTextChunks(text: string, limit: number, mode: ChunkMode = "length"): TextChunk[] {
  if (!(Number.isInteger(limit) && limit > 0))
    throw new RangeError(`chunk limit must be a positive integer, got ${limit}`);
  if (text === "") return [];
  if (text.length <= limit) return [{ text, start: 0, end: text.length, prefix: "", suffix: "" }];
  const spans = scanFenceSpans(text).spans;
  const chunks: TextChunk[] = [];
  let start = 0;
  let reopen: FenceSpan | undefined;
  while (start < text.length) {
    const prefix = reopen === undefined ? "" : `${reopenLine(reopen, limit)}\n`;
    const room = limit - prefix.length;
    if (text.length - start <= room) {
      chunks.push({ text: prefix + text.slice(start), start, end: text.length, prefix, suffix: "" });
      break;
    }
    reopen = undefined;
    const windowEnd = start + room;
    const cut = pickBreak(text, spans, start, windowEnd, mode);
    if (cut !== undefined) {
      chunks.push({ text: prefix + text.slice(start, cut.end), start, end: cut.end, prefix, suffix: "" });
      start = cut.next;
      continue;
    }
    // No safe break in the window: the window ends inside a fence that does not fit, or in one long word.
    const fence = findFenceSpanAt(spans, windowEnd);
    const split = fence === undefined ? undefined : fenceSplit(text, fence, start, windowEnd, limit);
    if (split !== undefined && !split.cutsFence) {
      chunks.push({ text: prefix + text.slice(start, split.end), start, end: split.end, prefix, suffix: "" });
      start = split.end;
      continue;
    }
    if (split !== undefined && fence !== undefined) {
      const suffix =
        split.end > 0 && text[split.end - 1] === "\n" ? closeLine(fence) : `\n${closeLine(fence)}`;
      chunks.push({
        text: prefix + text.slice(start, split.end) + suffix,
        start,
        end: split.end,
        prefix,
        suffix,
      });
      start = split.end;
      reopen = fence;
      continue;
    }
    const hard = avoidMarkerStart(
      text,
      start,
      Math.max(start + 1, start + sliceUtf16Safe(text, start, windowEnd).length),
    );
    chunks.push({ text: prefix + text.slice(start, hard), start, end: hard, prefix, suffix: "" });
    start = hard;
  }
  return chunks;
}

function closeLine(fence: FenceSpan): string {
  return `${fence.indent}${fence.marker}`;
}

/** The line that reopens a cut fence: its open line with the info string when that fits comfortably. */
function reopenLine(fence: FenceSpan, limit: number): string {
  const bare = closeLine(fence);
  return fence.openLine.length + bare.length + 3 <= limit ? fence.openLine : bare;
}

function isSafe(spans: readonly FenceSpan[], index: number): boolean {
  return findFenceSpanAt(spans, index) === undefined;
}

/** A break in `(start, windowEnd]`: the chunk ends at `end`, the next starts at `next` (whitespace dropped). */
function pickBreak(
  text: string,
  spans: readonly FenceSpan[],
  start: number,
  windowEnd: number,
  mode: ChunkMode,
): { end: number; next: number } | undefined {
  if (mode === "newline") {
    let best = -1;
    let bestNext = -1;
    PARAGRAPH_BREAK.lastIndex = start;
    for (let match = PARAGRAPH_BREAK.exec(text); match !== null; match = PARAGRAPH_BREAK.exec(text)) {
      if (match.index > windowEnd) break;
      if (match.index > start && isSafe(spans, match.index)) {
        best = match.index;
        bestNext = match.index + match[0].length;
      }
      PARAGRAPH_BREAK.lastIndex = match.index + 1;
    }
    if (best > start) return { end: best, next: skipNewlines(text, bestNext) };
  }
  for (let i = Math.min(windowEnd, text.length - 1); i > start; i--) {
    if (text.charCodeAt(i) === 10 && isSafe(spans, i)) return { end: i, next: skipNewlines(text, i + 1) };
  }
  for (let i = Math.min(windowEnd, text.length - 1); i > start; i--) {
    const code = text.charCodeAt(i);
    if ((code !== 32 && code !== 9) || !isSafe(spans, i)) continue;
    const next = skipSpaces(text, i);
    // a chunk starting with a marker run mid-line would read as a fence opener
    if (!startsMarkerRun(text, next)) return { end: i, next };
  }
  return undefined;
}

function skipSpaces(text: string, from: number): number {
  let i = from;
  while (i < text.length && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
  return i;
}

/** Three or more backticks or tildes start at `index`. */
function startsMarkerRun(text: string, index: number): boolean {
  const char = text[index];
  return (char === "`" || char === "~") && text[index + 1] === char && text[index + 2] === char;
}

/**
 * Moves a hard cut that would start the next chunk with a marker run (after up to three spaces: a fence
 * opener there) back to the last plain character before it, so the run stays mid-line.
 */
function avoidMarkerStart(text: string, start: number, cut: number): number {
  if (!startsMarkerRun(text, skipSpaces(text, cut))) return cut;
  for (let q = cut - 1; q > start; q--) {
    const code = text.charCodeAt(q);
    const plain = code !== 32 && code !== 9 && code !== 10 && code !== 96 && code !== 126;
    if (plain && !(code >= 0xdc00 && code <= 0xdfff)) return q;
  }
  return cut;
}

function skipNewlines(text: string, from: number): number {
  let i = from;
  while (i < text.length && text.charCodeAt(i) === 10) i++;
  return i;
}

/**
 * Where to cut inside a fence that does not fit: after the last line end that leaves room for the close
 * line, else a hard cut (the close line then needs a newline of its own). The first piece of a fence keeps
 * its whole open line; when even that does not fit, the cut goes before the fence (`cutsFence: false`).
 */
function fenceSplit(
  text: string,
  fence: FenceSpan,
  start: number,
  windowEnd: number,
  limit: number,
): { end: number; cutsFence: boolean } | undefined {
  const close = closeLine(fence);
  if (close.length * 2 + 3 > limit) return undefined;
  const openLineEnd = fence.start + fence.openLine.length + 1;
  const minEnd = start <= fence.start ? openLineEnd + 1 : start + 1;
  const lastEndWithNewline = windowEnd - close.length;
  for (let i = lastEndWithNewline - 1; i + 1 >= minEnd && i >= start; i--) {
    if (text.charCodeAt(i) === 10) return { end: i + 1, cutsFence: true };
  }
  const hardEnd = avoidMarkerStart(
    text,
    start,
    start + sliceUtf16Safe(text, start, windowEnd - close.length - 1).length,
  );
  if (hardEnd >= minEnd) return { end: hardEnd, cutsFence: true };
  if (fence.start > start) return { end: fence.start, cutsFence: false };
  // a fence at the chunk start whose open line alone does not fit: cut inside the open line (the rest of
  // it shows as the first code line of the next chunk)
  const insideOpenLine = start + sliceUtf16Safe(text, start, windowEnd - close.length - 1).length;
  return insideOpenLine > fence.start + fence.indent.length + fence.marker.length
    ? { end: insideOpenLine, cutsFence: true }
    : undefined;
}
