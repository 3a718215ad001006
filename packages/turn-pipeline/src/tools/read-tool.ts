// The `read` tool over a path view, in bounded memory. Owns: streaming the file from its source and keeping
// only the requested lines (pi's own read tool loads the whole file, so 3 lines of a 500 MB file cost
// gigabytes), pi's limits and continuation notes, describing binary files instead of dumping them, handing the
// images pi can attach to pi's read tool under a size cap, and the host source (the model's path resolved in
// the view, the file opened without following a link or waiting on a FIFO). Does not own: the path rules
// (path-view.ts), the sandboxed source (file-operations.ts: a sandboxed command streams the bytes) or image
// decoding and resizing (pi's).
import { randomUUID } from "node:crypto";
import { constants, rmSync } from "node:fs";
import { type FileHandle, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@earendil-works/pi-ai";
import {
  createReadToolDefinition,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  defineTool,
  detectSupportedImageMimeTypeFromFile,
  formatSize,
  type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import { describeMounts, type PathView, resolveInView } from "./path-view.ts";

export interface BoundedReadToolOptions {
  /** Most lines one call returns. Default: pi's 2000. */
  readonly maxLines?: number | undefined;
  /** Most bytes of text one call returns. Default: pi's 50 KB. */
  readonly maxBytes?: number | undefined;
  /** Larger images are described instead of attached. Default 20 MB. */
  readonly maxImageBytes?: number | undefined;
  /**
   * Bytes read past the returned lines to count the file's lines for "of N"; past it the total is not given.
   * Default 16 MB.
   */
  readonly lineCountScanBytes?: number | undefined;
  /** Where files come from. Default: the host, through the view (`hostReadSource`). */
  readonly source?: ReadSource | undefined;
}

/** A file opened for the read tool: its size when opened and its bytes, in order from the start. */
export interface ReadableFile {
  /** The file as the model named it, absolute in the view. */
  readonly viewPath: string;
  readonly size: number;
  /**
   * The next bytes of the file: at most `maxBytes` (maybe fewer), and none at its end. They may be overwritten
   * by the next read (a source reuses its buffer): copy what is kept.
   */
  read(maxBytes: number): Promise<Buffer>;
  /** Stops reading; the rest of the file is not wanted. */
  close(): Promise<void>;
}

/**
 * Opens the file `requested` names (relative to the view's cwd, or absolute in the view), or throws a message
 * the model can act on: missing, outside the view, not a regular file.
 */
export type ReadSource = (requested: string, signal: AbortSignal | undefined) => Promise<ReadableFile>;

export interface BoundedReadDetails {
  readonly kind: "text" | "binary" | "image";
  /** The file as the model named it, absolute in the view. */
  readonly path: string;
  readonly sizeBytes: number;
  /** Text only: the first and last line returned (1-based; lastLine < firstLine when none). */
  readonly firstLine?: number;
  readonly lastLine?: number;
  /** Text only: the file's line count, when it was counted to the end. */
  readonly totalLines?: number;
  /** Text only: the offset that continues where this read stopped, when more lines follow. */
  readonly nextOffset?: number;
  /** Text only: why the output stopped before the end of the file, if it did. */
  readonly truncatedBy?: TextStop;
}

export const DEFAULT_MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const DEFAULT_LINE_COUNT_SCAN_BYTES = 16 * 1024 * 1024;
/** How much of the file's start decides "binary": NUL bytes or invalid UTF-8 in it. */
const BINARY_SNIFF_BYTES = 8 * 1024;
const READ_CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);

// pi's read schema, field for field (the model has learned it), built once.
const READ_PARAMETERS = Type.Object({
  path: Type.String({ description: "Path to the file to read (relative or absolute)" }),
  offset: Type.Optional(Type.Number({ description: "Line number to start reading from (1-indexed)" })),
  limit: Type.Optional(Type.Number({ description: "Maximum number of lines to read" })),
});

type TextStop = "limit" | "lines" | "bytes" | "line-length";

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

/** Whether a file's first bytes are not text: a NUL byte, or invalid UTF-8 (a character cut at the end of a
 * sniff shorter than the file excepted). */
function looksBinary(head: Buffer, wholeFile: boolean): boolean {
  if (head.includes(0)) return true;
  try {
    // `stream: true` holds back an incomplete last character instead of rejecting it.
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: !wholeFile });
    return false;
  } catch {
    return true;
  }
}

function startsWithBytes(head: Buffer, bytes: readonly number[], at = 0): boolean {
  return bytes.every((byte, index) => head[at + index] === byte);
}

function startsWithText(head: Buffer, text: string, at = 0): boolean {
  return head.length >= at + text.length && head.toString("latin1", at, at + text.length) === text;
}

/** What a binary file's magic bytes say it is ("a PNG image"), or undefined when they say nothing known. */
export function describeMagic(head: Buffer): string | undefined {
  if (startsWithBytes(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "a PNG image";
  if (startsWithBytes(head, [0xff, 0xd8, 0xff])) return "a JPEG image";
  if (startsWithText(head, "GIF87a") || startsWithText(head, "GIF89a")) return "a GIF image";
  if (startsWithText(head, "RIFF") && startsWithText(head, "WEBP", 8)) return "a WebP image";
  if (startsWithText(head, "RIFF") && startsWithText(head, "WAVE", 8)) return "WAV audio";
  if (startsWithText(head, "BM") && head.length >= 26) return "a BMP image";
  if (startsWithBytes(head, [0x7f, 0x45, 0x4c, 0x46])) return "an ELF executable";
  if (startsWithText(head, "MZ")) return "a Windows executable";
  if (
    startsWithBytes(head, [0xcf, 0xfa, 0xed, 0xfe]) ||
    startsWithBytes(head, [0xce, 0xfa, 0xed, 0xfe]) ||
    startsWithBytes(head, [0xfe, 0xed, 0xfa, 0xcf]) ||
    startsWithBytes(head, [0xfe, 0xed, 0xfa, 0xce])
  ) {
    return "a Mach-O executable";
  }
  if (startsWithBytes(head, [0x00, 0x61, 0x73, 0x6d])) return "a WebAssembly module";
  if (startsWithBytes(head, [0x1f, 0x8b])) return "gzip data";
  if (startsWithText(head, "BZh")) return "bzip2 data";
  if (startsWithBytes(head, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) return "xz data";
  if (startsWithBytes(head, [0x28, 0xb5, 0x2f, 0xfd])) return "zstd data";
  if (startsWithBytes(head, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])) return "a 7-zip archive";
  if (
    startsWithBytes(head, [0x50, 0x4b, 0x03, 0x04]) ||
    startsWithBytes(head, [0x50, 0x4b, 0x05, 0x06]) ||
    startsWithBytes(head, [0x50, 0x4b, 0x07, 0x08])
  ) {
    return "a zip archive";
  }
  if (startsWithText(head, "ustar", 257)) return "a tar archive";
  if (startsWithText(head, "%PDF-")) return "a PDF document";
  if (startsWithText(head, "SQLite format 3\u0000")) return "an SQLite database";
  if (startsWithText(head, "ftyp", 4)) return "an MP4/QuickTime media file";
  if (startsWithText(head, "ID3")) return "MP3 audio";
  if (startsWithText(head, "OggS")) return "Ogg media";
  if (startsWithText(head, "fLaC")) return "FLAC audio";
  if (startsWithBytes(head, [0xca, 0xfe, 0xba, 0xbe])) return "a Java class file or Mach-O universal binary";
  return undefined;
}

/** The next `length` bytes of the file, fewer only at its end. */
async function readFully(file: ReadableFile, length: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let filled = 0;
  while (filled < length) {
    const chunk = await file.read(length - filled);
    if (chunk.length === 0) break;
    // A copy: the source may reuse its buffer.
    parts.push(Buffer.from(chunk));
    filled += chunk.length;
  }
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, filled);
}

/** Bytes pi's image detection looks at. */
const IMAGE_SNIFF_BYTES = 4100;
let sniffDirectory: Promise<string> | undefined;

/**
 * pi's image type of a file from its first bytes. pi detects from a path only, and the file's own path is not
 * opened twice (it may have changed, or be the sandbox's): its first bytes go to a private temporary file.
 */
async function imageMimeTypeOf(head: Buffer): Promise<string | null> {
  sniffDirectory ??= mkdtemp(join(tmpdir(), "read-tool-sniff-")).then((dir) => {
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  });
  let sniff: string;
  try {
    sniff = join(await sniffDirectory, randomUUID());
    await writeFile(sniff, head.subarray(0, IMAGE_SNIFF_BYTES), { mode: 0o600, flag: "wx" });
  } catch {
    // No temporary directory to write in: the file is described as binary rather than not read at all.
    sniffDirectory = undefined;
    return null;
  }
  try {
    return await detectSupportedImageMimeTypeFromFile(sniff);
  } finally {
    await rm(sniff, { force: true });
  }
}

function aborted(): Error {
  return new Error("Operation aborted");
}

/** The open file, or an error a model can act on. */
async function openForReading(hostPath: string, requested: string): Promise<FileHandle> {
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below as not a regular file).
    // O_NOFOLLOW: the path has its links followed already; one appearing since is a race, not a file.
    return await open(hostPath, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new Error(`file "${requested}" does not exist`);
    if (code === "EACCES" || code === "EPERM") throw new Error(`permission denied reading "${requested}"`);
    if (code === "ELOOP") throw new Error(`file "${requested}" became a symbolic link while being read`);
    if (code === "EISDIR") throw new Error(`"${requested}" is a directory, not a file`);
    throw error;
  }
}

function kindOfNonFile(stats: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a named pipe";
  if (stats.isSocket()) return "a socket";
  return "a device";
}

/** A host file read in order through its handle. */
class HostReadableFile implements ReadableFile {
  readonly viewPath: string;
  readonly size: number;
  readonly #handle: FileHandle;
  readonly #buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  #position = 0;

  constructor(handle: FileHandle, viewPath: string, size: number) {
    this.#handle = handle;
    this.viewPath = viewPath;
    this.size = size;
  }

  async read(maxBytes: number): Promise<Buffer> {
    const length = Math.min(maxBytes, this.#buffer.length);
    const { bytesRead } = await this.#handle.read(this.#buffer, 0, length, this.#position);
    this.#position += bytesRead;
    return this.#buffer.subarray(0, bytesRead);
  }

  close(): Promise<void> {
    return this.#handle.close();
  }
}

/**
 * Files on the host: the path resolved in the view (links followed, none leaving it), then opened with
 * O_NOFOLLOW | O_NONBLOCK and refused unless it is a regular file, so a FIFO never blocks.
 */
export function hostReadSource(view: PathView): ReadSource {
  return async (requested) => {
    const { hostPath, viewPath } = await resolveInView(view, requested, "read");
    const handle = await openForReading(hostPath, requested);
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new Error(`"${requested}" is ${kindOfNonFile(stats)}, not a file`);
      return new HostReadableFile(handle, viewPath, stats.size);
    } catch (error) {
      await handle.close();
      throw error;
    }
  };
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
async function readTextWindow(
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

/**
 * pi's `read` tool over a path view: the same parameters and output notes, reading only what it returns.
 * Text is streamed (memory stays bounded whatever the file's size); binary files are described; images pi
 * attaches go to pi's read tool when no larger than `maxImageBytes`.
 */
export function createBoundedReadTool(
  view: PathView,
  options: BoundedReadToolOptions = {},
): ToolDefinition<typeof READ_PARAMETERS, BoundedReadDetails> {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxImageBytes = options.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES;
  const countScanBytes = options.lineCountScanBytes ?? DEFAULT_LINE_COUNT_SCAN_BYTES;
  const source = options.source ?? hostReadSource(view);
  return defineTool({
    name: "read",
    label: "read",
    description:
      `Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments (up to ${formatSize(maxImageBytes)}). ` +
      `For text files, output is truncated to ${maxLines} lines or ${maxBytes / 1024}KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete. ` +
      `Binary files are described, not shown. Relative paths start at ${view.cwd}; files are under ${describeMounts(view)}.`,
    promptSnippet: "Read file contents",
    promptGuidelines: ["Use read to examine files instead of cat or sed."],
    parameters: READ_PARAMETERS,
    execute: async (toolCallId, params, signal, _onUpdate, ctx) => {
      if (signal?.aborted) throw aborted();
      const file = await source(params.path, signal);
      try {
        const size = file.size;
        const head = await readFully(file, BINARY_SNIFF_BYTES);
        const magic = describeMagic(head);
        const detailsBase = { path: file.viewPath, sizeBytes: size };
        if (magic?.endsWith(" image")) {
          const mimeType = await imageMimeTypeOf(head);
          if (mimeType) {
            if (size > maxImageBytes) {
              return {
                content: [
                  {
                    type: "text",
                    text: `image file, ${size} bytes (${mimeType}): larger than the ${formatSize(maxImageBytes)} the read tool attaches, so not shown`,
                  },
                ],
                details: { kind: "image", ...detailsBase },
              };
            }
            // pi decodes, resizes and attaches; it gets the bytes read here, never the path to open again.
            const bytes =
              size <= head.length
                ? head.subarray(0, size)
                : Buffer.concat([head, await readFully(file, size - head.length)]);
            const piRead = createReadToolDefinition(view.cwd, {
              operations: {
                access: async () => {},
                readFile: async () => bytes,
                detectImageMimeType: async () => mimeType,
              },
            });
            const result = await piRead.execute(toolCallId, { path: file.viewPath }, signal, undefined, ctx);
            return { content: result.content, details: { kind: "image", ...detailsBase } };
          }
        }
        if (looksBinary(head, head.length >= size)) {
          return {
            content: [
              {
                type: "text",
                text: `binary file, ${size} bytes (${magic === undefined ? "unknown type" : `looks like ${magic}`}); its contents are not shown`,
              },
            ],
            details: { kind: "binary", ...detailsBase },
          };
        }
        const read = await readTextWindow(
          file,
          head,
          size,
          { offset: params.offset, limit: params.limit },
          { maxLines, maxBytes, countScanBytes },
          signal,
        );
        return {
          content: [{ type: "text", text: read.text }],
          details: { kind: "text", ...detailsBase, ...read.details },
        };
      } finally {
        await file.close();
      }
    },
  });
}
