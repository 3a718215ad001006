// Markdown fence spans (``` and ~~~ blocks) and UTF-16-safe slicing for the streaming path.
// Owns: the line-based fence grammar OpenClaw 2026.9.6 uses for chunking (packages/markdown-core/src/fences.ts),
// so chunk boundaries never fall inside a fence. Does not own inline code or CommonMark block parsing
// (see markdown-code.ts for the code regions the final-text strippers use).

/** One fenced code block (backtick or tilde fence) in a buffer: its offsets `[start, end)`, opening line, marker and indent. */
export type FenceSpan = {
  start: number;
  end: number;
  openLine: string;
  marker: string;
  indent: string;
};

/** A fence still open at the end of a scanned buffer: what closes it and how to reopen it in the next block. */
export type OpenFence = {
  markerChar: string;
  markerLen: number;
  openLine: string;
  marker: string;
  indent: string;
};

/** What `scanFenceSpans` carries from one streamed buffer to the next: line start and the fence left open. */
export type FenceScanState = { atLineStart: boolean; open?: OpenFence };

const FENCE_LINE_AT_RE = /( {0,3})(`{3,}|~{3,})([^\r\n\u2028\u2029]*)\r?(?=\n|$)/y;

/** A fence line starting at `lineStart` (indent, marker, trailing text), or null. */
function matchFenceLineAt(buffer: string, lineStart: number): RegExpExecArray | null {
  let at = lineStart;
  while (at < lineStart + 3 && buffer.charCodeAt(at) === 32) at++;
  const code = buffer.charCodeAt(at);
  if (code !== 96 && code !== 126) return null;
  FENCE_LINE_AT_RE.lastIndex = lineStart;
  return FENCE_LINE_AT_RE.exec(buffer);
}

/** Scans fence spans; an unclosed fence runs to the end of the buffer and is carried in `state.open`. */
export function scanFenceSpans(
  buffer: string,
  state?: FenceScanState,
): { spans: FenceSpan[]; state: FenceScanState } {
  const spans: FenceSpan[] = [];
  const startsAtLineStart = state?.atLineStart ?? true;
  // no marker run at all (the common block): no fence line can match
  if (!state?.open && !buffer.includes("```") && !buffer.includes("~~~"))
    return { spans, state: { atLineStart: buffer.length === 0 ? startsAtLineStart : buffer.endsWith("\n") } };
  let open: (OpenFence & { start: number }) | undefined = state?.open
    ? { ...state.open, start: 0 }
    : undefined;
  // every line start is tried (as FENCE_LINE_RE's `(?:^|\n)` does), but only lines holding a marker run
  // ("```" or "~~~") within their first six characters can match: those are found with indexOf, the
  // lines between them are skipped without being visited, and the regex runs on the candidates only
  let nextTicks = buffer.indexOf("```");
  let nextTildes = buffer.indexOf("~~~");
  while (nextTicks !== -1 || nextTildes !== -1) {
    const markerAt =
      nextTildes === -1 || (nextTicks !== -1 && nextTicks < nextTildes) ? nextTicks : nextTildes;
    const start = buffer.lastIndexOf("\n", markerAt - 1) + 1;
    const newline = buffer.indexOf("\n", markerAt);
    const next = newline === -1 ? buffer.length : newline + 1;
    if (nextTicks !== -1 && nextTicks < next) nextTicks = buffer.indexOf("```", next);
    if (nextTildes !== -1 && nextTildes < next) nextTildes = buffer.indexOf("~~~", next);
    if (markerAt - start > 3) continue;
    const match = matchFenceLineAt(buffer, start);
    if (!match) continue;
    const [line, indent, marker, trailing] = match;
    if (indent === undefined || marker === undefined || trailing === undefined) continue;
    if (start === 0 && !startsAtLineStart) continue;
    const markerChar = marker.charAt(0);
    if (!open) {
      open = {
        start,
        markerChar,
        markerLen: marker.length,
        openLine: `${indent}${marker}${trailing}`,
        marker,
        indent,
      };
    } else if (
      open.markerChar === markerChar &&
      marker.length >= open.markerLen &&
      /^[ \t]*$/.test(trailing)
    ) {
      spans.push({
        start: open.start,
        end: start + line.length,
        openLine: open.openLine,
        marker: open.marker,
        indent: open.indent,
      });
      open = undefined;
    }
  }
  if (open)
    spans.push({
      start: open.start,
      end: buffer.length,
      openLine: open.openLine,
      marker: open.marker,
      indent: open.indent,
    });
  const atLineStart = buffer.length === 0 ? startsAtLineStart : buffer.endsWith("\n");
  if (!open) return { spans, state: { atLineStart } };
  const carried: OpenFence = {
    markerChar: open.markerChar,
    markerLen: open.markerLen,
    openLine: open.openLine,
    marker: open.marker,
    indent: open.indent,
  };
  return { spans, state: { atLineStart, open: carried } };
}

/** The fence strictly containing `index` (start < index < end); spans are sorted by start. */
export function findFenceSpanAt(spans: readonly FenceSpan[], index: number): FenceSpan | undefined {
  let low = 0;
  let high = spans.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const span = spans[mid];
    if (!span) break;
    if (index <= span.start) high = mid - 1;
    else if (index >= span.end) low = mid + 1;
    else return span;
  }
  return undefined;
}

/** True when a block may end at `index`: no fence span strictly contains it. */
export function isSafeFenceBreak(spans: readonly FenceSpan[], index: number): boolean {
  return !findFenceSpanAt(spans, index);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Slices without leaving half of a surrogate pair at either edge. */
export function sliceUtf16Safe(input: string, start: number, end?: number): string {
  const len = input.length;
  let from = start < 0 ? Math.max(len + start, 0) : Math.min(start, len);
  const to0 = end === undefined ? len : end < 0 ? Math.max(len + end, 0) : Math.min(end, len);
  let to = to0;
  if (to <= from) return "";
  if (
    from > 0 &&
    from < len &&
    isLowSurrogate(input.charCodeAt(from)) &&
    isHighSurrogate(input.charCodeAt(from - 1))
  )
    from += 1;
  if (to > 0 && to < len && isHighSurrogate(input.charCodeAt(to - 1)) && isLowSurrogate(input.charCodeAt(to)))
    to -= 1;
  return input.slice(from, to);
}
