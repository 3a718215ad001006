// Inline reply directives: [[reply_to_current]], [[reply_to:<id>]], [[audio_as_voice]].
// Owns: finding them outside code, the reply target they set (last explicit id wins over reply_to_current;
// ids trimmed, control characters and brackets removed, cut to 256 code points), removing them, and
// OpenClaw's whitespace normalisation after removal. Does not own MEDIA: lines (media-output.ts).
// There is no [[media:…]] directive upstream (openclaw-behaviors §16.12); the kernel does not add one.
import { type CodeRegion, findCodeRegions, isInsideCode } from "./markdown-code.ts";
import { hasSpaceBeforeNewline, hasSpaceRun } from "./text-scan.ts";

const AUDIO_TAG_RE = /\[\[\s*audio_as_voice\s*\]\]/gi;
const REPLY_TAG_RE = /\[\[\s*(?:reply_to_current|reply_to\s*:\s*([^\]\n]+))\s*\]\]/gi;
const INLINE_DIRECTIVE_TAG_WITH_PADDING_RE =
  /(?:\s*(?:\[\[\s*audio_as_voice\s*\]\]|\[\[\s*(?:reply_to_current|reply_to\s*:\s*[^\]\n]+)\s*\]\])\s*|^[\t ]*\[\[\s*(?:reply_to_current(?:[\t ]*\](?!\])|(?=[\t ]+\S)|[\t ]*$)|reply_to\s*:\s*(?:[^\]\r\n]*\](?!\])|[\t ]*$))[\t ]*)/iuy;
const MAX_REPLY_DIRECTIVE_ID_LENGTH = 256;
const UNSAFE_REPLY_DIRECTIVE_CHARS_RE = /[\p{Cc}[\]]/gu;

export type InlineDirectives = {
  text: string;
  audioAsVoice: boolean;
  replyToId?: string;
  replyToExplicitId?: string;
  replyToCurrent: boolean;
  hasAudioTag: boolean;
  hasReplyTag: boolean;
};

export type ParseInlineDirectivesOptions = {
  currentMessageId?: string | undefined;
  stripAudioTag?: boolean;
  stripReplyTags?: boolean;
  preserveTrailingWhitespace?: boolean | undefined;
};

function replacementPreservesWordBoundary(source: string, offset: number, length: number): string {
  const before = source[offset - 1];
  const after = source[offset + length];
  return before && after && !/\s/u.test(before) && !/\s/u.test(after) ? " " : "";
}

function replaceOutsideCode(
  text: string,
  regex: RegExp,
  replacement: (match: string, capture: string | undefined, offset: number, source: string) => string,
): string {
  let regions: readonly CodeRegion[] | undefined;
  return text.replace(regex, (match: string, ...args: unknown[]) => {
    regions ??= text.includes("[[") ? findCodeRegions(text) : [];
    const offset = args.at(-2);
    if (typeof offset !== "number") return match;
    if (isInsideCode(offset + match.indexOf("[["), regions)) return match;
    const capture = typeof args[0] === "string" ? args[0] : undefined;
    return replacement(match, capture, offset, text);
  });
}

function createBlockSentinel(text: string): string {
  let sentinel = "\u0000";
  while (text.includes(sentinel)) sentinel += "\u0000";
  return sentinel;
}

export function normalizeDirectiveWhitespace(
  text: string,
  tailMode: "trim" | "preserve" | "normalize" = "trim",
): string {
  const regions = findCodeRegions(text);
  // no code: nothing to mask (no sentinel search, no placeholder regex built per call)
  const sentinel = regions.length === 0 ? "" : createBlockSentinel(text);
  const blocks: string[] = [];
  const maskedParts: string[] = [];
  let cursor = 0;
  for (const span of regions) {
    blocks.push(text.slice(span.start, span.end));
    maskedParts.push(text.slice(cursor, span.start), `${sentinel}${blocks.length - 1}${sentinel}`);
    cursor = span.end;
  }
  maskedParts.push(text.slice(cursor));
  const masked = maskedParts.join("");
  const suffixStart = tailMode === "preserve" ? masked.trimEnd().length : masked.length;
  const suffix = masked.slice(suffixStart);
  const head = masked.slice(0, suffixStart);
  // each pass only where its pattern can occur (the text can be a whole long reply)
  let normalized = head.includes("\r") ? head.replace(/\r\n/g, "\n") : head;
  const hasTab = normalized.includes("\t");
  if (hasTab || hasSpaceRun(normalized, 2)) normalized = collapseInnerBlankRuns(normalized);
  normalized = normalized.replace(/^\n+/, "").replace(/^[ \t](?=\S)/, "");
  if (hasSpaceBeforeNewline(normalized) || (hasTab && normalized.includes("\t\n")))
    normalized = dropBlanksBeforeNewlines(normalized);
  if (normalized.includes("\n\n\n")) normalized = normalized.replace(/\n{3,}/g, "\n\n");
  const result = tailMode === "trim" ? normalized.trimEnd() : normalized + suffix;
  if (blocks.length === 0) return result;
  const placeholderRe = new RegExp(`${sentinel}(\\d+)${sentinel}`, "g");
  return result.replace(placeholderRe, (_whole, index: string) => blocks[Number(index)] ?? "");
}

const BLANK_RUN_RE = /[ \t]{2,}/g;
const WHITESPACE_CHAR_RE = /\s/;

function isWhitespaceAt(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && WHITESPACE_CHAR_RE.test(text.charAt(index));
}

/**
 * `text.replace(/([^\s])[ \t]{2,}([^\s])/g, "$1 $2")`, but trying matches only at runs of blanks (that
 * regex starts a match attempt at nearly every character). Each maximal run of two or more spaces/tabs
 * between two non-whitespace characters becomes one space; as in the regex, the character after a collapsed
 * run is consumed, so it cannot start the next match.
 */
function collapseInnerBlankRuns(text: string): string {
  const parts: string[] = [];
  let copied = 0;
  let nextMatchFrom = 0;
  BLANK_RUN_RE.lastIndex = 0;
  for (let run = BLANK_RUN_RE.exec(text); run; run = BLANK_RUN_RE.exec(text)) {
    const before = run.index - 1;
    const after = run.index + run[0].length;
    if (before < nextMatchFrom || isWhitespaceAt(text, before)) continue;
    if (after >= text.length || isWhitespaceAt(text, after)) continue;
    parts.push(text.slice(copied, before + 1), " ");
    copied = after;
    nextMatchFrom = after + 1;
    BLANK_RUN_RE.lastIndex = after + 1;
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(copied));
  return parts.join("");
}

/** `text.replace(/[ \t]+\n/g, "\n")`, looking only at the characters before each newline. */
function dropBlanksBeforeNewlines(text: string): string {
  const parts: string[] = [];
  let copied = 0;
  for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", newline + 1)) {
    let start = newline;
    while (start > copied) {
      const code = text.charCodeAt(start - 1);
      if (code !== 32 && code !== 9) break;
      start--;
    }
    if (start === newline) continue;
    parts.push(text.slice(copied, start));
    copied = newline;
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(copied));
  return parts.join("");
}

export function sanitizeReplyDirectiveId(raw: string | undefined): string | undefined {
  const trimmed = raw?.trim();
  if (!trimmed) return undefined;
  const sanitized = trimmed.replace(UNSAFE_REPLY_DIRECTIVE_CHARS_RE, "").trim();
  if (!sanitized) return undefined;
  if (sanitized.length <= MAX_REPLY_DIRECTIVE_ID_LENGTH) return sanitized;
  return Array.from(sanitized).slice(0, MAX_REPLY_DIRECTIVE_ID_LENGTH).join("");
}

const NO_DIRECTIVES = {
  audioAsVoice: false,
  replyToCurrent: false,
  hasAudioTag: false,
  hasReplyTag: false,
} as const;

export function parseInlineDirectives(
  text: string,
  options: ParseInlineDirectivesOptions = {},
): InlineDirectives {
  const { stripAudioTag = true, stripReplyTags = true, preserveTrailingWhitespace = false } = options;
  if (!text) return { text: "", ...NO_DIRECTIVES };
  if (!text.includes("[[")) {
    return {
      text: normalizeDirectiveWhitespace(text, preserveTrailingWhitespace ? "preserve" : "trim"),
      ...NO_DIRECTIVES,
    };
  }
  let audioAsVoice = false;
  let hasAudioTag = false;
  let hasReplyTag = false;
  let sawCurrent = false;
  let lastExplicitId: string | undefined;
  let removedTrailingDirectiveLine = false;
  const stripDirective = (match: string, offset: number, source: string): string => {
    if (
      preserveTrailingWhitespace &&
      !removedTrailingDirectiveLine &&
      offset + match.length === source.trimEnd().length
    ) {
      const lineStart =
        Math.max(source.lastIndexOf("\n", offset - 1), source.lastIndexOf("\r", offset - 1)) + 1;
      removedTrailingDirectiveLine = /^[\t ]*$/.test(source.slice(lineStart, offset));
    }
    return replacementPreservesWordBoundary(source, offset, match.length);
  };
  const afterAudio = replaceOutsideCode(text, AUDIO_TAG_RE, (match, _capture, offset, source) => {
    audioAsVoice = true;
    hasAudioTag = true;
    return stripAudioTag ? stripDirective(match, offset, source) : match;
  });
  const replyText = replaceOutsideCode(afterAudio, REPLY_TAG_RE, (match, idRaw, offset, source) => {
    hasReplyTag = true;
    if (idRaw === undefined) sawCurrent = true;
    else {
      const id = sanitizeReplyDirectiveId(idRaw);
      if (id) lastExplicitId = id;
    }
    return stripReplyTags ? stripDirective(match, offset, source) : match;
  });
  const tailMode = preserveTrailingWhitespace
    ? removedTrailingDirectiveLine
      ? "normalize"
      : "preserve"
    : "trim";
  const normalizedText =
    hasAudioTag || hasReplyTag || replyText !== text
      ? normalizeDirectiveWhitespace(replyText, tailMode)
      : replyText;
  if (!hasAudioTag && !hasReplyTag) return { text: normalizedText, ...NO_DIRECTIVES };
  const currentId = options.currentMessageId?.trim() || undefined;
  const replyToId = lastExplicitId ?? (sawCurrent ? currentId : undefined);
  return {
    text: normalizedText,
    audioAsVoice,
    ...(replyToId !== undefined ? { replyToId } : {}),
    ...(lastExplicitId !== undefined ? { replyToExplicitId: lastExplicitId } : {}),
    replyToCurrent: sawCurrent,
    hasAudioTag,
    hasReplyTag,
  };
}

/**
 * Removes directive tags for display, keeping code untouched: only the tags go,
 * the whitespace around them stays and nothing is trimmed or normalised (the
 * delivery variant below also removes the padding). OpenClaw's
 * `stripInlineDirectiveTagsForDisplay`.
 */
export function stripInlineDirectiveTagsForDisplay(text: string): { text: string; changed: boolean } {
  if (!text) return { text, changed: false };
  const stripped = replaceOutsideCode(
    replaceOutsideCode(text, AUDIO_TAG_RE, () => ""),
    REPLY_TAG_RE,
    () => "",
  );
  return { text: stripped, changed: stripped !== text };
}

/** Removes directive tags (and their padding) before delivery, keeping code untouched. */
export function stripInlineDirectiveTagsForDelivery(
  text: string,
  options?: { preserveTrailingWhitespace?: boolean | undefined },
): { text: string; changed: boolean } {
  if (!text.includes("[[")) return { text, changed: false };
  let regions: readonly CodeRegion[] | undefined;
  const edits: { start: number; end: number; text: string }[] = [];
  let searchFrom = 0;
  let previousMatchEnd = 0;
  let cursor = 0;
  while (searchFrom < text.length) {
    const marker = text.indexOf("[[", searchFrom);
    if (marker < 0) break;
    let start = marker;
    while (start > previousMatchEnd && /\s/u.test(text.charAt(start - 1))) start -= 1;
    INLINE_DIRECTIVE_TAG_WITH_PADDING_RE.lastIndex = start;
    const match = INLINE_DIRECTIVE_TAG_WITH_PADDING_RE.exec(text);
    searchFrom = match ? INLINE_DIRECTIVE_TAG_WITH_PADDING_RE.lastIndex : marker + 1;
    if (!match) continue;
    previousMatchEnd = searchFrom;
    regions ??= findCodeRegions(text);
    if (isInsideCode(marker, regions)) continue;
    const preserveCodePadding = regions.some(
      (region) => region.block && region.start > marker && region.start <= searchFrom,
    );
    cursor = preserveCodePadding ? start + match[0].trimEnd().length : searchFrom;
    edits.push({ start, end: cursor, text: !preserveCodePadding && match[0].includes("]]") ? " " : "" });
  }
  if (cursor === 0 || edits.length === 0) return { text, changed: false };
  let out = "";
  let at = 0;
  for (const edit of edits) {
    out += text.slice(at, Math.max(at, edit.start)) + edit.text;
    at = Math.max(at, edit.end);
  }
  out += text.slice(at);
  if (out === text) return { text, changed: false };
  return {
    text: trimTextPreservingCode(out, options?.preserveTrailingWhitespace ? "start" : "both"),
    changed: out !== text,
  };
}

function trimTextPreservingCode(text: string, mode: "both" | "start"): string {
  let trimmed = text.trimStart();
  if (trimmed && trimmed.length !== text.length) {
    const contentStart = text.length - trimmed.length;
    const leadingCode = findCodeRegions(text).find(
      (region) => region.block && region.start <= contentStart && contentStart < region.end,
    );
    if (leadingCode) trimmed = text.slice(leadingCode.start);
  }
  return mode === "both" ? trimmed.trimEnd() : trimmed;
}
