// The requested lines of a text file in bounded memory: a window over a stream of chunks keeping only the
// output plus one line's worth of bytes, then the file's line count under a budget, with pi's offset and limit
// arithmetic and continuation notes. Owns: that window and the text answer. Does not own: where the bytes
// come from (read-source.ts), deciding that a file is text (read-sniffing.ts) or the tool (read-tool.ts).
import { formatSize } from "@earendil-works/pi-coding-agent";
import { BINARY_SNIFF_BYTES } from "./read-sniffing.ts";
import { aborted, READ_CHUNK_BYTES, type ReadableFile } from "./read-source.ts";
import type { BoundedReadDetails } from "./read-tool.ts";

const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);

/** Why a text answer stopped: the limit asked for, pi's line or byte cap, or an over-long first line. */
export type TextStop = "limit" | "lines" | "bytes" | "line-length";

/**
 * The lines `[start, start + wanted)` of a stream of chunks, under a byte budget, keeping no more than the
 * output plus one line's worth of bytes; then the file's line count, for at most `countScanBytes` more.
 * Lines are pi's (`text.split("\n")`): a line ends at "\n" (a "\r" before it stays), and what follows the last
 * "\n" is a line even when it is empty, so "a\nb\n" is three lines and an empty file one.
 */
class LineWindow {
  readonly lines: string[] = [];
  /**
   * Why collecting stopped before the end of the file: `wanted` lines kept, the next line did not fit in
   * `maxBytes` with its "\n", or the first line alone is longer than `maxBytes` (kept cut).
   */
  closedBy: "count" | "bytes" | "line-length" | undefined;
  /** When `closedBy` is "bytes": the line that did not fit is empty (only its "\n" was too much). */
  emptyLineDidNotFit = false;
  /** The byte length of the over-long first line when `closedBy` is "line-length" and its end was reached. */
  longLineBytes: number | undefined;
  #completedLines = 0;
  #currentLineBytes = 0;
  #parts: Buffer[] = [];
  #keptBytes = 0;
  #outputBytes = 0;
  #closed = false;
  #longLineOpen = false;
  #bytesAfterClose = 0;

  readonly start: number;
  readonly wanted: number;
  readonly maxBytes: number;
  readonly countScanBytes: number;

  constructor(window: {
    readonly start: number;
    readonly wanted: number;
    readonly maxBytes: number;
    readonly countScanBytes: number;
  }) {
    this.start = window.start;
    this.wanted = window.wanted;
    this.maxBytes = window.maxBytes;
    this.countScanBytes = window.countScanBytes;
    this.#closeIfNothingWanted();
  }

  /** Whether reading further can change nothing: the output is decided and the counting budget spent. */
  get satisfied(): boolean {
    return this.#closed && this.#bytesAfterClose >= this.countScanBytes;
  }

  push(chunk: Buffer): void {
    if (this.#closed) {
      this.#count(chunk, 0);
      this.#bytesAfterClose += chunk.length;
      return;
    }
    let position = 0;
    while (position < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, position);
      const end = newline === -1 ? chunk.length : newline;
      this.#take(chunk, position, end);
      if (this.#closed) {
        this.#count(chunk, end);
        this.#bytesAfterClose += chunk.length - end;
        return;
      }
      if (newline === -1) return;
      this.#endLine();
      position = newline + 1;
      if (this.#closed) {
        this.#count(chunk, position);
        this.#bytesAfterClose += chunk.length - position;
        return;
      }
    }
  }

  /**
   * The file's line count, at its end. As in pi (`text.split("\n")`), what follows the last "\n" is a line
   * even when it is empty: "a\nb\n" is three lines, the last one empty, and reading it all gives the text back
   * with its final newline (the model sees exactly what pi's read would show).
   */
  finish(): number {
    // An empty last line had no bytes to take: whether its "\n" fits is decided here.
    if (!this.#closed && this.#currentLineBytes === 0) this.#take(EMPTY, 0, 0);
    if (this.#closed) {
      if (this.#longLineOpen && this.#currentLineBytes > 0) this.longLineBytes = this.#currentLineBytes;
      this.#completedLines += 1;
    } else {
      this.#endLine();
    }
    return this.#completedLines;
  }

  get #collecting(): boolean {
    return !this.#closed && this.#completedLines + 1 >= this.start;
  }

  #take(chunk: Buffer, from: number, to: number): void {
    this.#currentLineBytes += to - from;
    if (!this.#collecting) return;
    // Keep a little over the budget: enough to cut an over-long line on a character boundary.
    const room = Math.min(to - from, this.maxBytes + 4 - this.#keptBytes);
    if (room > 0) {
      this.#parts.push(Buffer.from(chunk.subarray(from, from + room)));
      this.#keptBytes += room;
    }
    if (this.lines.length === 0 && this.#currentLineBytes > this.maxBytes) {
      this.lines.push(headOnCharBoundary(Buffer.concat(this.#parts, this.#keptBytes), this.maxBytes));
      this.#close("line-length");
      this.#longLineOpen = true;
    } else if (this.lines.length > 0 && this.#outputBytes + 1 + this.#currentLineBytes > this.maxBytes) {
      // No bytes taken and none before: the line is empty and complete (a "\n" here, or the end of the file).
      this.emptyLineDidNotFit = this.#currentLineBytes === 0;
      this.#close("bytes");
    }
  }

  #endLine(): void {
    if (this.#collecting) {
      const line = Buffer.concat(this.#parts, this.#keptBytes).toString("utf8");
      this.#outputBytes += (this.lines.length > 0 ? 1 : 0) + this.#currentLineBytes;
      this.lines.push(line);
      if (this.lines.length >= this.wanted) this.#close("count");
    }
    this.#completedLines += 1;
    this.#currentLineBytes = 0;
    this.#parts = [];
    this.#keptBytes = 0;
    this.#closeIfNothingWanted();
  }

  /** With no line wanted the window closes where its first line starts (so that line is known to exist). */
  #closeIfNothingWanted(): void {
    if (!this.#closed && this.wanted <= 0 && this.#completedLines + 1 >= this.start) this.#close("count");
  }

  #close(stop: "count" | "bytes" | "line-length"): void {
    this.#closed = true;
    this.closedBy = stop;
    this.#parts = [];
    this.#keptBytes = 0;
  }

  /** Counts the line ends in `chunk` from `from` on (the output is decided; only the total is still open). */
  #count(chunk: Buffer, from: number): void {
    let position = from;
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, position);
      if (newline === -1) {
        this.#currentLineBytes += chunk.length - position;
        return;
      }
      this.#currentLineBytes += newline - position;
      if (this.#longLineOpen) {
        this.longLineBytes = this.#currentLineBytes;
        this.#longLineOpen = false;
      }
      this.#completedLines += 1;
      this.#currentLineBytes = 0;
      position = newline + 1;
    }
  }
}

/** The first at most `maxBytes` bytes of a line as text, not cutting a UTF-8 character in two. */
function headOnCharBoundary(bytes: Buffer, maxBytes: number): string {
  let end = Math.min(bytes.length, maxBytes);
  // Back up over continuation bytes to the start of the character the cut falls in, unless it ends there.
  if (end < bytes.length) {
    while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  }
  return bytes.subarray(0, end).toString("utf8");
}

interface TextRead {
  readonly text: string;
  readonly details: Omit<BoundedReadDetails, "kind" | "path" | "sizeBytes">;
}

/**
 * The requested lines of a text file, with pi's continuation notes: what pi's read shows for the same file and
 * parameters, computed as pi does (its offset and limit arithmetic, and `truncateHead`, which does not count an
 * empty last line of the selection), but from the lines kept rather than the whole text. It differs only where
 * it must to stay bounded: the total is not given past the counting budget, and a first line over the byte limit
 * is shown cut where pi shows none of it.
 */
export async function readTextWindow(
  file: ReadableFile,
  head: Buffer,
  size: number,
  request: { readonly offset: number | undefined; readonly limit: number | undefined },
  limits: { readonly maxLines: number; readonly maxBytes: number; readonly countScanBytes: number },
  signal: AbortSignal | undefined,
): Promise<TextRead> {
  const { offset, limit } = request;
  if (limit !== undefined && !(limit >= 0)) {
    // pi slices from the end of the file for a negative limit: not something to read in one pass.
    throw new Error(`limit must be 0 or more lines (got ${limit})`);
  }
  // pi's arithmetic, fractions included: its 0-based start line, shown as `startLine + 1` in the notes; the
  // selection is the lines from index floor(startLine) to index trunc(min(startLine + limit, total)), exclusive.
  const startLine = offset ? Math.max(0, offset - 1) : 0;
  const first = Math.floor(startLine) + 1;
  const userLines =
    limit === undefined ? Number.POSITIVE_INFINITY : Math.trunc(startLine + limit) - (first - 1);
  // One line past the cap: pi does not count an empty last line of the selection, so maxLines + 1 lines of
  // which the last is empty are shown whole.
  const window = new LineWindow({
    start: first,
    wanted: Math.min(userLines, limits.maxLines + 1),
    maxBytes: limits.maxBytes,
    countScanBytes: limits.countScanBytes,
  });
  window.push(head);
  let position = head.length;
  let atEnd = head.length < BINARY_SNIFF_BYTES;
  // Once satisfied, one more read still runs when the file may end right here, so the total is known.
  while (!atEnd && !(window.satisfied && position < size)) {
    if (signal?.aborted) throw aborted();
    const chunk = await file.read(READ_CHUNK_BYTES);
    if (chunk.length === 0) {
      atEnd = true;
      break;
    }
    position += chunk.length;
    window.push(chunk);
  }
  // Unknown only when the window closed before the end: after a "\n", so a line follows what it kept.
  const totalLines = atEnd ? window.finish() : undefined;
  if (totalLines !== undefined && startLine >= totalLines) {
    throw new Error(`Offset ${offset} is beyond end of file (${totalLines} lines total)`);
  }
  const { lines, closedBy } = window;
  const shownFrom = startLine + 1;
  const base = { firstLine: first, ...(totalLines === undefined ? {} : { totalLines }) };
  const ofTotal = totalLines === undefined ? `of a ${formatSize(size)} file` : `of ${totalLines}`;

  if (closedBy === "line-length") {
    // pi shows nothing of such a line and points at bash; this shows its start and how to go past it.
    const text = lines[0] ?? "";
    const length =
      window.longLineBytes === undefined
        ? `longer than ${formatSize(limits.countScanBytes)}`
        : formatSize(window.longLineBytes);
    return {
      text: `${text}\n\n[Line ${first} is ${length}, over the ${formatSize(limits.maxBytes)} limit: showing its first ${formatSize(Buffer.byteLength(text))}. Use offset=${first + 1} to continue after it.]`,
      details: { ...base, lastLine: first, nextOffset: first + 1, truncatedBy: "line-length" },
    };
  }

  // The selection's line count, and whether all of it was kept (the window stops on bytes only inside it).
  const selected = Math.min(
    userLines,
    totalLines === undefined ? Number.POSITIVE_INFINITY : totalLines - first + 1,
  );
  const kept = lines.length;
  // pi's truncateHead counts the selection's lines without an empty last one (it ends the text with "\n").
  const countedLines = kept >= 2 && lines[kept - 1] === "" ? kept - 1 : kept;
  if (kept === selected && countedLines <= limits.maxLines) {
    // Not truncated: the selection whole, and pi's note when the limit stopped it before the end.
    const text = lines.join("\n");
    const details = { ...base, lastLine: first + kept - 1 };
    if (limit === undefined) return { text, details };
    // pi's expressions, in its order: with a fractional offset or limit the floating-point results differ.
    const endLine = Math.min(startLine + limit, totalLines ?? Number.POSITIVE_INFINITY);
    const userLimitedLines = endLine - startLine;
    const stoppedAt = startLine + userLimitedLines;
    if (totalLines !== undefined && !(stoppedAt < totalLines)) return { text, details };
    const more =
      totalLines === undefined
        ? `More lines in file (${formatSize(size)})`
        : `${totalLines - stoppedAt} more lines in file`;
    return {
      text: `${text}\n\n[${more}. Use offset=${stoppedAt + 1} to continue.]`,
      details: { ...details, nextOffset: stoppedAt + 1, truncatedBy: "limit" },
    };
  }

  // Truncated: as many lines as fit both limits. pi says "bytes" only when a line of its count did not fit:
  // not when the byte limit was passed by the selection's final "\n" alone (before an empty last line).
  const shown = Math.min(kept, limits.maxLines);
  const lastSelected = first + selected - 1;
  const byBytes =
    closedBy === "bytes" &&
    kept < limits.maxLines &&
    !(window.emptyLineDidNotFit && first + kept === lastSelected);
  const endLineDisplay = shownFrom + shown - 1;
  const limitNote = byBytes ? ` (${formatSize(limits.maxBytes)} limit)` : "";
  return {
    text: `${lines.slice(0, shown).join("\n")}\n\n[Showing lines ${shownFrom}-${endLineDisplay} ${ofTotal}${limitNote}. Use offset=${endLineDisplay + 1} to continue.]`,
    details: {
      ...base,
      lastLine: first + shown - 1,
      nextOffset: endLineDisplay + 1,
      truncatedBy: byBytes ? "bytes" : "lines",
    },
  };
}
