// Streaming reasoning-tag stripper: text deltas in, visible text and reasoning text out.
// Owns: carrying tag, code and <final> state across deltas so the visible output does not depend on where
// the deltas were split (only a possible tag start is held back, never more than TAG_LOOKAHEAD characters).
// Uses the single tag grammar of reasoning-tags.ts (see there for the §16.13 decision). Does not own the
// final-text stripper (the final payload is stripped from the whole text by stripReasoningTagsFromText).
//
// Code is exempt: fences (``` / ~~~ at a line start, closed by the same marker) and inline backtick spans
// (a run of n backticks closed by the next run of n) are tracked per character, separately for visible and
// hidden text, as OpenClaw's streaming subscriber does. Deliberate deviations from OpenClaw's subscriber,
// each because streamed text cannot be taken back and must not depend on delta boundaries:
// - an orphan closing tag removes only the tag (the final text still drops the leaked text before it);
// - tags nest (depth is counted, as in the final-text stripper), and a tag candidate longer than
//   TAG_LOOKAHEAD characters is literal text;
// - a trailing backtick run is resolved when the next character arrives, not at the delta boundary.
// Unclosed tag at the end: when nothing visible came before it (and no <internal> was involved), its content
// is recovered as visible text, OpenClaw's strict recovery rule.
import { parseFinalTag, parseReasoningTagAt } from "./reasoning-tags.ts";

const TAG_LOOKAHEAD = 1024;

export type ReasoningStreamOptions = {
  /** Only text inside <final>…</final> is visible (reasoning-tag providers, the planner). */
  enforceFinalTag?: boolean;
};

export type StrippedDelta = { visible: string; reasoning: string };

type LinePhase = 0 | 1 | 2; // 0 indent (≤3 spaces), 1 marker run, 2 rest of line
type CodeState = {
  fence: { char: number; len: number } | undefined;
  inline: number; // open inline span's tick count, 0 when closed
  run: number; // pending backtick run length (outside the line-start marker)
  phase: LinePhase;
  spaces: number;
  markerChar: number;
  markerLen: number;
  restBlank: boolean; // the rest of a fenced line after its marker is blank (closer candidate)
  lineOpened: boolean; // this line opened the current fence
};

function createCodeState(): CodeState {
  return {
    fence: undefined,
    inline: 0,
    run: 0,
    phase: 0,
    spaces: 0,
    markerChar: 0,
    markerLen: 0,
    restBlank: true,
    lineOpened: false,
  };
}

const BACKTICK = 96;
const TILDE = 126;
const SPACE = 32;
const TAB = 9;
const NEWLINE = 10;
const LT = 60;

export class ReasoningStreamStripper {
  readonly #enforceFinalTag: boolean;
  #held = "";
  #depth = 0;
  #visibleEver = false;
  #visibleCode = createCodeState();
  #hiddenCode = createCodeState();
  #inFinal = false;
  // the open hidden block (for recovery at the end and <internal> suppression)
  #blockPrivate = false;
  #blockVisibleBefore = false;
  #blockProtectedClose = false;
  #blockContent = "";

  constructor(options: ReasoningStreamOptions = {}) {
    this.#enforceFinalTag = options.enforceFinalTag ?? false;
  }

  /** True while inside a reasoning block. */
  get inReasoning(): boolean {
    return this.#depth > 0;
  }

  push(delta: string): StrippedDelta {
    // the usual streamed text: outside every tag and inline code span, with no character that can start or
    // end a code span or a fence, nor (outside a fence) a tag. The general walk passes it through unchanged;
    // its only effect is on the line state: each newline resets it (no line can open or close a fence), and
    // the text after the last newline moves through the line-start blanks (see advancePlainText)
    const code = this.#visibleCode;
    if (
      this.#depth === 0 &&
      this.#held === "" &&
      !this.#enforceFinalTag &&
      code.inline === 0 &&
      code.run === 0 &&
      code.phase !== 1 &&
      delta.indexOf("`") === -1 &&
      delta.indexOf("~") === -1 &&
      // inside a fence the line begun before must not hold a marker run (it could be the closing line)
      (code.fence !== undefined ? code.markerLen === 0 : delta.indexOf("<") === -1)
    ) {
      const lastNewline = delta.lastIndexOf("\n");
      if (lastNewline !== -1) endLine(code);
      advancePlainText(code, delta, lastNewline + 1);
      if (!this.#visibleEver && delta.trim()) this.#visibleEver = true;
      return { visible: delta, reasoning: "" };
    }
    return this.#process(delta, false);
  }

  /** Flushes held text and applies the unclosed-tag rule; the stripper can be reused afterwards. */
  finish(): StrippedDelta {
    const out = this.#process("", true);
    if (this.#depth > 0 && !this.#blockPrivate && !this.#blockVisibleBefore && !this.#blockProtectedClose) {
      if (!this.#enforceFinalTag || this.#inFinal) out.visible += this.#blockContent;
    }
    this.#held = "";
    this.#depth = 0;
    this.#visibleEver = false;
    this.#visibleCode = createCodeState();
    this.#hiddenCode = createCodeState();
    this.#inFinal = false;
    this.#blockContent = "";
    return out;
  }

  #process(delta: string, final: boolean): StrippedDelta {
    const s = this.#held ? this.#held + delta : delta;
    this.#held = "";
    let visible = "";
    let reasoning = "";
    let segStart = 0;
    const flush = (end: number): void => {
      if (end <= segStart) return;
      const text = s.slice(segStart, end);
      if (this.#depth > 0) {
        if (!this.#blockPrivate) reasoning += text;
        if (!this.#blockVisibleBefore) this.#blockContent += text;
      } else {
        if (!this.#enforceFinalTag || this.#inFinal) {
          visible += text;
          if (!this.#visibleEver && text.trim()) this.#visibleEver = true;
        }
      }
      segStart = end;
    };
    const length = s.length;
    // next positions of the characters that end a plain run ('<', '`', newline): found with indexOf and
    // kept for the whole call, so plain text is skipped at memchr speed and each search runs once per hit
    let nextLT = -2;
    let nextTick = -2;
    let nextNewline = -2;
    let i = 0;
    while (i < length) {
      const code = this.#depth > 0 ? this.#hiddenCode : this.#visibleCode;
      const c = s.charCodeAt(i);
      if (c === NEWLINE) {
        endLine(code);
        i++;
        continue;
      }
      if (code.phase !== 2 && advanceLineStart(code, c)) {
        i++;
        continue;
      }
      // bulk skips: inside a fenced line that cannot close, or through plain text up to the next special
      if (code.fence && !code.restBlank) {
        if (nextNewline !== -1 && nextNewline < i) nextNewline = s.indexOf("\n", i);
        i = nextNewline === -1 ? length : nextNewline;
        continue;
      }
      if (!code.fence && code.run === 0 && c !== BACKTICK && c !== LT) {
        if (nextLT !== -1 && nextLT <= i) nextLT = s.indexOf("<", i + 1);
        if (nextTick !== -1 && nextTick <= i) nextTick = s.indexOf("`", i + 1);
        if (nextNewline !== -1 && nextNewline <= i) nextNewline = s.indexOf("\n", i + 1);
        let j = length;
        if (nextLT !== -1 && nextLT < j) j = nextLT;
        if (nextTick !== -1 && nextTick < j) j = nextTick;
        if (nextNewline !== -1 && nextNewline < j) j = nextNewline;
        i = j;
        continue;
      }
      if (code.fence) {
        if (c !== SPACE && c !== TAB && c !== 13) code.restBlank = false;
        i++;
        continue;
      }
      if (c === BACKTICK) {
        code.run++;
        i++;
        continue;
      }
      if (code.run > 0) resolveRun(code);
      if (c !== LT || code.inline > 0) {
        i++;
        continue;
      }
      // a possible tag outside code
      const window = s.length - i > TAG_LOOKAHEAD ? s.slice(i, i + TAG_LOOKAHEAD) : i === 0 ? s : s.slice(i);
      const windowFull = window.length >= TAG_LOOKAHEAD;
      const parsed = parseReasoningTagAt(window, 0, final || windowFull);
      if (parsed.kind === "pending") {
        flush(i);
        this.#held = s.slice(i);
        segStart = length;
        break;
      }
      if (parsed.kind === "tag") {
        flush(i);
        const tag = parsed.tag;
        i += tag.text.length;
        segStart = i;
        this.#applyReasoningTag(tag.isClose, tag.isSelfClosing, tag.isPrivate);
        continue;
      }
      if (this.#depth === 0) {
        const finalTag = matchFinalTag(window, final || windowFull);
        if (finalTag === "pending") {
          flush(i);
          this.#held = s.slice(i);
          segStart = length;
          break;
        }
        if (finalTag) {
          flush(i);
          i += finalTag.length;
          segStart = i;
          this.#applyFinalTag(finalTag);
          continue;
        }
      }
      i++;
    }
    if (!this.#held) flush(length);
    if (final) {
      const code = this.#depth > 0 ? this.#hiddenCode : this.#visibleCode;
      if (code.phase === 1) endMarker(code);
      if (code.run > 0) resolveRun(code);
    }
    return { visible, reasoning };
  }

  #applyReasoningTag(isClose: boolean, isSelfClosing: boolean, isPrivate: boolean): void {
    if (isSelfClosing) return;
    if (!isClose) {
      if (this.#depth === 0) {
        this.#blockPrivate = isPrivate;
        this.#blockVisibleBefore = this.#visibleEver;
        this.#blockProtectedClose = false;
        this.#blockContent = "";
        this.#hiddenCode = createCodeState();
      } else if (isPrivate) this.#blockPrivate = true;
      this.#depth++;
      return;
    }
    if (this.#depth === 0) return; // orphan closer: drop the tag only
    this.#depth--;
    if (this.#depth > 0) this.#blockProtectedClose = true;
    else this.#blockContent = "";
  }

  #applyFinalTag(tag: { isClose: boolean; isSelfClosing: boolean }): void {
    if (!this.#enforceFinalTag) return;
    if (tag.isSelfClosing) this.#inFinal = !this.#inFinal;
    else this.#inFinal = !tag.isClose;
  }
}

/**
 * The general walk's effect on the line state of `text` from `from` on, for text with no newline, backtick,
 * tilde or (outside a fence) "<": up to three line-start blanks are counted, then the rest of the line
 * begins; inside a fence it stays a closer candidate only while it is blank.
 */
function advancePlainText(code: CodeState, text: string, from: number): void {
  const length = text.length;
  let index = from;
  if (code.phase === 0) {
    while (index < length && code.spaces < 3 && text.charCodeAt(index) === SPACE) {
      code.spaces++;
      index++;
    }
    if (index === length) return;
    code.phase = 2;
  }
  if (code.fence === undefined || !code.restBlank) return;
  for (; index < length; index++) {
    const c = text.charCodeAt(index);
    if (c !== SPACE && c !== TAB && c !== 13) {
      code.restBlank = false;
      return;
    }
  }
}

/** Consumes a line-start character if it belongs to the indent or fence marker; returns true if consumed. */
function advanceLineStart(code: CodeState, c: number): boolean {
  if (code.phase === 0) {
    if (c === SPACE && code.spaces < 3) {
      code.spaces++;
      return true;
    }
    if (c === BACKTICK || c === TILDE) {
      code.phase = 1;
      code.markerChar = c;
      code.markerLen = 1;
      return true;
    }
    code.phase = 2;
    return false;
  }
  if (c === code.markerChar) {
    code.markerLen++;
    return true;
  }
  endMarker(code);
  return false;
}

/** The line-start marker run ended: open a fence, or hand short backtick runs to inline code. */
function endMarker(code: CodeState): void {
  code.phase = 2;
  if (code.fence) return; // a closer candidate, decided at the end of the line
  if (code.markerLen >= 3) {
    code.fence = { char: code.markerChar, len: code.markerLen };
    code.lineOpened = true;
  } else if (code.markerChar === BACKTICK) {
    code.run += code.markerLen;
    resolveRun(code);
  }
}

function endLine(code: CodeState): void {
  if (code.phase === 1) endMarker(code);
  if (code.run > 0) resolveRun(code);
  if (code.fence && !code.lineOpened) {
    if (code.markerChar === code.fence.char && code.markerLen >= code.fence.len && code.restBlank)
      code.fence = undefined;
  }
  code.phase = 0;
  code.spaces = 0;
  code.markerChar = 0;
  code.markerLen = 0;
  code.restBlank = true;
  code.lineOpened = false;
}

function resolveRun(code: CodeState): void {
  if (code.inline === 0) code.inline = code.run;
  else if (code.run === code.inline) code.inline = 0;
  code.run = 0;
}

function matchFinalTag(
  text: string,
  final: boolean,
): { length: number; isClose: boolean; isSelfClosing: boolean } | "pending" | undefined {
  let end = 1;
  while (end < text.length) {
    const c = text.charCodeAt(end);
    if (c === 62) {
      const parsed = parseFinalTag(text.slice(0, end + 1));
      return parsed ? { length: end + 1, ...parsed } : undefined;
    }
    if (c === LT) return undefined;
    end++;
  }
  if (final) return undefined;
  let body = text.slice(1).trimStart();
  if (body.startsWith("/")) body = body.slice(1).trimStart();
  const lower = body.toLowerCase();
  if (lower.length <= 5) return "final".startsWith(lower) ? "pending" : undefined;
  return lower.startsWith("final") && /[\s/]/.test(lower.charAt(5)) ? "pending" : undefined;
}
