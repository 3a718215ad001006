// The strict HTML parser of the fake: turns a `parse_mode: "HTML"` text into plain text and entities the way
// Telegram's server (tdlib's `parse_html`) does — only the documented tags (b strong i em u ins s strike del
// span.tg-spoiler tg-spoiler a code pre blockquote[expandable]), only &lt; &gt; &amp; &quot; and
// numeric character references — and rejects the rest with Telegram's wording ("Unsupported start tag
// \"div\" at byte offset 0", "Can't find end tag corresponding to start tag \"b\""). `<a>` without (or with
// an empty) `href` takes its text as the URL; a URL Telegram refuses drops the link, not the text (links.ts).
// Owns the grammar only.
import { linkEntity } from "./links.ts";
import { EntityParseError, type ParsedText } from "./markdown-v2.ts";
import type { TgEntityType, TgMessageEntity } from "./types.ts";

interface OpenTag {
  name: string;
  resultOffset: number;
  type: TgEntityType | "pre-code";
  url?: string;
  language?: string;
}

const TAG_TYPES: Record<string, TgEntityType> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  "tg-spoiler": "spoiler",
  span: "spoiler",
  a: "text_link",
  code: "code",
  pre: "pre",
  blockquote: "blockquote",
};

const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

function byteOffset(text: string, index: number): number {
  return Buffer.byteLength(text.slice(0, index), "utf8");
}

/** Decodes `&…;` at `index`; undefined when it is not a supported reference (then `&` is kept literally). */
function decodeReference(source: string, index: number): { text: string; end: number } | undefined {
  const semicolon = source.indexOf(";", index);
  if (semicolon === -1 || semicolon - index > 10) return undefined;
  const body = source.slice(index + 1, semicolon);
  const named = NAMED_ENTITIES[body];
  if (named !== undefined) return { text: named, end: semicolon + 1 };
  const numeric = /^#(?:x([0-9a-fA-F]+)|([0-9]+))$/.exec(body);
  if (numeric === null) return undefined;
  const code = numeric[1] === undefined ? Number(numeric[2]) : Number.parseInt(numeric[1], 16);
  if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff) return undefined;
  return { text: String.fromCodePoint(code), end: semicolon + 1 };
}

/**
 * Parses the attributes of a start tag from `index` up to `>` as tdlib does: a name runs to a space, `=`, `>`,
 * `/` or a quote and is compared case-sensitively (`HREF` is not `href`); an unquoted value is a name token
 * (letters, digits, `.`, `-`, lower-cased) that must end at a space or `>` — so `href=https://x` is refused
 * ("Unexpected end of name token"); a quoted value runs to its closing quote with references decoded.
 */
function parseAttributes(
  source: string,
  index: number,
  tagStart: number,
  tagName: string,
): { attributes: Map<string, string>; end: number } {
  const attributes = new Map<string, string>();
  const unclosed = (): EntityParseError =>
    new EntityParseError(`Unclosed start tag "${tagName}" at byte offset ${byteOffset(source, tagStart)}`);
  let i = index;
  for (;;) {
    while (i < source.length && /\s/.test(source.charAt(i))) i++;
    if (i >= source.length) {
      throw new EntityParseError(`Unclosed start tag at byte offset ${byteOffset(source, tagStart)}`);
    }
    if (source[i] === ">") return { attributes, end: i + 1 };
    const nameStart = i;
    while (i < source.length && !/[\s=>/"']/.test(source.charAt(i))) i++;
    const name = source.slice(nameStart, i);
    if (name === "") {
      throw new EntityParseError(
        `Empty attribute name in the tag "${tagName}" at byte offset ${byteOffset(source, tagStart)}`,
      );
    }
    while (i < source.length && /\s/.test(source.charAt(i))) i++;
    if (source[i] !== "=") {
      if (i >= source.length) throw unclosed();
      attributes.set(name, "");
      continue;
    }
    i++;
    while (i < source.length && /\s/.test(source.charAt(i))) i++;
    if (i >= source.length) throw unclosed();
    const quote = source[i];
    if (quote === '"' || quote === "'") {
      const close = source.indexOf(quote, i + 1);
      if (close === -1) {
        throw new EntityParseError(`Unclosed start tag at byte offset ${byteOffset(source, tagStart)}`);
      }
      attributes.set(name, decodeText(source.slice(i + 1, close)));
      i = close + 1;
    } else {
      const valueStart = i;
      while (i < source.length && /[A-Za-z0-9.-]/.test(source.charAt(i))) i++;
      if (i < source.length && !/[\s>]/.test(source.charAt(i))) {
        throw new EntityParseError(
          `Unexpected end of name token at byte offset ${byteOffset(source, valueStart)}`,
        );
      }
      attributes.set(name, source.slice(valueStart, i).toLowerCase());
    }
    if (i >= source.length) {
      throw new EntityParseError(`Unclosed start tag at byte offset ${byteOffset(source, tagStart)}`);
    }
  }
}

function decodeText(raw: string): string {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === "&") {
      const reference = decodeReference(raw, i);
      if (reference !== undefined) {
        out += reference.text;
        i = reference.end - 1;
        continue;
      }
    }
    out += raw.charAt(i);
  }
  return out;
}

/** Parses a Telegram-HTML text; throws `EntityParseError` where Telegram answers "can't parse entities". */
export function parseTelegramHtml(source: string): ParsedText {
  let result = "";
  const entities: TgMessageEntity[] = [];
  const stack: OpenTag[] = [];
  for (let i = 0; i < source.length; i++) {
    const char = source.charAt(i);
    if (char === "&") {
      const reference = decodeReference(source, i);
      if (reference !== undefined) {
        result += reference.text;
        i = reference.end - 1;
        continue;
      }
      result += char;
      continue;
    }
    if (char !== "<") {
      result += char;
      continue;
    }
    const tagStart = i;
    if (source[i + 1] === "/") {
      const close = source.indexOf(">", i);
      const name = (close === -1 ? source.slice(i + 2) : source.slice(i + 2, close)).trim().toLowerCase();
      if (close === -1) {
        throw new EntityParseError(`Unclosed end tag at byte offset ${byteOffset(source, tagStart)}`);
      }
      const open = stack.pop();
      if (open === undefined) {
        throw new EntityParseError(`Unexpected end tag at byte offset ${byteOffset(source, tagStart)}`);
      }
      if (open.name !== name) {
        throw new EntityParseError(
          `Unmatched end tag at byte offset ${byteOffset(source, tagStart)}, expected "</${open.name}>", found "</${name}>"`,
        );
      }
      const length = result.length - open.resultOffset;
      if (length > 0) {
        if (open.type === "pre-code") {
          // <pre><code class="language-x">: the pre takes the language of its code child
          const parent = stack[stack.length - 1];
          if (parent?.type === "pre" && open.language !== undefined) parent.language = open.language;
          else entities.push({ type: "code", offset: open.resultOffset, length });
        } else if (open.type === "text_link") {
          // an invalid URL drops the link, not the text (tdlib's get_checked_link)
          const link = linkEntity(open.resultOffset, length, open.url || result.slice(open.resultOffset));
          if (link !== undefined) entities.push(link);
        } else {
          entities.push({
            type: open.type,
            offset: open.resultOffset,
            length,
            ...(open.language === undefined ? {} : { language: open.language }),
          });
        }
      }
      i = close;
      continue;
    }
    let nameEnd = i + 1;
    while (nameEnd < source.length && /[A-Za-z0-9-]/.test(source.charAt(nameEnd))) nameEnd++;
    const name = source.slice(i + 1, nameEnd).toLowerCase();
    const type = TAG_TYPES[name];
    if (type === undefined) {
      throw new EntityParseError(
        `Unsupported start tag "${name}" at byte offset ${byteOffset(source, tagStart)}`,
      );
    }
    const { attributes, end } = parseAttributes(source, nameEnd, tagStart, name);
    const parent = stack[stack.length - 1];
    if (
      parent?.type === "code" ||
      parent?.type === "pre-code" ||
      (parent?.type === "pre" && name !== "code")
    ) {
      // tdlib drops entities nested in code; the fake is stricter so adapters never rely on it
      throw new EntityParseError(
        `Tag "${name}" can't be nested in "${parent.name}" at byte offset ${byteOffset(source, tagStart)}`,
      );
    }
    const open: OpenTag = { name, resultOffset: result.length, type };
    if (name === "a") {
      // no or an empty href: the link text itself is the URL (checked when the tag closes)
      open.url = attributes.get("href") ?? "";
    } else if (name === "span" && attributes.get("class") !== "tg-spoiler") {
      throw new EntityParseError(
        `Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(source, tagStart)}`,
      );
    } else if (name === "code" && parent?.type === "pre") {
      open.type = "pre-code";
      const language = /^language-(.+)$/.exec(attributes.get("class") ?? "")?.[1];
      if (language !== undefined) open.language = language;
    } else if (name === "blockquote" && attributes.has("expandable")) {
      open.type = "expandable_blockquote";
    }
    stack.push(open);
    i = end - 1;
  }
  const unclosed = stack[stack.length - 1];
  if (unclosed !== undefined) {
    throw new EntityParseError(`Can't find end tag corresponding to start tag "${unclosed.name}"`);
  }
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text: result, entities };
}
