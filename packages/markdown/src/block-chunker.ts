// Block chunker: splits streamed reply text into message-sized blocks that never break a code fence.
// Owns: OpenClaw 2026.9.6's EmbeddedBlockChunker break rules (minChars/maxChars; paragraph → newline →
// sentence → whitespace → hard cut; a forced cut inside a fence closes it and reopens it with its info string
// in the next block) and `flushOnParagraph`. Does not own when to drain (ReplyStream decides: text_end vs
// message_end, tool start) nor coalescing of emitted blocks (block-coalescer.ts).
//
// Cost: OpenClaw re-scans the whole buffer (fences, then every break kind) on every delta once the buffer
// passes minChars. Here a non-forced drain first asks an incremental probe whether a break exists; the probe
// scans each appended character once (line by line, tracking fence state), so text that cannot be broken yet
// costs O(delta), and the full break search runs only when it will emit at least minChars characters.
// Deliberate deviation: OpenClaw also reformats CommonMark *indented* code blocks into fences when it has to
// cut inside them (a micromark parse per drain); the kernel treats indented code as ordinary text.
import {
  type FenceSpan,
  findFenceSpanAt,
  isSafeFenceBreak,
  scanFenceSpans,
  sliceUtf16Safe,
} from "./fences.ts";

/** Where a block may end, best first: at a blank line (`paragraph`), a line end (`newline`) or a sentence end. */
export type BreakPreference = "paragraph" | "newline" | "sentence";

/** The size bounds (`minChars`, `maxChars`) and break rules a `BlockChunker` cuts streamed text by. */
export type BlockChunking = {
  minChars: number;
  maxChars: number;
  breakPreference?: BreakPreference;
  /** Emit each paragraph as soon as it is complete (channel `chunkMode: "newline"`). */
  flushOnParagraph?: boolean;
};

/** One block a `BlockChunker` emits: the text to send and the streamed text it came from. */
export type BlockChunk = {
  /** The block to send (with synthetic fence close/reopen lines when a fence was cut). */
  text: string;
  /** The slice of the streamed text this block came from (no synthetic lines). */
  sourceText: string;
};

type FenceSplit = { closeFenceLine: string; reopenFenceLine: string; fence: FenceSpan };
type BreakResult = { index: number; fenceSplit?: FenceSplit };

const WHITESPACE_RE = /\s/;

/** Normalises chunking options the way OpenClaw does: min ≥ 1, max ≥ min. */
export function normalizeChunking(chunking: BlockChunking): Required<BlockChunking> {
  const minChars = Math.max(1, Math.floor(chunking.minChars));
  const maxChars = Math.max(minChars, Math.floor(chunking.maxChars));
  return {
    minChars,
    maxChars,
    breakPreference: chunking.breakPreference ?? "paragraph",
    flushOnParagraph: chunking.flushOnParagraph ?? false,
  };
}

/** Cuts streamed Markdown into message-sized blocks as it arrives (`append`, then `drain`), never inside a code fence unless a fence outgrows `maxChars`, then closing and reopening it. */
export class BlockChunker {
  #buffer = "";
  #reopenPrefix = "";
  #bufferStartsAtLineStart = true;
  readonly #chunking: Required<BlockChunking>;
  readonly #probe: BreakProbe;
  // tracked on append because reading the (concatenated) buffer would flatten it on every delta
  #firstCode = -1;
  #firstNonSpace = -1;

  constructor(chunking: BlockChunking) {
    this.#chunking = normalizeChunking(chunking);
    this.#probe = new BreakProbe(this.#chunking.minChars, this.#chunking.breakPreference);
  }

  get chunking(): Readonly<Required<BlockChunking>> {
    return this.#chunking;
  }

  append(text: string): void {
    if (!text) return;
    if (!this.#buffer) this.#firstCode = text.charCodeAt(0);
    if (this.#firstNonSpace === -1) this.#firstNonSpace = firstNonSpaceCode(text);
    this.#buffer += text;
    this.#probe.feed(text);
  }

  /** Pending text, with the reopened fence line when the previous block cut a fence. */
  get bufferedText(): string {
    return this.#buffer ? `${this.#reopenPrefix}${this.#buffer}` : "";
  }

  hasBuffered(): boolean {
    return this.#buffer.length > 0;
  }

  /**
   * Characters a drain would look at now (pending text and a reopened fence line). A non-forced drain
   * emits nothing and changes nothing while this is below `minChars`, so a caller that drains at many
   * positions can append the text before the first position where this reaches `minChars` in one piece.
   */
  get pendingLength(): number {
    return this.#reopenPrefix.length + this.#buffer.length;
  }

  /** Drops pending text without emitting it. */
  reset(): void {
    this.#buffer = "";
    this.#reopenPrefix = "";
    this.#bufferStartsAtLineStart = true;
    this.#probe.reset(true);
    this.#firstCode = -1;
    this.#firstNonSpace = -1;
  }

  /** Emits every block the rules allow now; `force` empties the buffer (message or text end, tool start). */
  drain(force: boolean, emit: (chunk: BlockChunk) => void): void {
    if (!this.#buffer) return;
    const { minChars, maxChars, flushOnParagraph } = this.#chunking;
    if (!force) {
      const available = this.#reopenPrefix.length + this.#buffer.length;
      if (available < minChars) return;
      if (available < maxChars) {
        // a drain that emits nothing still drops leading newlines, or skips a resumed fence that only closes
        const first = this.#firstNonSpace;
        const startsWithNewline = this.#reopenPrefix
          ? this.#reopenPrefix.charCodeAt(0) === 10
          : this.#firstCode === 10;
        const consumesWithoutBreak =
          startsWithNewline || (this.#reopenPrefix.length > 0 && (first === 96 || first === 126));
        if (!consumesWithoutBreak && !flushOnParagraph && !this.#probe.mayBreak()) return;
      }
    }
    const before = this.#buffer.length;
    this.#drainBuffer(force, emit);
    if (this.#buffer.length !== before || force) this.#resetProbe();
  }

  #resetProbe(): void {
    const atLineStart = this.#reopenPrefix.length > 0 || this.#bufferStartsAtLineStart;
    this.#probe.reset(atLineStart);
    if (this.#reopenPrefix) this.#probe.feed(this.#reopenPrefix);
    if (this.#buffer) this.#probe.feed(this.#buffer);
    this.#firstCode = this.#buffer ? this.#buffer.charCodeAt(0) : -1;
    this.#firstNonSpace = firstNonSpaceCode(this.#buffer);
  }

  #drainBuffer(force: boolean, emit: (chunk: BlockChunk) => void): void {
    const chunking = this.#chunking;
    const { minChars, maxChars } = chunking;
    const prefixLength = this.#reopenPrefix.length;
    let source = this.bufferedText;
    if (source.length < minChars && !force) return;
    const startsAtLineStart = prefixLength > 0 || this.#bufferStartsAtLineStart;
    if (force && source.length <= maxChars && !this.#reopenPrefix) {
      if (!isBlank(source)) emit({ text: source, sourceText: this.#buffer });
      this.#bufferStartsAtLineStart = this.#buffer.endsWith("\n");
      this.#buffer = "";
      this.#reopenPrefix = "";
      return;
    }
    const { spans: fenceSpans, state: fenceState } = scanFenceSpans(source, {
      atLineStart: startsAtLineStart,
    });
    const openFence = fenceState.open ? fenceSpans.at(-1) : undefined;
    const removedFenceInfo: { at: number; length: number }[] = [];
    let removedFenceInfoLength = 0;
    for (const fence of fenceSpans) {
      fence.start -= removedFenceInfoLength;
      fence.end -= removedFenceInfoLength;
      const reopenFenceLine = resolveFenceReopenLine(fence, maxChars);
      if (!reopenFenceLine || reopenFenceLine === fence.openLine || fence.end - fence.start <= maxChars)
        continue;
      source =
        source.slice(0, fence.start) + reopenFenceLine + source.slice(fence.start + fence.openLine.length);
      const removedLength = fence.openLine.length - reopenFenceLine.length;
      removedFenceInfo.push({ at: fence.start + reopenFenceLine.length, length: removedLength });
      fence.openLine = reopenFenceLine;
      fence.end -= removedLength;
      removedFenceInfoLength += removedLength;
    }
    const originalIndex = (index: number): number =>
      removedFenceInfoLength === 0
        ? index
        : removedFenceInfo.reduce(
            (offset, removed) => offset + (removed.at <= index ? removed.length : 0),
            index,
          );
    const sourceOffset = (index: number): number => Math.max(0, originalIndex(index) - prefixLength);
    const emitSourceChunk = (text: string, from: number, to: number): void => {
      emit({ text, sourceText: this.#buffer.slice(sourceOffset(from), sourceOffset(to)) });
    };
    let start = 0;
    let reopenFence: FenceSplit | undefined;
    const resumedFence = prefixLength > 0 ? fenceSpans[0] : undefined;
    if (resumedFence) {
      const closeStart = findFenceCloseLineStart(source, resumedFence);
      if (closeStart >= prefixLength && !source.slice(prefixLength, closeStart).trim()) {
        start = skipLeadingNewlines(source, resumedFence.end);
      }
    }
    while (start < source.length) {
      const reopenPrefix = reopenFence ? `${reopenFence.reopenFenceLine}\n` : "";
      const remainingLength = reopenPrefix.length + (source.length - start);
      if (!force && remainingLength < minChars) break;
      if (chunking.flushOnParagraph && !force) {
        const paragraphBreak = findNextParagraphBreak(source, fenceSpans, start, minChars);
        const paragraphLimit = Math.max(1, maxChars - reopenPrefix.length);
        if (paragraphBreak && paragraphBreak.index - start <= paragraphLimit) {
          const chunk = `${reopenPrefix}${source.slice(start, paragraphBreak.index)}`;
          const nextStart = skipLeadingNewlines(source, paragraphBreak.index + paragraphBreak.length);
          if (!isBlank(chunk)) emitSourceChunk(chunk, start, nextStart);
          start = nextStart;
          reopenFence = undefined;
          continue;
        }
        if (remainingLength < maxChars) break;
      }
      const view = source.slice(start);
      const breakResult =
        force && remainingLength <= maxChars
          ? pickPreferredBreakIndex(view, fenceSpans, chunking, false, 1, start, openFence)
          : pickBreakIndex(
              view,
              fenceSpans,
              chunking,
              force ? 1 : undefined,
              start,
              maxChars - reopenPrefix.length,
              openFence,
            );
      if (breakResult.index <= 0) {
        if (force) {
          emitSourceChunk(`${reopenPrefix}${source.slice(start)}`, start, source.length);
          start = source.length;
          reopenFence = undefined;
        }
        break;
      }
      if (breakResult.fenceSplit) {
        const boundary = originalIndex(start + breakResult.index);
        let removedLength = 0;
        for (const removed of removedFenceInfo)
          if (removed.at + removedLength <= boundary) removedLength += removed.length;
        breakResult.index = sliceUtf16Safe(view, 0, boundary - removedLength - start).length;
      }
      const consumed = resolveBreakResult(breakResult, reopenPrefix, source, start);
      if (consumed === null) continue;
      if (consumed.chunk) emitSourceChunk(consumed.chunk, start, consumed.start);
      start = consumed.start;
      reopenFence = consumed.reopenFence;
      const nextLength = (reopenFence ? reopenFence.reopenFenceLine.length + 1 : 0) + (source.length - start);
      if (nextLength < minChars && !force) break;
      if (nextLength < maxChars && !force && !chunking.flushOnParagraph) break;
    }
    if (!reopenFence) start = skipLeadingNewlines(source, start);
    if (start === 0) return;
    const consumed = sourceOffset(start);
    if (consumed > 0) this.#bufferStartsAtLineStart = this.#buffer.charAt(consumed - 1) === "\n";
    this.#buffer = this.#buffer.slice(consumed);
    this.#reopenPrefix = reopenFence ? `${reopenFence.reopenFenceLine}\n` : "";
  }
}

/**
 * Answers "would a non-forced drain below maxChars find a break?" without rescanning: a safe newline or
 * sentence end at index ≥ minChars outside any fence. Paragraph breaks are newlines, so they are covered.
 * It is fed the appended text itself (never the growing buffer, whose concatenation V8 would flatten on
 * every read), tracking the fence state line by line: line-start characters one at a time, the rest of a
 * line in bulk (see `feed`).
 */
class BreakProbe {
  readonly #minChars: number;
  readonly #sentences: boolean;
  #pos = 0;
  #fence: { char: number; len: number } | undefined;
  #found = false;
  // current line
  #phase: 0 | 1 | 2 = 0; // 0 indent (≤3 spaces), 1 marker run, 2 rest
  #spaces = 0;
  #markerChar = 0;
  #markerLen = 0;
  #restBlank = true; // after the marker: only spaces/tabs (closer candidate)
  #lineInvalid = false; // U+2028/U+2029 or a CR before the line end: not a fence line at all
  #pendingCR = false;
  #lineEligible = true;
  #lineCandidate = false; // a sentence end inside the line at index ≥ minChars
  #lastPunctAt = -2; // index of the last character if it is . ! or ?

  constructor(minChars: number, preference: BreakPreference) {
    this.#minChars = minChars;
    this.#sentences = preference !== "newline";
  }

  reset(atLineStart: boolean): void {
    this.#pos = 0;
    this.#lastPunctAt = -2;
    this.#fence = undefined;
    this.#found = false;
    this.#startLine(atLineStart);
  }

  #startLine(eligible: boolean): void {
    this.#phase = 0;
    this.#spaces = 0;
    this.#markerChar = 0;
    this.#markerLen = 0;
    this.#restBlank = true;
    this.#lineInvalid = false;
    this.#pendingCR = false;
    this.#lineEligible = eligible;
    this.#lineCandidate = false;
  }

  /**
   * Line-start characters (indent, fence marker) go through `#step` one at a time; the rest of a line is
   * taken in bulk: the few characters that matter there (CR, U+2028/U+2029, a sentence end) are found with
   * regex searches whose results are kept for the whole call, so each character is looked at a constant
   * number of times however the text is split into lines.
   */
  feed(text: string): void {
    // a found break stays found until `reset`, and nothing else is read: the rest need not be scanned
    if (this.#found) return;
    const length = text.length;
    let nextInvalid = -2; // index of the next CR/U+2028/U+2029 at or after the cursor, -1 none, -2 unknown
    let nextSentence = -2; // index of the next ". " style pair (punctuation then non-newline whitespace)
    let i = 0;
    while (i < length) {
      if (this.#phase !== 2) {
        const first = text.charCodeAt(i);
        if (this.#phase === 0 && ((first | 32) >= 97 ? (first | 32) <= 122 : first >= 48 && first <= 57)) {
          // a line starting with an ASCII letter or digit (most lines): `#step`'s effect, without the call
          this.#pos++;
          if (this.#pendingCR) this.#lineInvalid = true;
          this.#pendingCR = false;
          this.#lastPunctAt = -2;
          this.#phase = 2;
          this.#markerLen = 0;
          this.#restBlank = false;
          i++;
          continue;
        }
        this.#step(text, i);
        i++;
        continue;
      }
      const newline = text.indexOf("\n", i);
      const end = newline === -1 ? length : newline;
      if (end > i) {
        const base = this.#pos - i; // absolute position of text[0]
        if (this.#pendingCR) this.#lineInvalid = true;
        if (!this.#lineInvalid) {
          if (nextInvalid !== -1 && nextInvalid < i) nextInvalid = indexOfLineInvalid(text, i);
          if (nextInvalid !== -1 && nextInvalid < end) {
            // a CR counts only when something other than the line's newline follows it
            const code = text.charCodeAt(nextInvalid);
            if (code !== 13 || nextInvalid < end - 1) this.#lineInvalid = true;
          }
        }
        // a sentence end counts only at index ≥ minChars: most of a block's text needs no search
        if (this.#sentences && !this.#lineCandidate && base + end - 2 >= this.#minChars) {
          if (this.#lastPunctAt === base + i - 1 && this.#lastPunctAt >= this.#minChars && isSpace(text, i))
            this.#lineCandidate = true;
          while (!this.#lineCandidate) {
            if (nextSentence !== -1 && nextSentence < i) {
              // pairs before minChars never count: the search starts where they would
              SENTENCE_PAIR_RE.lastIndex = Math.max(i, this.#minChars - base);
              nextSentence = SENTENCE_PAIR_RE.test(text) ? SENTENCE_PAIR_RE.lastIndex - 2 : -1;
            }
            if (nextSentence === -1 || nextSentence >= end - 1) break;
            if (base + nextSentence >= this.#minChars) this.#lineCandidate = true;
            else {
              SENTENCE_PAIR_RE.lastIndex = nextSentence + 1;
              nextSentence = SENTENCE_PAIR_RE.test(text) ? SENTENCE_PAIR_RE.lastIndex - 2 : -1;
            }
          }
        }
        if (this.#restBlank) {
          for (let j = i; j < end; j++) {
            const code = text.charCodeAt(j);
            if (code !== 32 && code !== 9 && code !== 13) {
              this.#restBlank = false;
              break;
            }
          }
        }
        const last = text.charCodeAt(end - 1);
        this.#pendingCR = last === 13;
        this.#lastPunctAt = last === 46 || last === 33 || last === 63 ? base + end - 1 : -2;
        this.#pos = base + end;
      }
      i = end;
      if (newline !== -1) {
        this.#step(text, i);
        i++;
      }
    }
  }

  /** One character, with every rule applied (line starts and newlines). */
  #step(text: string, i: number): void {
    const c = text.charCodeAt(i);
    const at = this.#pos++;
    if (c === 10) {
      this.#endLine(at);
      this.#lastPunctAt = -2;
      return;
    }
    if (this.#pendingCR) this.#lineInvalid = true;
    this.#pendingCR = c === 13;
    if (c === 0x2028 || c === 0x2029) this.#lineInvalid = true;
    // sentence end: the previous character was punctuation and this one is whitespace
    if (
      this.#lastPunctAt === at - 1 &&
      this.#lastPunctAt >= this.#minChars &&
      this.#sentences &&
      isSpace(text, i)
    ) {
      this.#lineCandidate = true;
    }
    this.#lastPunctAt = c === 46 || c === 33 || c === 63 ? at : -2;
    if (this.#phase === 0) {
      if (c === 32 && this.#spaces < 3) {
        this.#spaces++;
        return;
      }
      if (c === 96 || c === 126) {
        this.#phase = 1;
        this.#markerChar = c;
        this.#markerLen = 1;
        return;
      }
      this.#phase = 2;
      this.#markerLen = 0;
    } else if (this.#phase === 1) {
      if (c === this.#markerChar) {
        this.#markerLen++;
        return;
      }
      this.#phase = 2;
    }
    if (c !== 32 && c !== 9 && c !== 13) this.#restBlank = false;
  }

  #isFenceLine(): boolean {
    return this.#lineEligible && !this.#lineInvalid && this.#markerLen >= 3;
  }

  #endLine(newline: number): void {
    const minChars = this.#minChars;
    if (!this.#fence) {
      if (this.#isFenceLine()) this.#fence = { char: this.#markerChar, len: this.#markerLen };
      else if (
        this.#lineCandidate ||
        newline >= minChars ||
        (this.#sentences && this.#lastPunctAt === newline - 1 && this.#lastPunctAt >= minChars)
      ) {
        this.#found = true;
      }
    } else if (
      this.#isFenceLine() &&
      this.#restBlank &&
      this.#markerChar === this.#fence.char &&
      this.#markerLen >= this.#fence.len
    ) {
      this.#fence = undefined;
      if (newline >= minChars) this.#found = true;
    }
    this.#startLine(true);
  }

  mayBreak(): boolean {
    if (this.#found) return true;
    if (this.#fence) return false;
    // the partial last line: an opener-looking line is inside a fence that runs to the end of the buffer
    if (
      this.#isFenceLine() ||
      (this.#phase === 1 && this.#lineEligible && !this.#lineInvalid && this.#markerLen >= 3)
    )
      return false;
    if (this.#lineCandidate) return true;
    return this.#sentences && this.#lastPunctAt === this.#pos - 1 && this.#lastPunctAt >= this.#minChars;
  }
}

/**
 * The index of the next CR, U+2028 or U+2029 at or after `from`, or -1 (`/[\r\u2028\u2029]/` from `from`): three
 * indexOf scans, as a regex call costs more than the short line it usually searches, and a one-byte string
 * cannot hold the two line separators at all.
 */
function indexOfLineInvalid(text: string, from: number): number {
  let found = text.indexOf("\r", from);
  const end = found === -1 ? text.length : found;
  const lineSeparator = text.indexOf("\u2028", from);
  if (lineSeparator !== -1 && lineSeparator < end) found = lineSeparator;
  const paragraphSeparator = text.indexOf("\u2029", from);
  if (paragraphSeparator !== -1 && paragraphSeparator < (found === -1 ? text.length : found))
    found = paragraphSeparator;
  return found;
}
const SENTENCE_PAIR_RE = /[.!?][^\S\n]/g;
const SPACE_RE = /\s/;

function isSpace(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && SPACE_RE.test(text.charAt(index));
}

/** `text.trim().length === 0` without the trimmed copy. */
function isBlank(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (!isSpace(text, index)) return false;
  return true;
}

/** The code of `/\S/.exec(text)`'s match, or -1 (a loop: no match array per call, this runs per line). */
function firstNonSpaceCode(text: string): number {
  for (let index = 0; index < text.length; index++) {
    if (!isSpace(text, index)) return text.charCodeAt(index);
  }
  return -1;
}

function findSafeSentenceBreakIndex(
  text: string,
  fenceSpans: readonly FenceSpan[],
  minChars: number,
  offset: number,
  openFence: FenceSpan | undefined,
): number {
  // the last safe sentence end wins, so search from the end ([.!?] followed by whitespace or the end)
  for (let at = text.length - 1; at >= minChars; at--) {
    const code = text.charCodeAt(at);
    if (code !== 46 && code !== 33 && code !== 63) continue;
    if (at + 1 < text.length && !isSpace(text, at + 1)) continue;
    const candidate = at + 1;
    if (offset + candidate !== openFence?.end && isSafeFenceBreak(fenceSpans, offset + candidate))
      return candidate;
  }
  return -1;
}

function findSafeParagraphBreakIndex(
  text: string,
  fenceSpans: readonly FenceSpan[],
  minChars: number,
  reverse: boolean,
  offset: number,
): number {
  let paragraphIdx = reverse ? text.lastIndexOf("\n\n") : text.indexOf("\n\n");
  while (reverse ? paragraphIdx >= minChars : paragraphIdx !== -1) {
    for (let candidate = paragraphIdx; candidate <= paragraphIdx + 1; candidate++) {
      if (candidate < minChars || candidate < 0 || candidate >= text.length) continue;
      if (isSafeFenceBreak(fenceSpans, offset + candidate)) return candidate;
    }
    paragraphIdx = reverse
      ? text.lastIndexOf("\n\n", paragraphIdx - 1)
      : text.indexOf("\n\n", paragraphIdx + 2);
  }
  return -1;
}

function findSafeNewlineBreakIndex(
  text: string,
  fenceSpans: readonly FenceSpan[],
  minChars: number,
  reverse: boolean,
  offset: number,
): number {
  let newlineIdx = reverse ? text.lastIndexOf("\n") : text.indexOf("\n");
  while (reverse ? newlineIdx >= minChars : newlineIdx !== -1) {
    if (newlineIdx >= minChars && isSafeFenceBreak(fenceSpans, offset + newlineIdx)) return newlineIdx;
    newlineIdx = reverse ? text.lastIndexOf("\n", newlineIdx - 1) : text.indexOf("\n", newlineIdx + 1);
  }
  return -1;
}

function findFenceCloseLineStart(buffer: string, fence: FenceSpan, offset = 0): number {
  const relativeFenceEnd = Math.min(buffer.length, Math.max(0, fence.end - offset));
  if (relativeFenceEnd <= 0) return -1;
  const lastNewline = buffer.lastIndexOf("\n", relativeFenceEnd - 1);
  if (lastNewline < 0) return -1;
  const closingMarker = buffer
    .slice(lastNewline + 1, relativeFenceEnd)
    .match(/^ {0,3}(`{3,}|~{3,})[ \t]*\r?$/)?.[1];
  return closingMarker &&
    closingMarker.charAt(0) === fence.marker.charAt(0) &&
    closingMarker.length >= fence.marker.length
    ? lastNewline + 1
    : -1;
}

function resolveFenceReopenLine(fence: FenceSpan, maxChars: number): string | undefined {
  const bareMarker = `${fence.indent}${fence.marker}`;
  if (bareMarker.length * 2 + 3 > maxChars) return undefined;
  return fence.openLine.length + bareMarker.length + 3 <= maxChars ? fence.openLine : bareMarker;
}

function resolveBreakResult(
  breakResult: BreakResult,
  reopenPrefix: string,
  source: string,
  start: number,
): { chunk?: string; start: number; reopenFence?: FenceSplit } | null {
  const breakIdx = breakResult.index;
  if (breakIdx <= 0) return null;
  const absoluteBreakIdx = start + breakIdx;
  let rawChunk = `${reopenPrefix}${source.slice(start, absoluteBreakIdx)}`;
  if (isBlank(rawChunk)) return { start: skipLeadingNewlines(source, absoluteBreakIdx) };
  const fenceSplit = breakResult.fenceSplit;
  if (fenceSplit) {
    rawChunk += rawChunk.endsWith("\n") ? fenceSplit.closeFenceLine : `\n${fenceSplit.closeFenceLine}`;
    if (absoluteBreakIdx === findFenceCloseLineStart(source, fenceSplit.fence)) {
      return { chunk: rawChunk, start: skipLeadingNewlines(source, fenceSplit.fence.end) };
    }
    return { chunk: rawChunk, start: absoluteBreakIdx, reopenFence: fenceSplit };
  }
  const nextStart =
    absoluteBreakIdx < source.length && WHITESPACE_RE.test(source.charAt(absoluteBreakIdx))
      ? absoluteBreakIdx + 1
      : absoluteBreakIdx;
  return { chunk: rawChunk, start: skipLeadingNewlines(source, nextStart) };
}

function pickPreferredBreakIndex(
  buffer: string,
  fenceSpans: readonly FenceSpan[],
  chunking: Required<BlockChunking>,
  reverse: boolean,
  minCharsOverride: number | undefined,
  offset: number,
  openFence: FenceSpan | undefined,
): BreakResult {
  const minChars = Math.max(1, Math.floor(minCharsOverride ?? chunking.minChars));
  if (buffer.length < minChars) return { index: -1 };
  // every position the searches below look at lies in [minChars, buffer.length]: when one fence holds all
  // of them (a long code block being cut), none is safe, and neither is anything they would find
  const enclosing = findFenceSpanAt(fenceSpans, offset + minChars);
  if (enclosing && enclosing.end > offset + buffer.length) return { index: -1 };
  const preference = chunking.breakPreference;
  if (preference === "paragraph") {
    const paragraphIdx = findSafeParagraphBreakIndex(buffer, fenceSpans, minChars, reverse, offset);
    if (paragraphIdx !== -1) return { index: paragraphIdx };
  }
  if (preference === "paragraph" || preference === "newline") {
    const newlineIdx = findSafeNewlineBreakIndex(buffer, fenceSpans, minChars, reverse, offset);
    if (newlineIdx !== -1) return { index: newlineIdx };
  }
  if (preference !== "newline") {
    const sentenceIdx = findSafeSentenceBreakIndex(buffer, fenceSpans, minChars, offset, openFence);
    if (sentenceIdx !== -1) return { index: sentenceIdx };
  }
  return { index: -1 };
}

function pickBreakIndex(
  buffer: string,
  fenceSpans: readonly FenceSpan[],
  chunking: Required<BlockChunking>,
  minCharsOverride: number | undefined,
  offset: number,
  maxCharsOverride: number,
  openFence: FenceSpan | undefined,
): BreakResult {
  const minChars = Math.max(1, Math.floor(minCharsOverride ?? chunking.minChars));
  const maxChars = Math.max(1, Math.floor(maxCharsOverride));
  if (buffer.length < minChars) return { index: -1 };
  const window = buffer.slice(0, Math.min(maxChars, buffer.length));
  const preferred = pickPreferredBreakIndex(window, fenceSpans, chunking, true, minChars, offset, openFence);
  if (preferred.index !== -1) return preferred;
  if (buffer.length < maxChars) return { index: -1 };
  for (let i = window.length - 1; i >= minChars; i--) {
    // positions strictly inside a fence are never safe: jump to the fence's start in one step
    const fence = findFenceSpanAt(fenceSpans, offset + i);
    if (fence) {
      i = fence.start - offset + 1;
      continue;
    }
    if (WHITESPACE_RE.test(window.charAt(i))) return { index: i };
  }
  const firstCodePointWidth = (buffer.codePointAt(0) ?? 0) > 0xffff ? 2 : 1;
  const forcedBreakIndex = sliceUtf16Safe(buffer, 0, Math.max(maxChars, firstCodePointWidth)).length;
  const absoluteBreakIndex = offset + forcedBreakIndex;
  const fence =
    findFenceSpanAt(fenceSpans, absoluteBreakIndex) ??
    (openFence?.end === absoluteBreakIndex ? openFence : undefined);
  if (!fence) return { index: forcedBreakIndex };
  const reopenFenceLine = resolveFenceReopenLine(fence, chunking.maxChars);
  if (!reopenFenceLine) return { index: forcedBreakIndex };
  const closeFenceLine = `${fence.indent}${fence.marker}`;
  const fenceBreakIndex = sliceUtf16Safe(buffer, 0, Math.max(1, maxChars - closeFenceLine.length - 1)).length;
  if (fenceBreakIndex <= 0) return { index: forcedBreakIndex };
  const closeFenceStart = findFenceCloseLineStart(buffer, fence, offset);
  return {
    index:
      closeFenceStart >= minChars && closeFenceStart <= fenceBreakIndex ? closeFenceStart : fenceBreakIndex,
    fenceSplit: { closeFenceLine, reopenFenceLine, fence },
  };
}

function skipLeadingNewlines(value: string, start = 0): number {
  let i = start;
  while (i < value.length && value[i] === "\n") i++;
  return i;
}

function findNextParagraphBreak(
  buffer: string,
  fenceSpans: readonly FenceSpan[],
  startIndex: number,
  minCharsFromStart: number,
): { index: number; length: number } | null {
  if (startIndex < 0) return null;
  const re = /\n[\t ]*\n+/g;
  re.lastIndex = startIndex;
  let match = re.exec(buffer);
  while (match !== null) {
    const index = match.index;
    if (index - startIndex >= minCharsFromStart) {
      const fence = findFenceSpanAt(fenceSpans, index);
      if (!fence) return { index, length: match[0].length };
      re.lastIndex = fence.end;
    }
    match = re.exec(buffer);
  }
  return null;
}
