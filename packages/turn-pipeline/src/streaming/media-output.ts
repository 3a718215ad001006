// MEDIA: lines: attachments a reply names on their own line ("MEDIA: ./chart.png", "MEDIA: https://…").
// Owns: OpenClaw 2026.9.6's splitMediaFromOutput: lines outside fenced code whose trimmed start is MEDIA:,
// quoted payloads ("…", '…', `…`), unquoted payloads split on whitespace (a rooted path absorbs following words
// until its extension is complete), punctuation cleanup, and the safety rules: https only, no userinfo, no
// local/private/loopback/link-local/metadata hosts, no dotless hosts, no path traversal or ~user, ≤ 4096 chars.
// Also the [[audio_as_voice]] flag. Does not own reply targets (directive-tags.ts) nor fetching media.
// Not implemented: Markdown image extraction (`extractMarkdownImages` / allowlists), off by default upstream.

import { parseInlineDirectives } from "./directive-tags.ts";
import { type CodeRegion, findCodeRegions } from "./markdown-code.ts";

export type MediaSegment = { type: "text"; text: string } | { type: "media"; url: string };
export type SplitMediaResult = {
  text: string;
  mediaUrls?: string[];
  audioAsVoice?: boolean;
  segments?: MediaSegment[];
};
export type SplitMediaOptions = {
  preserveTrailingWhitespace?: boolean | undefined;
  extractMediaDirectives?: boolean | undefined;
  /** false: leave `segments` out (callers that only need text and media skip building them per line). */
  segments?: boolean;
};

const MEDIA_TOKEN_RE = /\bMEDIA:\s*`?([^\n]+)`?/gi;
const FILE_URL_PREFIX_RE = /^file:(?:\/\/)?/i;
const TRAILING_SERIALIZED_JSON_AFTER_EXT_RE = /^(.*\.\w{1,10})\\?"(?=[\]},:]|$).*/s;
const WINDOWS_DRIVE_RE = /^[a-zA-Z]:[\\/]/;
const MEDIA_SOURCE_ROOT_RE = /^(?:[a-z]:[\\/]|[/~]|\.{1,2}[\\/]|\\\\)/i;
const SCHEME_RE = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;
const HAS_FILE_EXT = /\.\w{1,10}$/;
const TRAVERSAL_SEGMENT_RE = /(?:^|[/\\])\.\.(?:[/\\]|$)/;
const HTTP_URL_PREFIX_RE = /^https?:\/\//i;

function normalizeMediaSource(src: string): string {
  return src.replace(FILE_URL_PREFIX_RE, "");
}

function cleanCandidate(raw: string): string {
  const stripped = raw.replace(/^[`"'[{(]+/, "").replace(/[`"'\\})\],]+$/, "");
  return TRAILING_SERIALIZED_JSON_AFTER_EXT_RE.exec(stripped)?.[1] ?? stripped;
}

function isSupportedHomeRelativePath(candidate: string): boolean {
  return candidate.startsWith("~/") || candidate.startsWith("~\\");
}

function hasTraversalOrUnsupportedHomeDirPrefix(candidate: string): boolean {
  return (
    candidate.startsWith("../") ||
    candidate === ".." ||
    (candidate.startsWith("~") && !isSupportedHomeRelativePath(candidate)) ||
    TRAVERSAL_SEGMENT_RE.test(candidate)
  );
}

function looksLikeLocalFilePath(candidate: string): boolean {
  return (
    candidate.startsWith("/") ||
    candidate.startsWith("./") ||
    candidate.startsWith("../") ||
    candidate.startsWith("~") ||
    WINDOWS_DRIVE_RE.test(candidate) ||
    candidate.startsWith("\\\\") ||
    (!SCHEME_RE.test(candidate) && (candidate.includes("/") || candidate.includes("\\")))
  );
}

function isLikelyLocalPath(candidate: string): boolean {
  if (hasTraversalOrUnsupportedHomeDirPrefix(candidate)) return false;
  return (
    candidate.startsWith("/") ||
    candidate.startsWith("./") ||
    isSupportedHomeRelativePath(candidate) ||
    WINDOWS_DRIVE_RE.test(candidate) ||
    candidate.startsWith("\\\\") ||
    (!SCHEME_RE.test(candidate) && (candidate.includes("/") || candidate.includes("\\")))
  );
}

// ipaddr.js IPv4 special ranges OpenClaw blocks: unspecified, broadcast, multicast, linkLocal, loopback,
// carrierGradeNat, private, reserved (which includes the RFC 2544 benchmark range 198.18.0.0/15).
const BLOCKED_IPV4_CIDRS: readonly (readonly [number, number, number, number, number])[] = [
  [0, 0, 0, 0, 8],
  [255, 255, 255, 255, 32],
  [224, 0, 0, 0, 4],
  [169, 254, 0, 0, 16],
  [127, 0, 0, 0, 8],
  [100, 64, 0, 0, 10],
  [10, 0, 0, 0, 8],
  [172, 16, 0, 0, 12],
  [192, 168, 0, 0, 16],
  [192, 0, 0, 0, 24],
  [192, 0, 2, 0, 24],
  [192, 88, 99, 0, 24],
  [198, 18, 0, 0, 15],
  [198, 51, 100, 0, 24],
  [203, 0, 113, 0, 24],
  [240, 0, 0, 0, 4],
];

function ipv4ToInt(parts: readonly number[]): number {
  return (((parts[0] ?? 0) << 24) | ((parts[1] ?? 0) << 16) | ((parts[2] ?? 0) << 8) | (parts[3] ?? 0)) >>> 0;
}

function isBlockedIpv4(parts: readonly number[]): boolean {
  const value = ipv4ToInt(parts);
  if (value === ipv4ToInt([100, 100, 100, 200])) return true; // cloud metadata
  return BLOCKED_IPV4_CIDRS.some(([a, b, c, d, bits]) => {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    return (value & mask) >>> 0 === (ipv4ToInt([a, b, c, d]) & mask) >>> 0;
  });
}

function isBlockedRemoteMediaHostname(hostname: string): boolean {
  const normalized = hostname
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "");
  if (!normalized || normalized.split(".").some((label) => label.length === 0)) return true;
  // dotless hosts (including every IPv6 literal) are never remote media hosts
  if (!normalized.includes(".")) return true;
  if (
    normalized === "localhost" ||
    normalized === "localhost.localdomain" ||
    normalized === "metadata.google.internal" ||
    normalized.endsWith(".localhost") ||
    normalized.endsWith(".local") ||
    normalized.endsWith(".internal")
  ) {
    return true;
  }
  const dotted = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(normalized);
  if (dotted) {
    const parts = dotted.slice(1).map(Number);
    if (
      parts.every((part) => part <= 255) &&
      dotted.slice(1).every((part) => part === "0" || !part.startsWith("0"))
    ) {
      return isBlockedIpv4(parts);
    }
  }
  // legacy numeric forms (octal, hex, fewer parts) that canonical parsing rejects
  const labels = normalized.split(".");
  return labels.length <= 4 && labels.every((part) => /^[0-9]+$/.test(part) || /^0x[0-9a-f]+$/i.test(part));
}

function isAllowedRemoteMediaUrl(candidate: string): boolean {
  try {
    const parsed = new URL(candidate);
    return (
      parsed.protocol === "https:" &&
      !parsed.username &&
      !parsed.password &&
      !isBlockedRemoteMediaHostname(parsed.hostname)
    );
  } catch {
    return false;
  }
}

function isValidMedia(
  source: string,
  opts?: { allowSpaces?: boolean; allowBareFilename?: boolean },
): boolean {
  const candidate = normalizeMediaSource(source);
  if (!candidate || candidate.length > 4096) return false;
  if (!opts?.allowSpaces && /\s/.test(candidate)) return false;
  if (HTTP_URL_PREFIX_RE.test(candidate)) return isAllowedRemoteMediaUrl(candidate);
  if (isLikelyLocalPath(candidate)) return true;
  if (hasTraversalOrUnsupportedHomeDirPrefix(candidate)) return false;
  return Boolean(opts?.allowBareFilename && !SCHEME_RE.test(candidate) && HAS_FILE_EXT.test(candidate));
}

function beginsIndependentMediaSource(raw: string): boolean {
  const candidate = normalizeMediaSource(cleanCandidate(raw));
  return MEDIA_SOURCE_ROOT_RE.test(candidate) || SCHEME_RE.test(candidate);
}

function splitUnquotedMediaDirectiveParts(payload: string): string[] {
  const parts: string[] = [];
  let previousEnd = 0;
  for (const match of payload.matchAll(/\S+/g)) {
    const candidate = normalizeMediaSource(cleanCandidate(match[0]));
    const previous = parts.at(-1);
    const previousCandidate = previous ? normalizeMediaSource(cleanCandidate(previous)) : "";
    if (
      previous !== undefined &&
      MEDIA_SOURCE_ROOT_RE.test(previousCandidate) &&
      !beginsIndependentMediaSource(candidate) &&
      (!HAS_FILE_EXT.test(previousCandidate) || !isValidMedia(candidate))
    ) {
      parts[parts.length - 1] = `${previous}${payload.slice(previousEnd, match.index)}${match[0]}`;
    } else parts.push(match[0]);
    previousEnd = match.index + match[0].length;
  }
  return parts;
}

function unwrapQuoted(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed.length < 2) return undefined;
  const first = trimmed[0];
  if (first !== trimmed[trimmed.length - 1]) return undefined;
  if (first !== '"' && first !== "'" && first !== "`") return undefined;
  return trimmed.slice(1, -1).trim();
}

function cleanLineText(text: string): string {
  return text.replace(/[ \t]{2,}/g, " ").trim();
}

/** `line.trimStart()` starts with MEDIA: (any case); a line starting with another ASCII character is not sliced. */
function mayStartWithMediaToken(line: string): boolean {
  const first = line.charCodeAt(0);
  if (first > 32 && first < 127 && first !== 77 && first !== 109) return false;
  return line.trimStart().slice(0, 6).toUpperCase().startsWith("MEDIA:");
}

type LineUnit = { text: string; offset: number; plain: boolean };

/** "MEDIA" in any case right before `colon`; U+0131 (dotless i) is the one non-ASCII letter upper-casing into it. */
export function isMediaWordBefore(text: string, colon: number): boolean {
  const i = text.charCodeAt(colon - 2);
  return (
    (text.charCodeAt(colon - 1) | 32) === 97 &&
    ((i | 32) === 105 || i === 0x131) &&
    (text.charCodeAt(colon - 3) | 32) === 100 &&
    (text.charCodeAt(colon - 4) | 32) === 101 &&
    (text.charCodeAt(colon - 5) | 32) === 109
  );
}

/**
 * The lines of `text` to look at. `everyLine`: each line on its own (needed for segments). Otherwise only
 * the lines that may be MEDIA: lines are returned one by one; the lines between them come as `plain`
 * stretches (several lines joined by their newlines), which `keptLines.join("\n")` reproduces unchanged,
 * so a long reply with a few MEDIA: lines is not split into every one of its lines.
 */
function lineUnits(text: string, everyLine: boolean): LineUnit[] {
  if (everyLine) {
    const units: LineUnit[] = [];
    let offset = 0;
    for (const line of text.split("\n")) {
      units.push({ text: line, offset, plain: false });
      offset += line.length + 1;
    }
    return units;
  }
  const units: LineUnit[] = [];
  let plainStart = 0;
  // colons are rare in prose: find them with indexOf and look at the five characters before each
  for (let colon = text.indexOf(":", 5); colon !== -1; colon = text.indexOf(":", colon + 1)) {
    if (!isMediaWordBefore(text, colon)) continue;
    const lineStart = text.lastIndexOf("\n", colon - 6) + 1;
    const newline = text.indexOf("\n", colon);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    if (mayStartWithMediaToken(line)) {
      if (lineStart > plainStart)
        units.push({ text: text.slice(plainStart, lineStart - 1), offset: plainStart, plain: true });
      units.push({ text: line, offset: lineStart, plain: false });
      plainStart = lineEnd + 1;
    }
    if (newline === -1) break;
    colon = newline;
  }
  if (plainStart <= text.length)
    units.push({ text: text.slice(plainStart), offset: plainStart, plain: true });
  return units;
}

/** `text.trim() !== ""` without making the trimmed copy (runs once per block and per streamed line). */
export function hasNonWhitespace(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 32 || (code >= 9 && code <= 13)) continue;
    if (code < 128 || !/\s/.test(text.charAt(index))) return true;
  }
  return false;
}

/** `/media:/i.test(text)` (ASCII letters only, as that regex): looks only before each colon. */
export function containsMediaColon(text: string): boolean {
  for (let colon = text.indexOf(":", 5); colon !== -1; colon = text.indexOf(":", colon + 1)) {
    if (
      (text.charCodeAt(colon - 1) | 32) === 97 &&
      (text.charCodeAt(colon - 2) | 32) === 105 &&
      (text.charCodeAt(colon - 3) | 32) === 100 &&
      (text.charCodeAt(colon - 4) | 32) === 101 &&
      (text.charCodeAt(colon - 5) | 32) === 109
    )
      return true;
  }
  return false;
}

/** Splits reply text into visible text, media references, the voice flag and ordered segments. */
export function splitMediaFromOutput(raw: string, options: SplitMediaOptions = {}): SplitMediaResult {
  const trimmedRaw = options.preserveTrailingWhitespace ? raw : raw.trimEnd();
  if (!hasNonWhitespace(trimmedRaw)) return { text: options.preserveTrailingWhitespace ? trimmedRaw : "" };
  const extractMediaDirectives = options.extractMediaDirectives !== false;
  const mayContainMediaToken = extractMediaDirectives && containsMediaColon(trimmedRaw);
  if (!mayContainMediaToken && !trimmedRaw.includes("[[")) return { text: trimmedRaw };
  // without MEDIA: lines and an audio tag the general path below ends in `{ text: trimmedRaw }` as well
  // (reply tags alone change nothing here); only its segments differ, so this holds when they are not asked for
  if (!mayContainMediaToken && options.segments === false && !/audio_as_voice/i.test(trimmedRaw))
    return { text: trimmedRaw };
  const media: string[] = [];
  let foundMediaToken = false;
  const segments: MediaSegment[] = [];
  let lastTextSegment: { type: "text"; text: string } | undefined;
  const withSegments = options.segments !== false;
  const pushTextSegment = (text: string): void => {
    if (!withSegments) return;
    const last = segments[segments.length - 1];
    if (last?.type === "text") last.text = `${last.text}\n${text.trim() ? text : ""}`;
    else if (!text.trim()) {
      if (last?.type === "media" && lastTextSegment && !lastTextSegment.text.endsWith("\n"))
        lastTextSegment.text += "\n";
    } else {
      lastTextSegment = { type: "text", text };
      segments.push(lastTextSegment);
    }
  };
  const codeBlocks: CodeRegion[] = findCodeRegions(trimmedRaw).filter((region) => region.block);
  const keptLines: string[] = [];
  let codeBlockIndex = 0;
  for (const unit of lineUnits(trimmedRaw, withSegments || !extractMediaDirectives)) {
    if (unit.plain) {
      keptLines.push(unit.text);
      continue;
    }
    const line = unit.text;
    const lineOffset = unit.offset;
    const lineEnd = lineOffset + line.length;
    let codeBlock = codeBlocks[codeBlockIndex];
    while (codeBlock && lineOffset >= codeBlock.end) {
      codeBlockIndex += 1;
      codeBlock = codeBlocks[codeBlockIndex];
    }
    if (
      (codeBlock && lineEnd > codeBlock.start) ||
      !extractMediaDirectives ||
      !mayStartWithMediaToken(line)
    ) {
      keptLines.push(line);
      pushTextSegment(line);
      continue;
    }
    const matches = Array.from(line.matchAll(MEDIA_TOKEN_RE));
    if (matches.length === 0) {
      keptLines.push(line);
      pushTextSegment(line);
      continue;
    }
    const pieces: string[] = [];
    const lineSegments: MediaSegment[] = [];
    let cursor = 0;
    for (const match of matches) {
      const start = match.index;
      pieces.push(line.slice(cursor, start));
      const payload = match[1] ?? "";
      const unwrapped = unwrapQuoted(payload);
      const payloadValue = unwrapped ?? payload;
      const parts = unwrapped ? [unwrapped] : splitUnquotedMediaDirectiveParts(payload);
      const mediaStartIndex = media.length;
      let validCount = 0;
      const invalidParts: string[] = [];
      let hasValidMedia = false;
      for (const part of parts) {
        const candidate = unwrapped === undefined ? cleanCandidate(part) : part;
        if (isValidMedia(candidate, { allowSpaces: Boolean(unwrapped) || /\s/.test(candidate) })) {
          media.push(candidate);
          hasValidMedia = true;
          foundMediaToken = true;
          validCount += 1;
        } else if (!/\s/.test(part) || !hasTraversalOrUnsupportedHomeDirPrefix(candidate))
          invalidParts.push(part);
      }
      const trimmedPayload = payloadValue.trim();
      const looksLikeLocalPath =
        looksLikeLocalFilePath(trimmedPayload) || FILE_URL_PREFIX_RE.test(trimmedPayload);
      if (
        !unwrapped &&
        validCount === 1 &&
        invalidParts.length > 0 &&
        !parts.slice(1).some(beginsIndependentMediaSource) &&
        /\s/.test(payloadValue) &&
        looksLikeLocalPath
      ) {
        const fallback = cleanCandidate(payloadValue);
        if (isValidMedia(fallback, { allowSpaces: true })) {
          media.splice(mediaStartIndex, media.length - mediaStartIndex, fallback);
          hasValidMedia = true;
          foundMediaToken = true;
          invalidParts.length = 0;
        }
      }
      if (!hasValidMedia) {
        const fallback = unwrapped ?? cleanCandidate(payloadValue);
        if (isValidMedia(fallback, { allowSpaces: true, allowBareFilename: true })) {
          media.push(fallback);
          hasValidMedia = true;
          foundMediaToken = true;
          invalidParts.length = 0;
        }
      }
      if (hasValidMedia) {
        const beforeText = cleanLineText(pieces.join(""));
        if (beforeText) lineSegments.push({ type: "text", text: beforeText });
        pieces.length = 0;
        for (const url of media.slice(mediaStartIndex)) lineSegments.push({ type: "media", url });
        if (invalidParts.length > 0) pieces.push(invalidParts.join(" "));
      } else if (looksLikeLocalPath) foundMediaToken = true;
      else pieces.push(match[0]);
      cursor = start + match[0].length;
    }
    pieces.push(line.slice(cursor));
    const cleanedLine = cleanLineText(pieces.join(""));
    if (cleanedLine) {
      keptLines.push(cleanedLine);
      lineSegments.push({ type: "text", text: cleanedLine });
    }
    for (const segment of lineSegments) {
      if (segment.type === "text") pushTextSegment(segment.text);
      else if (withSegments) segments.push(segment);
    }
  }
  const visibleText = keptLines.join("\n").replace(/^(?:[ \t]*\n)+/, "");
  const audio = parseInlineDirectives(visibleText, {
    stripReplyTags: false,
    preserveTrailingWhitespace: options.preserveTrailingWhitespace,
  });
  const cleanedText = options.preserveTrailingWhitespace ? audio.text : audio.text.trimEnd();
  if (media.length === 0) {
    const parsedText = foundMediaToken || audio.audioAsVoice ? cleanedText : trimmedRaw;
    return {
      text: parsedText,
      ...(withSegments ? { segments: parsedText ? [{ type: "text" as const, text: parsedText }] : [] } : {}),
      ...(audio.audioAsVoice ? { audioAsVoice: true } : {}),
    };
  }
  return {
    text: cleanedText,
    mediaUrls: media,
    ...(withSegments
      ? { segments: segments.length > 0 ? segments : [{ type: "text" as const, text: cleanedText }] }
      : {}),
    ...(audio.audioAsVoice ? { audioAsVoice: true } : {}),
  };
}
