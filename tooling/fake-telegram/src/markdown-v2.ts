// The strict MarkdownV2 parser of the fake: turns a `parse_mode: "MarkdownV2"` text into plain text and
// entities exactly as Telegram's server (tdlib's `parse_markdown_v2`) does, and rejects what Telegram rejects
// with Telegram's own wording ("Character '.' is reserved and must be escaped with the preceding '\'",
// "Can't find end of Bold entity at byte offset 0"). Owns the grammar only; the error envelope ("Bad Request:
// can't parse entities: …") is formatted-text.ts's; which link URLs Telegram keeps is links.ts's.
// Custom emoji (`![x](tg://emoji?id=…)`) and expandable blockquotes (`**>`) are not supported: the fake
// rejects them as reserved characters.
import { linkEntity } from "./links.ts";
import type { TgEntityType, TgMessageEntity } from "./types.ts";

export interface ParsedText {
  readonly text: string;
  readonly entities: TgMessageEntity[];
}

/** A text Telegram refuses to parse; `message` is the part after "can't parse entities: ". */
export class EntityParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EntityParseError";
  }
}

type OpenKind = "Bold" | "Italic" | "Underline" | "Strikethrough" | "Spoiler" | "TextUrl" | "Code" | "Pre";

interface OpenEntity {
  kind: OpenKind | "BlockQuote";
  /** Index in the source text (for the byte offset of errors). */
  sourceIndex: number;
  /** Offset in the plain result (UTF-16). */
  resultOffset: number;
  language?: string;
}

const RESERVED = "_*[]()~`>#+-=|{}.!";

const ENTITY_TYPE: Record<Exclude<OpenKind, "TextUrl" | "Pre">, TgEntityType> = {
  Bold: "bold",
  Italic: "italic",
  Underline: "underline",
  Strikethrough: "strikethrough",
  Spoiler: "spoiler",
  Code: "code",
};

function byteOffset(text: string, index: number): number {
  return Buffer.byteLength(text.slice(0, index), "utf8");
}

function reservedError(char: string): EntityParseError {
  return new EntityParseError(`Character '${char}' is reserved and must be escaped with the preceding '\\'`);
}

function isEscapable(char: string | undefined): boolean {
  if (char === undefined) return false;
  const code = char.charCodeAt(0);
  return code > 0 && code <= 126;
}

/** Parses a MarkdownV2 text; throws `EntityParseError` where Telegram answers "can't parse entities". */
export function parseMarkdownV2(source: string): ParsedText {
  let result = "";
  const entities: TgMessageEntity[] = [];
  const stack: OpenEntity[] = [];
  const top = (): OpenEntity | undefined => stack[stack.length - 1];
  const push = (entity: TgMessageEntity): void => {
    if (entity.length > 0) entities.push(entity);
  };

  const closeBlockQuoteIfEnded = (index: number): void => {
    // called at a newline: a blockquote ends when the next line does not start with '>'
    const quote = stack[0];
    if (quote?.kind !== "BlockQuote" || source[index + 1] === ">") return;
    const inner = stack[stack.length - 1];
    if (inner !== undefined && inner.kind !== "BlockQuote") {
      throw new EntityParseError(
        `Can't find end of ${inner.kind} entity at byte offset ${byteOffset(source, inner.sourceIndex)}`,
      );
    }
    push({ type: "blockquote", offset: quote.resultOffset, length: result.length - quote.resultOffset });
    stack.pop();
  };

  for (let i = 0; i < source.length; i++) {
    const char = source.charAt(i);
    if (char === "\\" && isEscapable(source[i + 1])) {
      i++;
      result += source.charAt(i);
      continue;
    }
    const current = top();
    const inCode = current?.kind === "Code" || current?.kind === "Pre";
    if (char === "\n") {
      result += char;
      if (!inCode) closeBlockQuoteIfEnded(i);
      continue;
    }
    if (!(inCode ? "`" : RESERVED).includes(char)) {
      result += char;
      continue;
    }
    const atLineStart = i === 0 || source[i - 1] === "\n";
    if (char === ">" && atLineStart && !inCode) {
      const quote = stack[0];
      if (quote?.kind === "BlockQuote") continue; // a continuation line of the open quote
      if (stack.length > 0) throw reservedError(char);
      stack.push({ kind: "BlockQuote", sourceIndex: i, resultOffset: result.length });
      continue;
    }

    const next = source[i + 1];
    let closes = false;
    switch (current?.kind) {
      case "Bold":
        closes = char === "*";
        break;
      case "Italic":
        closes = char === "_" && next !== "_";
        break;
      case "Underline":
        closes = char === "_" && next === "_";
        break;
      case "Strikethrough":
        closes = char === "~";
        break;
      case "Spoiler":
        closes = char === "|" && next === "|";
        break;
      case "TextUrl":
        closes = char === "]";
        break;
      case "Code":
        closes = char === "`";
        break;
      case "Pre":
        closes = char === "`" && next === "`" && source[i + 2] === "`";
        break;
      default:
        closes = false;
    }

    if (closes && current !== undefined) {
      stack.pop();
      const offset = current.resultOffset;
      const length = result.length - offset;
      switch (current.kind) {
        case "Underline":
        case "Spoiler":
          i++;
          push({ type: ENTITY_TYPE[current.kind], offset, length });
          break;
        case "Pre":
          i += 2;
          push({
            type: "pre",
            offset,
            length,
            ...(current.language === undefined ? {} : { language: current.language }),
          });
          break;
        case "TextUrl": {
          let url = "";
          if (source[i + 1] !== "(") {
            url = result.slice(offset);
          } else {
            i += 2;
            const urlStart = i;
            while (i < source.length && source[i] !== ")") {
              if (source[i] === "\\" && isEscapable(source[i + 1])) {
                url += source[i + 1];
                i += 2;
                continue;
              }
              url += source[i];
              i++;
            }
            if (source[i] !== ")") {
              throw new EntityParseError(
                `Can't find end of a URL at byte offset ${byteOffset(source, urlStart)}`,
              );
            }
          }
          // an invalid URL drops the link, not the text (tdlib's get_checked_link); tg://user?id= mentions
          const link = length > 0 ? linkEntity(offset, length, url) : undefined;
          if (link !== undefined) push(link);
          break;
        }
        case "BlockQuote":
          break;
        default:
          push({ type: ENTITY_TYPE[current.kind], offset, length });
      }
      continue;
    }

    // the start of an entity
    const opened: OpenEntity = { kind: "Bold", sourceIndex: i, resultOffset: result.length };
    switch (char) {
      case "_":
        if (next === "_") {
          opened.kind = "Underline";
          i++;
        } else opened.kind = "Italic";
        break;
      case "*":
        opened.kind = "Bold";
        break;
      case "~":
        opened.kind = "Strikethrough";
        break;
      case "|":
        if (next !== "|") throw reservedError(char);
        opened.kind = "Spoiler";
        i++;
        break;
      case "[":
        opened.kind = "TextUrl";
        break;
      case "`":
        if (next === "`" && source[i + 2] === "`") {
          opened.kind = "Pre";
          i += 3;
          let languageEnd = i;
          while (languageEnd < source.length && !/[\s`]/.test(source.charAt(languageEnd))) languageEnd++;
          if (languageEnd !== i && languageEnd < source.length && source[languageEnd] !== "`") {
            opened.language = source.slice(i, languageEnd);
            i = languageEnd;
          }
          // one newline right after the opening fence is not part of the text
          if (source[i] === "\n" || source[i] === "\r") {
            const pair = source[i + 1];
            i += (pair === "\n" || pair === "\r") && pair !== source[i] ? 2 : 1;
          }
          i--;
        } else opened.kind = "Code";
        break;
      default:
        throw reservedError(char);
    }
    if (stack.some((entity) => entity.kind === opened.kind)) {
      // Telegram forbids an entity inside one of the same type; tdlib reports the outer one as unclosed
      const outer = stack.find((entity) => entity.kind === opened.kind);
      throw new EntityParseError(
        `Can't find end of ${opened.kind} entity at byte offset ${byteOffset(source, outer?.sourceIndex ?? i)}`,
      );
    }
    stack.push(opened);
  }

  const quote = stack[0];
  if (quote?.kind === "BlockQuote" && stack.length === 1) {
    push({ type: "blockquote", offset: quote.resultOffset, length: result.length - quote.resultOffset });
    stack.pop();
  }
  const unclosed = top();
  if (unclosed !== undefined) {
    throw new EntityParseError(
      `Can't find end of ${unclosed.kind} entity at byte offset ${byteOffset(source, unclosed.sourceIndex)}`,
    );
  }
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text: result, entities };
}
