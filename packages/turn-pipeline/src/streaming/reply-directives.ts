// Reply directives of one reply text, and their streaming-safe accumulation across deltas.
// Owns: parseReplyDirectives (MEDIA: lines + reply target + audio flag + silent token, OpenClaw 2026.9.6),
// file: URL → local path conversion for media (local hosts only, no encoded separators), and
// StreamingDirectiveAccumulator (holds back a trailing unclosed "[[…", a lone "[", and a trailing MEDIA: line or
// its partial "M"…"MEDIA" prefix until the next delta; reply target state is sticky across chunks), and how much
// of a chunk still arriving it is sure to return as it is (decidedLength: the partial text shown mid-line).
// Does not own the messaging-tool duplicate filter (messaging-dedupe.ts).
import { fileURLToPath } from "node:url";
import { parseInlineDirectives, stripInlineDirectiveTagsForDelivery } from "./directive-tags.ts";
import { hasNonWhitespace, splitMediaFromOutput } from "./media-output.ts";
import {
  blankRulesOutToken,
  headRulesOutSilentPayload,
  isSilentReplyPayloadText,
  isSilentReplyPrefixText,
  isSilentReplyText,
  lineRulesOutToken,
  prefixRulesOutToken,
  SILENT_REPLY_TOKEN,
  startsWithSilentToken,
  stripLeadingSilentToken,
} from "./silent-tokens.ts";

export type ReplyDirectives = {
  text: string;
  mediaUrls?: string[];
  replyToId?: string;
  replyToCurrent?: true;
  replyToTag: boolean;
  audioAsVoice?: boolean;
  isSilent: boolean;
};

export type ParseReplyDirectivesOptions = {
  currentMessageId?: string | undefined;
  silentToken?: string;
  preserveTrailingWhitespace?: boolean;
  extractMediaDirectives?: boolean;
  /** Applied to the text before the silent-token test (final-text-skeleton.ts puts paragraphs back). */
  expandText?: (text: string) => string;
  /**
   * With `expandText`: a prefix of `expandText(text)` made without building the whole
   * (FinalTextSkeleton.expandedHead). The silent-token test's first steps then read only that, and a long
   * expanded text is not read (and copied into one string) when they decide.
   */
  expandedHead?: (text: string) => string;
};

/** file:///x or file://localhost/x → /x; anything unsafe stays as written (undefined). */
export function trySafeFileUrlToPath(source: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(source);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "file:") return undefined;
  const host = parsed.hostname.toLowerCase();
  if (host !== "" && host !== "localhost") return undefined;
  if (/%(?:2f|5c)/i.test(parsed.pathname)) return undefined;
  try {
    return fileURLToPath(parsed, { windows: false });
  } catch {
    return undefined;
  }
}

export function parseReplyDirectives(
  raw: string,
  options: ParseReplyDirectivesOptions = {},
): ReplyDirectives {
  const split = splitMediaFromOutput(raw, {
    extractMediaDirectives: options.extractMediaDirectives,
    preserveTrailingWhitespace: options.preserveTrailingWhitespace,
    segments: false,
  });
  let text = split.text ?? "";
  const replyParsed = text.includes("[[")
    ? parseInlineDirectives(text, {
        currentMessageId: options.currentMessageId,
        stripAudioTag: false,
        preserveTrailingWhitespace: options.preserveTrailingWhitespace,
      })
    : undefined;
  text = stripInlineDirectiveTagsForDelivery(replyParsed?.hasReplyTag ? replyParsed.text : text, {
    preserveTrailingWhitespace: options.preserveTrailingWhitespace,
  }).text;
  const silentToken = options.silentToken ?? SILENT_REPLY_TOKEN;
  let isSilent: boolean;
  if (options.expandText) {
    // the test's first step stops at the first non-blank character, which the head holds: the usual long
    // expanded text (a rope, see FinalTextSkeleton.expand) is then not read here
    const head = options.expandedHead?.(text);
    text = options.expandText(text);
    isSilent =
      (head === undefined || !headRulesOutSilentPayload(head, false, silentToken)) &&
      isSilentReplyPayloadText(text, silentToken);
  } else isSilent = isSilentReplyPayloadText(text, silentToken);
  // built key by key, in the order the keys always had (text, mediaUrls, replyToId, replyToCurrent,
  // replyToTag, audioAsVoice, isSilent), without object spreads: this runs once per streamed block
  const result = { text: isSilent ? "" : text } as ReplyDirectives;
  if (split.mediaUrls)
    result.mediaUrls = split.mediaUrls.map((source) => trySafeFileUrlToPath(source) ?? source);
  if (replyParsed?.replyToId !== undefined) result.replyToId = replyParsed.replyToId;
  if (replyParsed?.replyToCurrent) result.replyToCurrent = true;
  result.replyToTag = replyParsed?.hasReplyTag ?? false;
  if (split.audioAsVoice !== undefined) result.audioAsVoice = split.audioAsVoice;
  result.isSilent = isSilent;
  return result;
}

/** Splits off a tail that may still become a directive or a MEDIA: line. */
export function splitTrailingDirective(
  text: string,
  options?: { preserveTrailingWhitespace?: boolean },
): { text: string; tail: string } {
  let bufferStart = text.length;
  let trimTextBeforeTail = false;
  const openIndex = text.lastIndexOf("[[");
  if (openIndex >= 0 && !text.includes("]]", openIndex + 2) && openIndex < bufferStart) {
    bufferStart = openIndex;
    trimTextBeforeTail = true;
  }
  if (text.endsWith("[") && text.length - 1 < bufferStart) {
    bufferStart = text.length - 1;
    trimTextBeforeTail = true;
  }
  const lastNewline = text.lastIndexOf("\n");
  const lastLine = lastNewline < 0 ? text : text.slice(lastNewline + 1);
  if (/^\s*MEDIA:/i.test(lastLine) || /^[\t ]*(MEDIA|MEDI|MED|ME|M)$/i.test(lastLine)) {
    const mediaLineStart = lastNewline < 0 ? 0 : lastNewline + 1;
    if (mediaLineStart < bufferStart) bufferStart = mediaLineStart;
  }
  if (bufferStart >= text.length) return { text, tail: "" };
  return {
    text:
      trimTextBeforeTail && !options?.preserveTrailingWhitespace
        ? text.slice(0, bufferStart).trimEnd()
        : text.slice(0, bufferStart),
    tail: text.slice(bufferStart),
  };
}

export type StreamingDirectiveResult = {
  text: string;
  replyToId?: string;
  replyToExplicitId?: string;
  replyToCurrent: boolean;
  replyToTag: boolean;
  audioAsVoice: boolean;
  isSilent: boolean;
};

/** OpenClaw's createStreamingDirectiveAccumulator as a class: consume(chunk) → result or null. */
export class StreamingDirectiveAccumulator {
  #pendingTail = "";
  #pendingSeparator = "";
  #replyToId: string | undefined;
  #replyToCurrent = false;
  #replyToTag = false;
  #hasReturnedText = false;

  reset(): void {
    this.#pendingTail = "";
    this.#pendingSeparator = "";
    this.#replyToId = undefined;
    this.#replyToCurrent = false;
    this.#replyToTag = false;
    this.#hasReturnedText = false;
  }

  consume(raw: string, options?: { final?: boolean; silentToken?: string }): StreamingDirectiveResult | null {
    if (!this.#pendingTail && !options?.final && raw.indexOf("[") === -1) {
      const plain = this.#consumePlain(raw, options?.silentToken ?? SILENT_REPLY_TOKEN);
      if (plain !== undefined) return plain;
    }
    const hadPendingTail = this.#pendingTail.length > 0;
    const heldSeparator = this.#pendingSeparator;
    let combined = `${this.#pendingTail}${raw}`;
    this.#pendingTail = "";
    this.#pendingSeparator = "";
    if (!options?.final) {
      const split = splitTrailingDirective(combined);
      if (split.tail) {
        const tailStart = combined.length - split.tail.length;
        const separator = combined.slice(split.text.length, tailStart);
        this.#pendingSeparator = split.text ? separator : `${heldSeparator}${separator}`;
      }
      combined = split.text;
      this.#pendingTail = split.tail;
    }
    if (!combined) return null;
    const parsed = combined.includes("[[") ? parseInlineDirectives(combined) : undefined;
    let text = parsed && (parsed.hasReplyTag || parsed.hasAudioTag) ? parsed.text : combined;
    const silentToken = options?.silentToken ?? SILENT_REPLY_TOKEN;
    const isSilent = isSilentReplyText(text, silentToken) || isSilentReplyPrefixText(text, silentToken);
    if (isSilent) text = "";
    else if (startsWithSilentToken(text, silentToken)) text = stripLeadingSilentToken(text, silentToken);
    if (hadPendingTail && heldSeparator && text.startsWith("[")) text = heldSeparator + text;
    if (options?.final && !this.#hasReturnedText) text = stripInlineDirectiveTagsForDelivery(text).text;
    this.#replyToId = parsed?.replyToExplicitId ?? this.#replyToId;
    this.#replyToCurrent ||= parsed?.replyToCurrent === true;
    this.#replyToTag ||= parsed?.hasReplyTag === true;
    const result: StreamingDirectiveResult = {
      text,
      ...(this.#replyToId !== undefined ? { replyToId: this.#replyToId } : {}),
      ...(parsed?.replyToExplicitId !== undefined ? { replyToExplicitId: parsed.replyToExplicitId } : {}),
      replyToCurrent: this.#replyToCurrent,
      replyToTag: this.#replyToTag,
      audioAsVoice: parsed?.audioAsVoice ?? false,
      isSilent,
    };
    if (!result.text.trim() && !result.audioAsVoice) return null;
    this.#hasReturnedText ||= Boolean(result.text);
    return result;
  }

  /**
   * How much of `raw`, the start of the next chunk (a line still arriving), the next `consume` is sure to
   * return unchanged at the start of its text, whatever follows in that chunk and whether or not it is the
   * final one: what partial text may show before the line ends. 0 while a tail is held back (it joins the next
   * chunk). Otherwise the answer stops
   * - before the first "[" (a directive may start there; text before an unclosed one is trimmed at its end),
   * - before the first run of two blanks (the whitespace normalisation after a reply or audio tag makes it one),
   * - before trailing whitespace (trimmed when the chunk ends in a tag or is cut before one),
   * - before a newline (ReplyStream gives chunks that end at one; the normalisation changes blanks before one),
   * and is 0 for a chunk that may still be a MEDIA: line ("M"…"MEDIA:" so far), may still be or start with the
   * silent token (decided by prefixRulesOutToken within the answer), or starts with whitespace that the
   * normalisation strips (newlines; one blank before text; any, in a final chunk before text was returned).
   * `known`: what this returned (above 0) for a shorter start of the same chunk, the accumulator unchanged
   * since: only what follows it is looked at (a preview per batch then costs the batch, not the line so far).
   */
  decidedLength(raw: string, silentToken = SILENT_REPLY_TOKEN, known = 0): number {
    if (this.#pendingTail !== "") return 0;
    const length = raw.length;
    /** Where the cuts are looked for: the first non-blank character, or what an earlier call decided. */
    let from = known;
    if (known === 0) {
      while (from < length && isWhitespaceAt(raw, from)) from++;
      if (from === length) return 0;
      if (from > 0 && (!this.#hasReturnedText || (from === 1 && isBlankAt(raw, 0)) || hasNewline(raw, from)))
        return 0;
      if (mayBeMediaColon(raw, from)) return 0;
    }
    let end = raw.indexOf("[", from);
    if (end === -1) end = length;
    const newline = raw.indexOf("\n", from);
    if (newline !== -1 && newline < end) end = newline;
    // a regex, not a charCodeAt loop: the held text is a fresh concatenation each batch, and reads through it
    // cost several times a native scan
    BLANK_PAIR.lastIndex = from;
    const blanks = BLANK_PAIR.exec(raw);
    if (blanks !== null && blanks.index < end) end = blanks.index;
    while (end > from && isWhitespaceAt(raw, end - 1)) end--;
    // an earlier answer is not taken back: its start was decided (the token test included), and a cut before
    // it would have ended it
    if (known > 0) return end;
    if (end === from) return 0;
    return prefixRulesOutToken(raw, silentToken, end) ? end : 0;
  }

  /** `consume(raw, options)?.text` without building the result for the common chunk (once per streamed line). */
  consumeText(raw: string, options?: { final?: boolean; silentToken?: string }): string | undefined {
    if (!this.#pendingTail && !options?.final && raw.indexOf("[") === -1) {
      const plain = this.#plainText(raw, options?.silentToken ?? SILENT_REPLY_TOKEN);
      if (plain !== undefined) return plain ?? undefined;
    }
    return this.consume(raw, options)?.text;
  }

  /** consumeText(raw, { silentToken }) for a chunk that is not the last, without an options object (once per streamed line). */
  consumeLine(raw: string, silentToken: string): string | undefined {
    if (!this.#pendingTail && raw.indexOf("[") === -1) {
      const plain = this.#plainText(raw, silentToken);
      if (plain !== undefined) return plain ?? undefined;
    }
    return this.consume(raw, { silentToken })?.text;
  }

  /**
   * consumeLine(source.slice(from, end), silentToken) for the usual line, read in place (once per streamed
   * line: no slice, no call through the general path): 1 when it returns the line as it is, 0 when it
   * returns nothing (a blank line), with the accumulator changed exactly as consumeLine changes it; -1 (the
   * accumulator unchanged) when consumeLine itself is needed. The caller has made sure the line has no "["
   * (ReplyStream's partial text looks for them once per batch, not once per line) and that it has no newline
   * but at its end (its content positions end at the first newline).
   */
  consumePlainRange(source: string, from: number, end: number, silentToken: string): 1 | 0 | -1 {
    if (this.#pendingTail !== "" || end <= from) return -1;
    // a line that does not end with a newline may still become a MEDIA: line (#plainText's regexes): any
    // line whose first non-whitespace character is not "m" (nor non-ASCII) cannot
    if (source.charCodeAt(end - 1) !== 10) {
      let index = from;
      while (index < end) {
        const code = source.charCodeAt(index);
        if (code === 32 || (code >= 9 && code <= 13)) index++;
        else if (code > 127 || code === 77 || code === 109) return -1;
        else break;
      }
    }
    if (lineRulesOutToken(source, silentToken, from, end)) {
      this.#pendingSeparator = "";
      this.#hasReturnedText = true;
      return 1;
    }
    if (blankRulesOutToken(source, silentToken, from, end)) {
      this.#pendingSeparator = "";
      return 0;
    }
    return -1;
  }

  /**
   * The common chunk (no held tail, no "[", not final): nothing to hold back unless its last line may still
   * become a MEDIA: line, no directive to parse, and the silent-token tests usually end at the first
   * character. Returns undefined when the general path is needed; otherwise exactly what it would return.
   */
  #consumePlain(raw: string, silentToken: string): StreamingDirectiveResult | null | undefined {
    const text = this.#plainText(raw, silentToken);
    if (text === undefined || text === null) return text;
    // the same key order as the general path builds
    return this.#replyToId === undefined
      ? {
          text,
          replyToCurrent: this.#replyToCurrent,
          replyToTag: this.#replyToTag,
          audioAsVoice: false,
          isSilent: false,
        }
      : {
          text,
          replyToId: this.#replyToId,
          replyToCurrent: this.#replyToCurrent,
          replyToTag: this.#replyToTag,
          audioAsVoice: false,
          isSilent: false,
        };
  }

  /** #consumePlain's text: the chunk, null (nothing to show) or undefined (general path needed). */
  #plainText(raw: string, silentToken: string): string | null | undefined {
    // a chunk that ends its line (the usual one) has no last line that may become a MEDIA: line; the check
    // first, as lastIndexOf is a runtime call that costs more than the rest of this path
    const lastNewline = raw.charCodeAt(raw.length - 1) === 10 ? raw.length - 1 : raw.lastIndexOf("\n");
    if (lastNewline !== raw.length - 1) {
      const lastLine = lastNewline < 0 ? raw : raw.slice(lastNewline + 1);
      if (/^\s*MEDIA:/i.test(lastLine) || /^[\t ]*(MEDIA|MEDI|MED|ME|M)$/i.test(lastLine)) return undefined;
    }
    // the three token tests all end at once when the first non-blank character rules the token out (the
    // usual line), and then the chunk has a non-whitespace character: one scan instead of four
    if (lineRulesOutToken(raw, silentToken)) {
      this.#pendingSeparator = "";
      this.#hasReturnedText = true;
      return raw;
    }
    // a blank line: no token test can hold, and there is nothing to show
    if (blankRulesOutToken(raw, silentToken)) {
      this.#pendingSeparator = "";
      return null;
    }
    if (
      isSilentReplyText(raw, silentToken) ||
      isSilentReplyPrefixText(raw, silentToken) ||
      startsWithSilentToken(raw, silentToken)
    )
      return undefined;
    this.#pendingSeparator = "";
    if (!hasNonWhitespace(raw)) return null;
    this.#hasReturnedText = true;
    return raw;
  }
}

/** Two blanks (spaces or tabs) in a row: the whitespace normalisation collapses such a run. */
const BLANK_PAIR = /[ \t]{2}/g;

/** A space or a tab: what the directive whitespace normalisation collapses and strips. */
function isBlankAt(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code === 32 || code === 9;
}

/** `\s` (what trim and the patterns' `\s` take). */
function isWhitespaceAt(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && /\s/.test(text.charAt(index));
}

function hasNewline(text: string, end: number): boolean {
  const newline = text.indexOf("\n");
  return newline !== -1 && newline < end;
}

/** The text at `start` may still be, or is, "MEDIA:" (ASCII case ignored, as the MEDIA: patterns do). */
function mayBeMediaColon(text: string, start: number): boolean {
  const end = Math.min(text.length, start + MEDIA_COLON.length);
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    const lower = code >= 65 && code <= 90 ? code + 32 : code;
    if (lower !== MEDIA_COLON.charCodeAt(index - start)) return false;
  }
  return true;
}

const MEDIA_COLON = "media:";
