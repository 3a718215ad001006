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

export type CodeRegion = { start: number; end: number; block: boolean };

const FENCE_OPEN_RE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

function indentColumns(line: string): number {
  let columns = 0;
  for (const char of line) {
    if (char === " ") columns += 1;
    else if (char === "\t") columns += 4 - (columns % 4);
    else break;
  }
  return columns;
}

/** Code regions sorted by start; [start, end) offsets into `text`. */
export function findCodeRegions(text: string): CodeRegion[] {
  if (!/[`~\t]| {4}/.test(text)) return [];
  const regions: CodeRegion[] = [];
  const lines: { start: number; end: number }[] = [];
  let cursor = 0;
  while (cursor <= text.length) {
    const newline = text.indexOf("\n", cursor);
    const end = newline === -1 ? text.length : newline;
    lines.push({ start: cursor, end });
    if (newline === -1) break;
    cursor = newline + 1;
  }
  let paragraph: { start: number; end: number } | undefined;
  const inlineRanges: { start: number; end: number }[] = [];
  const closeParagraph = (): void => {
    if (paragraph) inlineRanges.push(paragraph);
    paragraph = undefined;
  };
  for (let index = 0; index < lines.length; index++) {
    const lineInfo = lines[index];
    if (!lineInfo) continue;
    const raw = text.slice(lineInfo.start, lineInfo.end);
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const blank = line.trim() === "";
    if (blank) {
      closeParagraph();
      continue;
    }
    const fence = FENCE_OPEN_RE.exec(line);
    const marker = fence?.[2];
    if (fence && marker && !(marker.startsWith("`") && (fence[3] ?? "").includes("`"))) {
      closeParagraph();
      let close = index + 1;
      let closed = false;
      for (; close < lines.length; close++) {
        const closeInfo = lines[close];
        if (!closeInfo) break;
        const candidate = text.slice(closeInfo.start, closeInfo.end).replace(/\r$/, "");
        const match = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(candidate);
        if (match?.[1] && match[1].charAt(0) === marker.charAt(0) && match[1].length >= marker.length) {
          closed = true;
          break;
        }
      }
      const last = lines[closed ? close : lines.length - 1] ?? lineInfo;
      regions.push({ start: lineInfo.start, end: last.end, block: true });
      index = closed ? close : lines.length;
      continue;
    }
    if (!paragraph && indentColumns(line) >= 4) {
      let last = index;
      for (let next = index + 1; next < lines.length; next++) {
        const nextInfo = lines[next];
        if (!nextInfo) break;
        const nextLine = text.slice(nextInfo.start, nextInfo.end).replace(/\r$/, "");
        if (nextLine.trim() === "") continue;
        if (indentColumns(nextLine) < 4) break;
        last = next;
      }
      const lastInfo = lines[last] ?? lineInfo;
      regions.push({ start: lineInfo.start, end: lastInfo.end, block: true });
      index = last;
      continue;
    }
    if (/^ {0,3}#{1,6}(?:[ \t]|$)/.test(line)) {
      closeParagraph();
      inlineRanges.push({ start: lineInfo.start, end: lineInfo.end });
      continue;
    }
    if (paragraph) paragraph.end = lineInfo.end;
    else paragraph = { start: lineInfo.start, end: lineInfo.end };
  }
  closeParagraph();
  for (const range of inlineRanges) collectInlineSpans(text, range.start, range.end, regions);
  regions.sort((left, right) => left.start - right.start);
  return regions;
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
