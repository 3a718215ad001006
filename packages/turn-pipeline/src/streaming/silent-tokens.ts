// Silent reply tokens: NO_REPLY (a reply that says "say nothing") and HEARTBEAT_OK (a heartbeat acknowledgement).
// Owns: OpenClaw 2026.9.6's token tests (exact, JSON-string, {"action": token} envelope, reasoning-prefixed,
// streaming prefix while the token is still being typed, leading token glued to text). Does not own deciding
// which token applies (the caller passes it).

export const SILENT_REPLY_TOKEN = "NO_REPLY";
export const HEARTBEAT_TOKEN = "HEARTBEAT_OK";

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function cachedTokenRegex(build: (escaped: string) => RegExp): (token: string) => RegExp {
  const cache = new Map<string, RegExp>();
  return (token) => {
    let regex = cache.get(token);
    if (!regex) {
      regex = build(escapeRegExp(token));
      cache.set(token, regex);
    }
    return regex;
  };
}

const silentExact = cachedTokenRegex((t) => new RegExp(`^\\s*${t}(?:\\s+${t})*\\s*$`, "i"));
const silentLeadingAttached = cachedTokenRegex(
  (t) => new RegExp(`^\\s*(?:${t}\\s+)*${t}(?=[\\p{L}\\p{N}])`, "iu"),
);
const silentLeading = cachedTokenRegex((t) => new RegExp(`^\\s*${t}((?:\\s*${t})*)(\\s*)`, "i"));

/**
 * Fast rejection for the token tests below (they run on every streamed line and block): when the first
 * non-whitespace character is an ASCII letter or digit (never punctuation, so never stripped) and differs,
 * case-insensitively, from the token's first character, no anchored token pattern can match. `extraStarts`
 * lists further first letters a caller's other patterns may start with. Returns false when unsure.
 */
export function firstCharRulesOutToken(text: string, token: string, extraStarts = ""): boolean {
  const tokenFirst = asciiAlnumLower(token.charCodeAt(0));
  if (tokenFirst === -1) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 32 || (code >= 9 && code <= 13)) continue;
    const first = asciiAlnumLower(code);
    return first !== -1 && first !== tokenFirst && !extraStarts.includes(String.fromCharCode(first));
  }
  return false;
}

/** ASCII characters in \p{P} (stripEdgePunctuation strips runs of them; the other ASCII marks are symbols). */
const ASCII_PUNCTUATION: readonly boolean[] = Array.from({ length: 128 }, (_, code) =>
  /\p{P}/u.test(String.fromCharCode(code)),
);

function isAsciiBlank(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13);
}

/**
 * True when isSilentReplyText, isSilentReplyPrefixText and startsWithSilentToken are all false for `text`
 * and `text` has a non-whitespace character (the streaming partial path runs the three on every line). Beyond
 * firstCharRulesOutToken it settles lines that start with ASCII punctuation or a symbol ("- item", "```ts"):
 * the prefix and leading-token tests need the token at the first non-blank character, and the exact test
 * also tries after a leading run of punctuation and blanks. Returns false when unsure (non-ASCII on the way).
 * `start`/`end`: the test is of text.slice(start, end), read in place (the partial text's lines, see
 * StreamingDirectiveAccumulator.consumePlainRange).
 */
export function lineRulesOutToken(text: string, token: string, start = 0, end = text.length): boolean {
  const tokenFirst = asciiAlnumLower(token.charCodeAt(0));
  if (tokenFirst === -1) return false;
  const length = end;
  let index = start;
  while (index < length && isAsciiBlank(text.charCodeAt(index))) index++;
  if (index === length) return false;
  const code = text.charCodeAt(index);
  if (code >= 128) return false;
  const first = asciiAlnumLower(code);
  if (first !== -1) return first !== tokenFirst || differsFromTokenWithin(text, index, token, length);
  if (!ASCII_PUNCTUATION[code]) return true; // a symbol stays in front of everything the patterns see
  while (index < length && text.charCodeAt(index) < 128 && ASCII_PUNCTUATION[text.charCodeAt(index)]) index++;
  while (index < length && isAsciiBlank(text.charCodeAt(index))) index++;
  if (index === length) return true;
  const next = text.charCodeAt(index);
  if (next >= 128) return false;
  const nextLower = asciiAlnumLower(next);
  return nextLower === -1 || nextLower !== tokenFirst;
}

/**
 * lineRulesOutToken for a line still arriving: true only when the three token tests are false for `text` (its
 * first `length` characters) and for every text that starts with it, so that the start of the line can be shown before it ends. The deciding
 * character must be in `text`: blanks or punctuation so far ("- "), or the token's own start ("NO_RE"), leave it
 * undecided. False when unsure (non-ASCII on the way, a token that does not start with a letter or digit).
 */
export function prefixRulesOutToken(text: string, token: string, length = text.length): boolean {
  const tokenFirst = asciiAlnumLower(token.charCodeAt(0));
  if (tokenFirst === -1) return false;
  let index = 0;
  while (index < length && isAsciiBlank(text.charCodeAt(index))) index++;
  if (index === length) return false;
  let code = text.charCodeAt(index);
  if (code >= 128) return false;
  if (asciiAlnumLower(code) === -1) {
    if (!ASCII_PUNCTUATION[code]) return true; // a symbol stays in front of everything the patterns see
    // the prefix and leading-token tests need the token first; the exact test also tries after one leading
    // run of punctuation and blanks, so what follows that run decides
    while (index < length && text.charCodeAt(index) < 128 && ASCII_PUNCTUATION[text.charCodeAt(index)])
      index++;
    while (index < length && isAsciiBlank(text.charCodeAt(index))) index++;
    if (index === length) return false;
    code = text.charCodeAt(index);
    if (code >= 128) return false;
    if (asciiAlnumLower(code) === -1) return true;
  }
  return asciiAlnumLower(code) !== tokenFirst || differsFromTokenWithin(text, index, token, length);
}

/**
 * The text at `start` (its first character already matching the token's) departs from the token, ignoring
 * ASCII case, before either ends: then it neither is the token nor starts with it nor is a prefix of it, which
 * all three token tests need at a first character that is a letter or digit (nothing is stripped in front of
 * one). `length`: the text's end. False when unsure: a non-ASCII character on the way in the text or the token (case folding maps some
 * to ASCII letters, as "ı" to "I"), or the text ends while still matching.
 */
function differsFromTokenWithin(text: string, start: number, token: string, length = text.length): boolean {
  const end = Math.min(length - start, token.length);
  for (let offset = 1; offset < end; offset++) {
    const code = text.charCodeAt(start + offset);
    const tokenCode = token.charCodeAt(offset);
    if (code >= 128 || tokenCode >= 128) return false;
    if (asciiLower(code) !== asciiLower(tokenCode)) return true;
  }
  return false;
}

function asciiLower(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

/**
 * True for a text with no non-whitespace character and a token that starts with an ASCII letter or digit: none
 * of the three token tests can hold (each needs the token's characters). The blank lines between paragraphs.
 * `start`/`end`: the test is of text.slice(start, end), read in place.
 */
export function blankRulesOutToken(text: string, token: string, start = 0, end = text.length): boolean {
  if (asciiAlnumLower(token.charCodeAt(0)) === -1) return false;
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    if (!(code === 32 || (code >= 9 && code <= 13)) && !(code > 127 && /\s/.test(text.charAt(index))))
      return false;
  }
  return true;
}

function asciiAlnumLower(code: number): number {
  if (code >= 65 && code <= 90) return code + 32;
  if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57)) return code;
  return -1;
}

function stripEdgePunctuation(text: string): string {
  const start = text.match(/^\p{P}+/u)?.[0].length ?? 0;
  const tail = text.match(/$(?<=(\p{P}+))/u)?.[1]?.length ?? 0;
  return text.slice(start, text.length - tail);
}

/** True only for token-only replies ("NO_REPLY", " no_reply ", "NO_REPLY."). */
export function isSilentReplyText(text: string | undefined, token = SILENT_REPLY_TOKEN): boolean {
  if (!text || firstCharRulesOutToken(text, token)) return false;
  return silentExact(token).test(text) || silentExact(token).test(stripEdgePunctuation(text.trim()));
}

function isSilentReplyJsonStringText(text: string, token: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith('"') || !trimmed.endsWith('"') || !trimmed.includes(token)) return false;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return typeof parsed === "string" && parsed.trim() === token;
  } catch {
    return false;
  }
}

function isSilentReplyEnvelopeText(text: string, token: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") || !trimmed.endsWith("}") || !trimmed.includes(token)) return false;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return false;
    const keys = Object.keys(parsed);
    const action = (parsed as { action?: unknown }).action;
    return keys.length === 1 && keys[0] === "action" && typeof action === "string" && action.trim() === token;
  } catch {
    return false;
  }
}

const taggedReasoningPrefixRe =
  /^\s*<\s*(?:(?:antml:|mm:)?(?:think(?:ing)?|thought)|antthinking)\b[^<>]*>[\s\S]*?<\s*\/\s*(?:(?:antml:|mm:)?(?:think(?:ing)?|thought)|antthinking)\s*>\s*/i;
const openReasoningPrefixRe = /^\s*<\s*(?:(?:antml:|mm:)?(?:think(?:ing)?|thought)|antthinking)\b[^<>]*>/i;
/** What plainReasoningPrefixRe needs at its start (a cheaper necessary test, see isSilentReplyPayloadText). */
const REASONING_WORD_START_RE = /^\s*(?:think|thought|analysis|reasoning)/i;
const plainReasoningPrefixRe = /^\s*(?:think(?:ing)?|thought|analysis|reasoning)\s*:?\s*\r?\n/i;
const silentIntentTextRe =
  /^\s*(?:i|i'll|i\s+will|i'm|i\s+am|we|we'll|we\s+will|the\s+assistant|assistant|the\s+bot|bot|openclaw)\s+(?:(?:will\s+)?(?:stay|remain|keep|be)\s+(?:quiet|silent)(?:\s+(?:here|for\s+now|on\s+this|in\s+this\s+(?:chat|thread|channel|conversation)))?|(?:do\s+not|don't|dont|will\s+not|won't|would\s+not|should\s+not)\s+(?:reply|respond)(?:\s+(?:here|for\s+now|on\s+this|in\s+this\s+(?:chat|thread|channel|conversation)))?|(?:have|has)\s+nothing\s+(?:to|for)\s+(?:say|add|reply|respond))(?:[.!?]+)?\s*$/i;
const substantiveAnswerCueRe =
  /\b(?:answer|here(?:'s|\s+is)|tell\s+them|you\s+(?:should|can|could|need|must)|please|try|use|send|service\s+is|resolved|retry|yes|no,|sure)\b/i;
const bareReasoningPlaceholderRe =
  /^\s*(?:(?:internal|private)\s+)?(?:reasoning|thinking|thoughts?|analysis)(?:\s+notes?)?\s*$/i;

function stripLeadingReasoningBlocks(text: string): string {
  let current = text;
  for (;;) {
    const next = current.replace(taggedReasoningPrefixRe, "");
    if (next === current) return current;
    current = next;
  }
}

function stripFinalSilentToken(text: string, token: string): string | null {
  const stripped = text.replace(new RegExp(`(?:^|[\\s*.])${escapeRegExp(token)}\\s*$`, "i"), "").trim();
  return stripped === text.trim() ? null : stripped;
}

function hasSilentIntentFinalSilentToken(text: string, token: string): boolean {
  const withoutToken = stripFinalSilentToken(text, token);
  if (withoutToken === null) return false;
  return !withoutToken || silentIntentTextRe.test(withoutToken);
}

function hasPlainReasoningFinalSilentToken(text: string, token: string): boolean {
  const withoutToken = stripFinalSilentToken(text, token);
  if (withoutToken === null) return false;
  if (!withoutToken || silentIntentTextRe.test(withoutToken)) return true;
  const lines = withoutToken
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  const finalLine = lines.at(-1);
  const previousLines = lines.slice(0, -1).join("\n");
  return (
    Boolean(
      finalLine &&
        silentIntentTextRe.test(finalLine) &&
        previousLines &&
        !substantiveAnswerCueRe.test(previousLines),
    ) || bareReasoningPlaceholderRe.test(withoutToken)
  );
}

function isReasoningPrefixedSilentReplyText(text: string, token: string): boolean {
  const trimmed = text.trim();
  if (!trimmed) return false;
  const withoutBlocks = stripLeadingReasoningBlocks(trimmed);
  if (withoutBlocks !== trimmed)
    return isSilentReplyText(withoutBlocks, token) || hasSilentIntentFinalSilentToken(withoutBlocks, token);
  if (openReasoningPrefixRe.test(trimmed)) {
    const rest = trimmed.replace(openReasoningPrefixRe, "");
    return isSilentReplyText(rest, token) || hasPlainReasoningFinalSilentToken(rest, token);
  }
  if (!plainReasoningPrefixRe.test(trimmed)) return false;
  const rest = trimmed.replace(plainReasoningPrefixRe, "");
  return isSilentReplyText(rest, token) || hasPlainReasoningFinalSilentToken(rest, token);
}

/** The longest word REASONING_WORD_START_RE looks for ("reasoning"). */
const REASONING_WORD_MAX = 9;

/**
 * isSilentReplyPayloadText's first two steps on `head`, a prefix of the payload text: true when they show the
 * text is not silent. They read the first non-blank character and at most REASONING_WORD_MAX characters from
 * it; when `head` ends before that, false (undecided), unless it is all of the text (`whole`).
 */
export function headRulesOutSilentPayload(head: string, whole: boolean, token = SILENT_REPLY_TOKEN): boolean {
  // JSON forms start with `"` or `{`, reasoning prefixes with `<` or think/thought/analysis/reasoning
  if (firstCharRulesOutToken(head, token, "tar")) return true;
  // starting with t, a or r (ruled out for the token itself), only a plain reasoning prefix can still apply
  if (!firstCharRulesOutToken(head, token)) return false;
  if (!whole) {
    // the first non-blank character is an ASCII letter or digit (firstCharRulesOutToken held)
    let first = 0;
    while (isAsciiBlank(head.charCodeAt(first))) first++;
    if (head.length - first < REASONING_WORD_MAX) return false;
  }
  return !REASONING_WORD_START_RE.test(head);
}

/** Token-only, JSON-string, {"action": token} or reasoning-prefixed silent payload text. */
export function isSilentReplyPayloadText(text: string | undefined, token = SILENT_REPLY_TOKEN): boolean {
  if (!text || headRulesOutSilentPayload(text, true, token)) return false;
  return (
    isSilentReplyText(text, token) ||
    isSilentReplyJsonStringText(text, token) ||
    isSilentReplyEnvelopeText(text, token) ||
    isReasoningPrefixedSilentReplyText(text, token)
  );
}

/** Strips leading tokens ("NO_REPLYThe user…" → "The user…"). */
export function stripLeadingSilentToken(text: string, token = SILENT_REPLY_TOKEN): string {
  return text.replace(silentLeading(token), "").trim();
}

/** Text starts with tokens glued to visible content, or followed by a newline and more text. */
export function startsWithSilentToken(text: string | undefined, token = SILENT_REPLY_TOKEN): boolean {
  if (!text || firstCharRulesOutToken(text, token)) return false;
  if (silentLeadingAttached(token).test(text)) return true;
  const leading = silentLeading(token).exec(text);
  if (!leading || !/[\r\n]/.test(leading[2] ?? "")) return false;
  return text.slice(leading[0].length).trimStart().length > 0;
}

/** While streaming: the text so far could still become the token ("NO", "NO_RE"). */
export function isSilentReplyPrefixText(text: string | undefined, token = SILENT_REPLY_TOKEN): boolean {
  if (!text || firstCharRulesOutToken(text, token)) return false;
  const tokenUpper = token.toUpperCase();
  const trimmed = text.trimStart();
  if (!trimmed || trimmed.length > tokenUpper.length) return false;
  const normalized = trimmed.toUpperCase();
  if (trimmed !== normalized) return false;
  if (normalized.length < 2) return false;
  if (!tokenUpper.startsWith(normalized)) return false;
  if (normalized.includes("_")) return true;
  if (normalized === tokenUpper) return true;
  if (/[^A-Z_]/.test(tokenUpper)) return /[^A-Z_]/.test(normalized);
  return tokenUpper === "NO_REPLY" && normalized === "NO";
}
