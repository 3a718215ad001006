// Final-text skeleton: the final payload of a long reply without running every whole-text pass over all of it.
// Owns: splitting the raw assistant text, as it streams, into paragraphs (runs of text between blank lines);
// replacing each paragraph that no final-text pass can tell apart from a short stand-in (an "inert"
// paragraph) by a key; and putting the paragraphs back into the text those passes produce from the
// skeleton. Does not own the passes themselves (reasoning-tags.ts, reply-directives.ts): the caller runs them
// on `skeleton` and calls `expand` on the resulting text.
//
// Why this is exact. The final text is stripReasoningTagsFromText → splitMediaFromOutput → reply/audio
// directives → whitespace normalisation → trims. An inert paragraph P is replaced by Q: a key
// (U+0001 id U+0002) for prose, or "```\n" U+0003 id U+0004 "\n```" for one fenced code block (inert
// paragraphs separated by exactly one blank line share the key of the first: a blank line between them is
// touched by no pass). Every pass treats P and Q alike, so the passes on the skeleton give the final text
// with Q where P would be:
// - P starts at a line start after a blank line, is followed by a blank line, and begins and ends with a
//   non-whitespace character; so do the stand-ins: trims and whitespace rules at the edges see the same.
// - prose P has no "<", "`", "~", "]", "[[", CR, tab, other control or non-ASCII
//   whitespace, "  ", a line starting with a blank or ending in one, nor a MEDIA: token: no tag, fence,
//   code span, indented code, directive, MEDIA: line or whitespace run starts, ends or changes inside it.
//   A code P is exactly one fenced block opened outside any fence (the fence state is followed over the
//   literal text), with no "<", "[[", "]]", CR, MEDIA: token nor "]" on its fence line: code is left alone
//   by every pass and the stand-in is one code region of the same kind at the same place.
// - nothing that starts before P can reach into it: no reasoning-tag candidate is still open (scanned over
//   the literal text exactly as scanReasoningTags does), no "<" is unclosed by ">" (final-tag candidates),
//   the last non-whitespace character before P is not "[" and the first after it is not "]" (directive
//   patterns cross whitespace only between "[[" and "]]").
// - a text with a <final> tag anywhere is not handled (stripping it can join text around P into a tag):
//   `skeletonText` returns undefined and the caller runs the passes on the whole text, as it does when the
//   text contains the key characters (U+0001..U+0004), a tag candidate stays open for more than MAX_OPEN_TAG
//   characters or a paragraph grows past MAX_OPEN_PARAGRAPH (both would be read again and again).
// The property test (final-text-skeleton.property.test.ts) checks the result against the whole-text passes.
import { fenceMarkerAfter, isOneFencedBlock } from "./markdown-code.ts";
import { isMediaWordBefore } from "./media-output.ts";
import { parseReasoningTagAt } from "./reasoning-tags.ts";
import { hasSpaceAfterNewline, hasSpaceBeforeNewline, hasSpaceRun } from "./text-scan.ts";

const KEY_OPEN = "\u0001";
const KEY_CLOSE = "\u0002";
const CODE_KEY_OPEN = "\u0003";
const CODE_KEY_CLOSE = "\u0004";
// biome-ignore lint/suspicious/noControlCharactersInRegex: the key characters are control characters on purpose
const KEY_CHARACTER_RE = /[\x01-\x04]/;
const CODE_KEY_PREFIX = "```\n";
const CODE_KEY_SUFFIX = "\n```";
/** A reasoning-tag candidate open longer than this turns the skeleton off (rescanning it would grow). */
const MAX_OPEN_TAG = 64 * 1024;
/** Raw text without a blank line longer than this turns the skeleton off (see #placeIncoming). */
const MAX_OPEN_PARAGRAPH = 256 * 1024;
/** expandedHead holds this many characters of the first paragraph put back (the silent-token test reads ≤ 10). */
const INERT_HEAD = 16;
/** Streamed text is placed in batches of about this many characters. */
const PLACE_BATCH = 256 * 1024;
/**
 * What no inert prose paragraph has (see the header): one of these characters, "[[", two blanks, a blank at
 * a line's start or end, or a MEDIA: token (`med[iı]a:`, any case). As one regex with alternatives this was
 * tried at every character; the character class alone is a plain scan and the rest are indexOf searches
 * (`hasProseBreaker`).
 */
const PROSE_BREAKER_CHAR_RE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the key characters are control characters on purpose
  /[<`~\]\r\t\v\f\0\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\x01-\x04]/;
/** The same for the body of a fenced block (its first line is checked for "]" separately): see `hasCodeBreaker`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the key characters are control characters on purpose
const CODE_BREAKER_CHAR_RE = /[<\r\0\x01-\x04]/;

/** `/[…]|\[\[| {2}|\n | \n|med[iı]a:/i.test(paragraph)` with PROSE_BREAKER_CHAR_RE as the class. */
function hasProseBreaker(paragraph: string): boolean {
  return (
    PROSE_BREAKER_CHAR_RE.test(paragraph) ||
    paragraph.includes("[[") ||
    hasSpaceRun(paragraph, 2) ||
    hasSpaceAfterNewline(paragraph) ||
    hasSpaceBeforeNewline(paragraph) ||
    hasMediaColon(paragraph)
  );
}

/** `/[<\r\0\x01-\x04]|\[\[|\]\]|med[iı]a:/i.test(paragraph)`. */
function hasCodeBreaker(paragraph: string): boolean {
  return (
    CODE_BREAKER_CHAR_RE.test(paragraph) ||
    paragraph.includes("[[") ||
    paragraph.includes("]]") ||
    hasMediaColon(paragraph)
  );
}

/** `/med[iı]a:/i.test(text)`: looks only before each colon (colons are rare). */
function hasMediaColon(text: string): boolean {
  for (let colon = text.indexOf(":", 5); colon !== -1; colon = text.indexOf(":", colon + 1))
    if (isMediaWordBefore(text, colon)) return true;
  return false;
}
const FINAL_TAG_RE = /<\s*\/?\s*final/i;
const NEWLINE = 10;
const LEFT_BRACKET = 91;
const RIGHT_BRACKET = 93;

function isWhitespaceCode(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && /\s/.test(text.charAt(index));
}

export class FinalTextSkeleton {
  readonly #parts: string[] = [];
  readonly #inert: string[] = [];
  /** The start of each #inert entry (its first paragraph's first INERT_HEAD characters, see expandedHead). */
  readonly #inertHead: string[] = [];
  /** Raw text not yet placed: from the start of the paragraph being collected. */
  #tail = "";
  /** Where in #tail to look for the next blank line. */
  #searchFrom = 0;
  #incoming = "";
  /** #parts.length right after the last key was pushed (-1: none). */
  #keyEnd = -1;
  #off = false;
  /** Literal text from an unfinished reasoning-tag candidate's "<" (scanned again with more text). */
  #openTag = "";
  /** An "<" in the literal text is not yet followed by ">". */
  #angleOpen = false;
  #fence: string | undefined;
  /** The last non-whitespace character code of the raw text placed so far (-1: none). */
  #lastNonWhitespace = -1;

  readonly #placeBatch: number;

  /** `placeBatch`: characters collected before paragraphs are placed (tests use small ones). */
  constructor(placeBatch = PLACE_BATCH) {
    this.#placeBatch = placeBatch;
  }

  /** Appends raw text (any split). */
  push(text: string): void {
    if (this.#off) return;
    // collected and placed in large batches: the placing does not depend on where the text was split, and a
    // push per streamed line would pay per call and flatten the growing rope each time
    this.#incoming += text;
    if (this.#incoming.length >= this.#placeBatch) this.#placeIncoming();
  }

  #placeIncoming(): void {
    this.#tail += this.#incoming;
    this.#incoming = "";
    this.#placeParagraphs();
    // a paragraph that does not end is read again with every batch: past this size the caller's whole-text
    // passes are cheaper
    if (this.#tail.length > MAX_OPEN_PARAGRAPH) this.#turnOff();
  }

  /**
   * The skeleton of everything pushed, or undefined when the caller must use the whole text. Call once, at
   * the end; `expand` then turns a text the final passes made from the skeleton into the real one.
   */
  skeletonText(): string | undefined {
    if (!this.#off) this.#placeIncoming();
    if (this.#off || KEY_CHARACTER_RE.test(this.#tail)) return undefined;
    this.#parts.push(this.#tail);
    this.#tail = "";
    const skeleton = this.#parts.join("");
    return FINAL_TAG_RE.test(skeleton) ? undefined : skeleton;
  }

  expand(text: string): string {
    if (this.#inert.length === 0) return text;
    // one pass over the (short) text (a replace callback builds the long result piece by piece), each kind of
    // key looked up again only once passed (searching for both at every key read the rest of the text again
    // at each key when a reply has no code block: 7-8 % of the CPU time of streaming a 5 MB such reply), and
    // the pieces concatenated as a rope, not joined: V8 copies a rope into one string only when something
    // reads its characters, which the common consumer of a long streamed reply's final text (a channel that
    // streamed its blocks) never does (parseReplyDirectives settles the silent-token test on expandedHead).
    let expanded = "";
    let copied = 0;
    let searchFrom = 0;
    let prose = -2;
    let code = -2;
    for (;;) {
      if (prose !== -1 && prose < searchFrom) prose = text.indexOf(KEY_OPEN, searchFrom);
      if (code !== -1 && code < searchFrom) code = text.indexOf(CODE_KEY_OPEN, searchFrom);
      if (prose === -1 && code === -1) break;
      const isCode = code !== -1 && (prose === -1 || code < prose);
      const open = isCode ? code : prose;
      const close = text.indexOf(isCode ? CODE_KEY_CLOSE : KEY_CLOSE, open + 1);
      if (close === -1) break;
      const paragraph = this.#inert[Number.parseInt(text.slice(open + 1, close), 36)];
      // a code key stands with its fence lines around it
      const start = isCode ? open - CODE_KEY_PREFIX.length : open;
      const end = isCode ? close + 1 + CODE_KEY_SUFFIX.length : close + 1;
      if (
        paragraph === undefined ||
        (isCode && (!text.startsWith(CODE_KEY_PREFIX, start) || !text.startsWith(CODE_KEY_SUFFIX, close + 1)))
      ) {
        searchFrom = close + 1;
        continue;
      }
      expanded += text.slice(copied, start);
      expanded += paragraph;
      copied = end;
      searchFrom = end;
    }
    return copied === 0 ? text : expanded + text.slice(copied);
  }

  /**
   * A prefix of `expand(text)`, made without building it: all of it when `text` has no key to expand, else up
   * to the first INERT_HEAD characters of the first paragraph put back (which starts with a non-blank
   * character). Reading the first characters of the expanded text itself would copy its rope into one string.
   */
  expandedHead(text: string): string {
    if (this.#inert.length === 0) return text;
    let searchFrom = 0;
    for (;;) {
      const prose = text.indexOf(KEY_OPEN, searchFrom);
      const code = text.indexOf(CODE_KEY_OPEN, searchFrom);
      if (prose === -1 && code === -1) return text;
      // the same key test as expand's
      const isCode = code !== -1 && (prose === -1 || code < prose);
      const open = isCode ? code : prose;
      const close = text.indexOf(isCode ? CODE_KEY_CLOSE : KEY_CLOSE, open + 1);
      if (close === -1) return text;
      const id = Number.parseInt(text.slice(open + 1, close), 36);
      const start = isCode ? open - CODE_KEY_PREFIX.length : open;
      if (
        this.#inert[id] === undefined ||
        (isCode && (!text.startsWith(CODE_KEY_PREFIX, start) || !text.startsWith(CODE_KEY_SUFFIX, close + 1)))
      ) {
        searchFrom = close + 1;
        continue;
      }
      return text.slice(0, start) + (this.#inertHead[id] ?? "");
    }
  }

  #turnOff(): void {
    this.#off = true;
    this.#parts.length = 0;
    this.#inert.length = 0;
    this.#inertHead.length = 0;
    this.#tail = "";
    this.#incoming = "";
  }

  /** Places each paragraph of #tail that is followed by a blank line and then a non-whitespace character. */
  #placeParagraphs(): void {
    const tail = this.#tail;
    const length = tail.length;
    let at = 0;
    let search = this.#searchFrom;
    for (;;) {
      const blank = tail.indexOf("\n\n", search);
      if (blank === -1) {
        search = Math.max(at, length - 1);
        break;
      }
      let next = blank + 2;
      while (next < length && tail.charCodeAt(next) === NEWLINE) next++;
      let probe = next;
      while (probe < length && isWhitespaceCode(tail, probe)) probe++;
      if (probe === length) {
        search = blank;
        break;
      }
      if (blank > at) this.#place(tail.slice(at, blank), tail.charCodeAt(probe));
      const separator = tail.slice(blank, next);
      this.#parts.push(separator);
      if (this.#openTag !== "") this.#openTag += separator;
      at = next;
      search = next;
      if (this.#off) return;
    }
    this.#tail = at === 0 ? tail : tail.slice(at);
    this.#searchFrom = search - at;
  }

  #place(paragraph: string, nextCode: number): void {
    const last = paragraph.length - 1;
    const inert =
      this.#openTag === "" &&
      !this.#angleOpen &&
      this.#lastNonWhitespace !== LEFT_BRACKET &&
      nextCode !== RIGHT_BRACKET &&
      last >= 1 &&
      !isWhitespaceCode(paragraph, 0) &&
      !isWhitespaceCode(paragraph, last);
    const code = inert && this.#inertCodeBlock(paragraph);
    if (code || (inert && this.#inertProse(paragraph))) {
      this.#lastNonWhitespace = paragraph.charCodeAt(last);
      // inert paragraphs separated by exactly one blank line share one key: nothing can tell the group
      // from one paragraph of the kind of its first (a blank line is not touched by any pass)
      const groupEnd = this.#keyEnd;
      if (groupEnd !== -1 && this.#parts.length === groupEnd + 1 && this.#parts[groupEnd] === "\n\n") {
        this.#parts.pop();
        this.#inert[this.#inert.length - 1] += `\n\n${paragraph}`;
        return;
      }
      const id = this.#inert.length.toString(36);
      this.#inert.push(paragraph);
      this.#inertHead.push(paragraph.slice(0, INERT_HEAD));
      this.#parts.push(
        code ? `\`\`\`\n${CODE_KEY_OPEN}${id}${CODE_KEY_CLOSE}\n\`\`\`` : `${KEY_OPEN}${id}${KEY_CLOSE}`,
      );
      this.#keyEnd = this.#parts.length;
      return;
    }
    if (KEY_CHARACTER_RE.test(paragraph)) {
      this.#turnOff();
      return;
    }
    this.#parts.push(paragraph);
    this.#followLiteral(paragraph);
  }

  #inertProse(paragraph: string): boolean {
    if (hasProseBreaker(paragraph)) return false;
    return true;
  }

  #inertCodeBlock(paragraph: string): boolean {
    const first = paragraph.charCodeAt(0);
    if ((first !== 96 && first !== 126) || this.#fence !== undefined) return false;
    const firstLineEnd = paragraph.indexOf("\n");
    if (firstLineEnd === -1 || paragraph.lastIndexOf("]", firstLineEnd) !== -1) return false;
    return !hasCodeBreaker(paragraph) && isOneFencedBlock(paragraph);
  }

  /** Follows what literal text leaves open: a reasoning-tag candidate, an "<", a fence. */
  #followLiteral(literal: string): void {
    const lastLess = literal.lastIndexOf("<");
    if (lastLess !== -1 || this.#openTag !== "") this.#scanTags(literal);
    if (lastLess !== -1) this.#angleOpen = lastLess > literal.lastIndexOf(">");
    else if (this.#angleOpen && literal.includes(">")) this.#angleOpen = false;
    this.#fence = fenceMarkerAfter(literal, this.#fence);
    for (let index = literal.length - 1; index >= 0; index--) {
      if (!isWhitespaceCode(literal, index)) {
        this.#lastNonWhitespace = literal.charCodeAt(index);
        break;
      }
    }
  }

  /** scanReasoningTags' walk, stopping at a candidate more text could still complete. */
  #scanTags(literal: string): void {
    const text = this.#openTag + literal;
    this.#openTag = "";
    let cursor = 0;
    while (cursor < text.length) {
      const start = text.indexOf("<", cursor);
      if (start === -1) return;
      const parsed = parseReasoningTagAt(text, start, false);
      if (parsed.kind === "pending") {
        this.#openTag = text.slice(start);
        if (this.#openTag.length > MAX_OPEN_TAG) this.#turnOff();
        return;
      }
      cursor = parsed.kind === "tag" ? parsed.tag.index + parsed.tag.text.length : parsed.next;
    }
  }
}
