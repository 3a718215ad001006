// Final-text reasoning/final tag stripper and the one tag grammar the kernel uses.
// Owns: `stripReasoningTagsFromText` (OpenClaw 2026.9.6 semantics: <think>/<thinking>/<thought>/<reasoning>/
// <internal>/<antthinking> and their antml:/mm: forms, attributes with quote-aware scanning, nesting, orphan
// closers, unclosed-tag recovery, <final> unwrapping, code exempt, strict/preserve, scope, trim) and the tag
// scanner the streaming stripper reuses. Does not own streaming state (reasoning-stream.ts).
//
// Decision on the two grammars (openclaw-behaviors §16.13): OpenClaw's streaming subscriber recognises only
// attribute-less think/thinking/thought/antthinking tags while its final-text stripper also removes
// <reasoning>, <internal> and tags with attributes, so `<reasoning>x</reasoning>` streams visibly and then
// disappears from the final text. The kernel uses this one grammar (the final-text one) for both paths:
// whatever the final text hides is never streamed. This is a deliberate deviation for streamed output only.
import { type CodeRegion, findCodeRegions, isInsideCode } from "./markdown-code.ts";

export const REASONING_TAG_NAMES: readonly string[] = [
  "think",
  "thinking",
  "thought",
  "reasoning",
  "internal",
  "antthinking",
  "antml:think",
  "antml:thinking",
  "antml:thought",
  "antml:reasoning",
  "mm:think",
  "mm:thinking",
  "mm:thought",
  "mm:reasoning",
];
const REASONING_TAG_NAME_SET = new Set(REASONING_TAG_NAMES);

export type ReasoningTag = {
  index: number;
  text: string;
  isClose: boolean;
  isSelfClosing: boolean;
  isPrivate: boolean;
};

type ParsedTag = { kind: "tag"; tag: ReasoningTag } | { kind: "pending" } | { kind: "invalid"; next: number };

function isTagWhitespace(char: string): boolean {
  return /\s/u.test(char);
}
function isTagNameCharacter(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 58
  );
}
function skipTagWhitespace(text: string, start: number): number {
  let cursor = start;
  while (cursor < text.length && isTagWhitespace(text.charAt(cursor))) cursor += 1;
  return cursor;
}
function invalidTag(text: string, start: number): ParsedTag {
  const nested = text.indexOf("<", start + 1);
  return { kind: "invalid", next: nested === -1 ? text.length : nested };
}

/**
 * Parses a reasoning tag at `start` (text[start] === "<"). With `final` false, a tag that could still
 * complete with more text is reported as pending (the streaming stripper holds it back).
 */
export function parseReasoningTagAt(text: string, start: number, final: boolean): ParsedTag {
  let cursor = skipTagWhitespace(text, start + 1);
  let isClose = false;
  if (text.charAt(cursor) === "/") {
    isClose = true;
    cursor = skipTagWhitespace(text, cursor + 1);
  }
  const nameStart = cursor;
  while (cursor < text.length && isTagNameCharacter(text.charCodeAt(cursor))) cursor += 1;
  const partialName = text.slice(nameStart, cursor).toLowerCase();
  if (!partialName) return cursor === text.length && !final ? { kind: "pending" } : invalidTag(text, start);
  if (!REASONING_TAG_NAME_SET.has(partialName)) {
    const canBecomeKnown = REASONING_TAG_NAMES.some((name) => name.startsWith(partialName));
    return cursor === text.length && !final && canBecomeKnown ? { kind: "pending" } : invalidTag(text, start);
  }
  if (cursor === text.length) return final ? invalidTag(text, start) : { kind: "pending" };
  const boundary = text.charAt(cursor);
  if (!isTagWhitespace(boundary) && boundary !== "/" && boundary !== ">") return invalidTag(text, start);
  let quote: string | undefined;
  let lastSignificant = "";
  for (; cursor < text.length; cursor += 1) {
    const char = text.charAt(cursor);
    if (quote) {
      if (char === quote) quote = undefined;
      continue;
    }
    if (char === '"' || char === "'") {
      quote = char;
      continue;
    }
    if (char === "<") return invalidTag(text, start);
    if (char === ">") {
      return {
        kind: "tag",
        tag: {
          index: start,
          text: text.slice(start, cursor + 1),
          isClose,
          isSelfClosing: !isClose && lastSignificant === "/",
          isPrivate: partialName === "internal",
        },
      };
    }
    if (!isTagWhitespace(char)) lastSignificant = char;
  }
  return final ? invalidTag(text, start) : { kind: "pending" };
}

export function scanReasoningTags(text: string): ReasoningTag[] {
  const tags: ReasoningTag[] = [];
  let cursor = 0;
  while (cursor < text.length) {
    const start = text.indexOf("<", cursor);
    if (start === -1) break;
    const parsed = parseReasoningTagAt(text, start, true);
    if (parsed.kind === "tag") {
      tags.push(parsed.tag);
      cursor = parsed.tag.index + parsed.tag.text.length;
    } else cursor = parsed.kind === "invalid" ? parsed.next : text.length;
  }
  return tags;
}

// ---- <final> tags ----

const FINAL_TAG_CANDIDATE_RE = /<[^<>]*>/g;

function isWhitespace(char: string): boolean {
  return /\s/.test(char);
}

function parseAttributeList(text: string): boolean {
  let index = 0;
  while (index < text.length) {
    while (index < text.length && isWhitespace(text[index] ?? "")) index += 1;
    if (index >= text.length) return true;
    const nameStart = index;
    while (index < text.length) {
      const char = text[index] ?? "";
      if (isWhitespace(char) || char === "=") break;
      if (char === "/" || char === '"' || char === "'" || char === "<" || char === ">") return false;
      index += 1;
    }
    if (index === nameStart) return false;
    while (index < text.length && isWhitespace(text[index] ?? "")) index += 1;
    if (text[index] !== "=") continue;
    index += 1;
    while (index < text.length && isWhitespace(text[index] ?? "")) index += 1;
    if (index >= text.length) return false;
    const quote = text[index];
    if (quote === '"' || quote === "'") {
      const end = text.indexOf(quote, index + 1);
      if (end === -1) return false;
      index = end + 1;
      continue;
    }
    const valueStart = index;
    while (index < text.length && !isWhitespace(text[index] ?? "")) {
      const char = text[index] ?? "";
      if (char === '"' || char === "'" || char === "<" || char === ">") return false;
      index += 1;
    }
    if (index === valueStart) return false;
  }
  return true;
}

export type FinalTagMatch = { index: number; text: string; isClose: boolean; isSelfClosing: boolean };

export function parseFinalTag(text: string): { isClose: boolean; isSelfClosing: boolean } | null {
  if (!text.startsWith("<") || !text.endsWith(">")) return null;
  let body = text.slice(1, -1).trimStart();
  let isClose = false;
  if (body.startsWith("/")) {
    isClose = true;
    body = body.slice(1).trimStart();
  }
  if (!body.toLowerCase().startsWith("final")) return null;
  const boundary = body[5] ?? "";
  if (boundary && !isWhitespace(boundary) && boundary !== "/") return null;
  let rest = body.slice(5);
  if (isClose) return rest.trim().length === 0 ? { isClose: true, isSelfClosing: false } : null;
  const trimmedRest = rest.trimEnd();
  const isSelfClosing = trimmedRest.endsWith("/");
  rest = isSelfClosing ? trimmedRest.slice(0, -1) : rest;
  if (!parseAttributeList(rest)) return null;
  return { isClose: false, isSelfClosing };
}

export function findFinalTagMatches(text: string): FinalTagMatch[] {
  const matches: FinalTagMatch[] = [];
  // parseFinalTag accepts only "<", whitespace, an optional "/", whitespace, then "final"
  if (!text.includes("<") || !/<\s*\/?\s*final/i.test(text)) return matches;
  for (const match of text.matchAll(FINAL_TAG_CANDIDATE_RE)) {
    const parsed = parseFinalTag(match[0]);
    if (parsed) matches.push({ index: match.index, text: match[0], ...parsed });
  }
  return matches;
}

function stripFinalTags(text: string, matches: readonly FinalTagMatch[]): string {
  const codeRegions = findCodeRegions(text);
  let codeIndex = 0;
  let output = "";
  let lastIndex = 0;
  for (const match of matches) {
    let codeRegion = codeRegions[codeIndex];
    while (codeRegion && codeRegion.end <= match.index) {
      codeIndex += 1;
      codeRegion = codeRegions[codeIndex];
    }
    if (codeRegion && codeRegion.start <= match.index) continue;
    output += text.slice(lastIndex, match.index);
    lastIndex = match.index + match.text.length;
  }
  return output + text.slice(lastIndex);
}

// ---- reasoning reduction (final text) ----

export type StripMode = "strict" | "preserve";
export type StripReasoningOptions = {
  mode?: StripMode;
  trim?: "both" | "start" | "none";
  scope?: "all" | "leading";
  recoverUnclosed?: boolean;
};

type Pending = { content: string; containsPrivate: boolean; protectedClose: boolean; visibleBefore: boolean };

function reduceFinalText(
  text: string,
  codeRegions: readonly CodeRegion[],
  mode: "hide" | "static-strict" | "static-preserve",
  scope: "all" | "leading",
): string {
  const output: { kind: "text" | "thinking"; text: string }[] = [];
  let depth = 0;
  let visibleEver = false;
  let pending: Pending | undefined;
  const emit = (kind: "text" | "thinking", value: string): void => {
    if (!value) return;
    const previous = output.at(-1);
    if (previous?.kind === kind) previous.text += value;
    else output.push({ kind, text: value });
    if (kind === "text" && value.trim()) visibleEver = true;
  };
  const append = (value: string): void => {
    if (!value) return;
    if (depth > 0 && pending) {
      pending.content += value;
      pending.protectedClose ||= scanReasoningTags(value).some((tag) => tag.isClose);
    } else emit("text", value);
  };
  const tags = scanReasoningTags(text).filter((tag) => !isInsideCode(tag.index, codeRegions));
  const mustParseRemainder: boolean[] = [];
  if (scope === "leading") {
    let mustParse = false;
    for (let index = tags.length - 1; index >= 0; index -= 1) {
      mustParse ||= tags[index]?.isPrivate === true;
      mustParseRemainder[index] = mustParse;
      mustParse ||= tags[index]?.isClose === true;
    }
  }
  let cursor = 0;
  for (let tagIndex = 0; tagIndex < tags.length; tagIndex += 1) {
    const tag = tags[tagIndex];
    if (!tag) continue;
    const beforeTag = text.slice(cursor, tag.index);
    append(beforeTag);
    const tagEnd = tag.index + tag.text.length;
    if (tag.isSelfClosing) {
      if (depth === 0 && scope === "leading" && visibleEver) {
        emit("text", text.slice(tag.index));
        cursor = text.length;
        break;
      }
      cursor = tagEnd;
      continue;
    }
    if (!tag.isClose) {
      if (depth === 0 && scope === "leading" && visibleEver && !mustParseRemainder[tagIndex]) {
        emit("text", text.slice(tag.index));
        cursor = text.length;
        break;
      }
      if (depth === 0)
        pending = {
          content: "",
          containsPrivate: tag.isPrivate,
          protectedClose: false,
          visibleBefore: visibleEver,
        };
      else if (pending) pending.containsPrivate ||= tag.isPrivate;
      depth += 1;
      cursor = tagEnd;
      continue;
    }
    if (depth > 0) {
      depth -= 1;
      if (depth === 0 && pending) {
        if (!pending.containsPrivate) emit("thinking", pending.content);
        pending = undefined;
      } else if (pending) pending.protectedClose = true;
      cursor = tagEnd;
      continue;
    }
    // orphan closer: visible text on both sides means the text before it was leaked reasoning
    if (beforeTag.trim() && text.slice(tagEnd).trim()) {
      const thinking = output.filter((delta) => delta.kind === "thinking");
      output.splice(0, output.length, ...thinking);
      visibleEver = false;
    }
    cursor = tagEnd;
  }
  append(text.slice(cursor));
  if (depth > 0 && pending && !pending.containsPrivate) {
    const recover =
      mode === "static-preserve" ||
      (mode === "static-strict" && !pending.visibleBefore && !pending.protectedClose);
    emit(recover ? "text" : "thinking", pending.content);
  }
  return output
    .filter((delta) => delta.kind === "text")
    .map((delta) => delta.text)
    .join("");
}

/** Strips reasoning and final tags from a complete assistant text (OpenClaw's stripReasoningTagsFromText). */
export function stripReasoningTagsFromText(text: string, options?: StripReasoningOptions): string {
  if (!text) return text;
  const trimMode = options?.trim ?? "both";
  let cleaned = text;
  const finalMatches = findFinalTagMatches(cleaned);
  if (finalMatches.length > 0) cleaned = stripFinalTags(cleaned, finalMatches);
  const hasThinkingTag = cleaned.includes("<") && scanReasoningTags(cleaned).length > 0;
  if (finalMatches.length === 0 && !hasThinkingTag) return text;
  const mode =
    options?.recoverUnclosed === false
      ? "hide"
      : options?.mode === "preserve"
        ? "static-preserve"
        : "static-strict";
  const stripped = hasThinkingTag
    ? reduceFinalText(cleaned, findCodeRegions(cleaned), mode, options?.scope ?? "all")
    : cleaned;
  if (trimMode === "none") return stripped;
  return trimMode === "start" ? stripped.trimStart() : stripped.trim();
}
