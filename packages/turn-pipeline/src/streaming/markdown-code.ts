// Code regions of a complete Markdown text: fenced blocks, indented blocks and inline code spans.
// Owns: the "is this offset inside code?" answer the final-text strippers (reasoning tags, reply directives,
// MEDIA lines) need so that literal examples in code are left alone. Does not own streaming code state (the
// streaming stripper carries its own) nor fence spans for chunking (fences.ts).
//
// OpenClaw answers this with a full micromark/mdast parse (CommonMark + GFM tables). This is a line scanner
// for the same top-level rules: fences (``` / ~~~, info string, closer of the same kind and ≥ length, an
// unclosed fence runs to the end), indented code (4 columns, not inside a paragraph), and inline spans
// (a run of n backticks closed by the next run of exactly n, within one paragraph, backslash escapes
// outside code). Deliberate deviation: block containers (lists, block quotes) are not parsed, so a fence or
// indented code nested in a list item is not seen as code.

import { hasSpaceRun } from "./text-scan.ts";

export type CodeRegion = { start: number; end: number; block: boolean };

const FENCE_OPEN_RE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/**
 * Code regions sorted by start; [start, end) offsets into `text`.
 * Lines are classified by their first characters (a line starting with a letter is paragraph text without
 * any slicing or regex); only fence, heading and indented-code candidates are sliced and matched.
 */
export function findCodeRegions(text: string): readonly CodeRegion[] {
  // `/[`~\t]| {4}/.test(text)`: three indexOf scans and a strided look for four blanks (text-scan.ts) are
  // several times faster than that regex on long text
  if (!text.includes("`") && !text.includes("~") && !text.includes("\t") && !hasSpaceRun(text, 4)) return [];
  // parsing one reply runs several passes over the same text (MEDIA lines, directives, whitespace), each
  // asking for its code regions: the last answer is kept (one entry; regions are never mutated)
  if (text === lastText) return lastRegions;
  const regions = scanCodeRegions(text);
  lastText = text;
  lastRegions = regions;
  return regions;
}

let lastText: string | undefined;
let lastRegions: readonly CodeRegion[] = [];

function scanCodeRegions(text: string): CodeRegion[] {
  const regions: CodeRegion[] = [];
  const inlineRanges: { start: number; end: number }[] = [];
  let paragraphStart = -1;
  let paragraphEnd = -1;
  const closeParagraph = (): void => {
    if (paragraphStart !== -1) inlineRanges.push({ start: paragraphStart, end: paragraphEnd });
    paragraphStart = -1;
  };
  const length = text.length;
  let start = 0;
  for (;;) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? length : newline;
    let next = newline === -1 ? -1 : newline + 1; // start of the line to look at next, -1 at the end
    const first = leadingMarkerCode(text, start, end);
    if (isBlankLine(text, start, end)) closeParagraph();
    else if ((first === BACKTICK || first === TILDE) && openFence(lineWithoutCR(text, start, end))) {
      const marker = openFence(lineWithoutCR(text, start, end)) ?? "";
      closeParagraph();
      const markerCode = marker.charCodeAt(0);
      let closeEnd = -1;
      let cursor = next;
      while (cursor !== -1) {
        const closeNewline = text.indexOf("\n", cursor);
        const lineEnd = closeNewline === -1 ? length : closeNewline;
        if (leadingMarkerCode(text, cursor, lineEnd) === markerCode) {
          const match = FENCE_CLOSE_RE.exec(text.slice(cursor, lineEnd).replace(/\r$/, ""));
          if (match?.[1] && match[1].charCodeAt(0) === markerCode && match[1].length >= marker.length) {
            closeEnd = lineEnd;
            next = closeNewline === -1 ? -1 : closeNewline + 1;
            break;
          }
        }
        cursor = closeNewline === -1 ? -1 : closeNewline + 1;
      }
      if (closeEnd === -1) {
        // an unclosed fence runs to the end of the text
        regions.push({ start, end: length, block: true });
        break;
      }
      regions.push({ start, end: closeEnd, block: true });
    } else if (paragraphStart === -1 && indentColumnsAt(text, start, end) >= 4) {
      let lastEnd = end;
      let cursor = next;
      next = -1;
      while (cursor !== -1) {
        const lineNewline = text.indexOf("\n", cursor);
        const lineEnd = lineNewline === -1 ? length : lineNewline;
        const following = lineNewline === -1 ? -1 : lineNewline + 1;
        if (!isBlankLine(text, cursor, lineEnd)) {
          if (indentColumnsAt(text, cursor, lineEnd) < 4) break;
          lastEnd = lineEnd;
        }
        cursor = following;
      }
      regions.push({ start, end: lastEnd, block: true });
      // resume after the last indented line (blank lines after it are looked at again, as blank lines)
      next = lastEnd < length ? lastEnd + 1 : -1;
    } else if (first === HASH && HEADING_RE.test(lineWithoutCR(text, start, end))) {
      closeParagraph();
      inlineRanges.push({ start, end });
    } else if (paragraphStart === -1) {
      paragraphStart = start;
      paragraphEnd = end;
    } else paragraphEnd = end;
    if (next === -1) break;
    start = next;
  }
  closeParagraph();
  for (const range of inlineRanges) collectInlineSpans(text, range.start, range.end, regions);
  regions.sort((left, right) => left.start - right.start);
  return regions;
}

const BACKTICK = 96;
const TILDE = 126;
const HASH = 35;
const HEADING_RE = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const FENCE_CLOSE_RE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/** The fence marker of an opening fence line, or undefined. */
function openFence(line: string): string | undefined {
  const fence = FENCE_OPEN_RE.exec(line);
  const marker = fence?.[2];
  if (!fence || !marker) return undefined;
  return marker.startsWith("`") && (fence[3] ?? "").includes("`") ? undefined : marker;
}

/** The first character after at most three spaces (-1 for none): fence markers and headings start there. */
function leadingMarkerCode(text: string, start: number, end: number): number {
  let at = start;
  while (at < end && at - start < 3 && text.charCodeAt(at) === 32) at++;
  return at < end ? text.charCodeAt(at) : -1;
}

function lineWithoutCR(text: string, start: number, end: number): string {
  return end > start && text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
}

/** `line.trim() === ""` without slicing when the line starts with a printable ASCII character. */
function isBlankLine(text: string, start: number, end: number): boolean {
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code === 32 || (code >= 9 && code <= 13)) continue;
    if (code < 127) return false;
    return text.slice(at, end).trim() === "";
  }
  return true;
}

function indentColumnsAt(text: string, start: number, end: number): number {
  let columns = 0;
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code === 32) columns += 1;
    else if (code === 9) columns += 4 - (columns % 4);
    else break;
  }
  return columns;
}

function collectInlineSpans(text: string, from: number, to: number, regions: CodeRegion[]): void {
  let index = text.indexOf("`", from);
  while (index !== -1 && index < to) {
    let runStart = index;
    let escaped = false;
    let backslashes = 0;
    for (let b = runStart - 1; b >= from && text.charCodeAt(b) === 92; b--) backslashes++;
    if (backslashes % 2 === 1) escaped = true;
    let runEnd = runStart;
    while (runEnd < to && text.charCodeAt(runEnd) === 96) runEnd++;
    if (escaped) {
      runStart += 1;
      if (runStart >= runEnd) {
        index = text.indexOf("`", runEnd);
        continue;
      }
    }
    const length = runEnd - runStart;
    let search = runEnd;
    let closeEnd = -1;
    while (search < to) {
      const next = text.indexOf("`", search);
      if (next === -1 || next >= to) break;
      let nextEnd = next;
      while (nextEnd < to && text.charCodeAt(nextEnd) === 96) nextEnd++;
      if (nextEnd - next === length) {
        closeEnd = nextEnd;
        break;
      }
      search = nextEnd;
    }
    if (closeEnd === -1) {
      index = text.indexOf("`", runEnd);
      continue;
    }
    regions.push({ start: runStart, end: closeEnd, block: false });
    index = text.indexOf("`", closeEnd);
  }
}

export function isInsideCode(index: number, regions: readonly CodeRegion[]): boolean {
  let low = 0;
  let high = regions.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const region = regions[middle];
    if (!region) return false;
    if (index < region.start) high = middle - 1;
    else if (index >= region.end) low = middle + 1;
    else return true;
  }
  return false;
}

/**
 * The fence `findCodeRegions` would be inside after the whole lines of `text`, starting inside `marker`
 * (undefined: outside any fence). Only fences matter: an indented block never takes a line a fence could
 * open or close on (those have at most three leading spaces), and paragraphs and headings never open one.
 * `text` must start at a line start. Used to follow the fence state of a text that arrives in pieces.
 */
export function fenceMarkerAfter(text: string, marker: string | undefined): string | undefined {
  let open = marker;
  // a line can only open or close a fence where a fence character is
  if (open === undefined ? !/[`~]/.test(text) : !text.includes(open.charAt(0))) return open;
  const length = text.length;
  let start = 0;
  for (;;) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? length : newline;
    const first = leadingMarkerCode(text, start, end);
    if (open === undefined) {
      if (first === BACKTICK || first === TILDE) open = openFence(lineWithoutCR(text, start, end));
    } else if (first === open.charCodeAt(0)) {
      const match = FENCE_CLOSE_RE.exec(lineWithoutCR(text, start, end));
      if (match?.[1] && match[1].charCodeAt(0) === first && match[1].length >= open.length) open = undefined;
    }
    if (newline === -1) return open;
    start = newline + 1;
  }
}

/** `text` (starting outside any fence) is one fenced block: its first line opens it, its last line closes it. */
export function isOneFencedBlock(text: string): boolean {
  const firstNewline = text.indexOf("\n");
  if (firstNewline === -1) return false;
  const marker = openFence(lineWithoutCR(text, 0, firstNewline));
  if (marker === undefined) return false;
  const markerCode = marker.charCodeAt(0);
  let start = firstNewline + 1;
  for (;;) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    let closes = false;
    if (leadingMarkerCode(text, start, end) === markerCode) {
      const match = FENCE_CLOSE_RE.exec(lineWithoutCR(text, start, end));
      closes =
        match?.[1] !== undefined && match[1].charCodeAt(0) === markerCode && match[1].length >= marker.length;
    }
    // the first closing line must be the last line
    if (closes || newline === -1) return closes && newline === -1;
    start = newline + 1;
  }
}
