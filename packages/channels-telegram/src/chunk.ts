// Splitting a reply into Telegram messages whose *formatted* text fits (escaping grows MarkdownV2, tags grow
// HTML). Owns a line packer: the Markdown's code fences are found with `@agent-kernel/markdown`'s
// `scanFenceSpans`; whole lines are packed greedily by their formatted cost, preferring to cut at a blank line
// in the second half of a message; a cut inside a fence closes the fence and reopens it (with its info
// string) in the next message, so code is never broken across a fence boundary and code lines stay whole;
// only a single line longer than a message is cut inside (at whitespace when it can). Every piece is then
// formatted and measured; a piece that still does not fit (the packer's costs are per line, the dialects add
// a little around blocks) is cut again by `@agent-kernel/markdown`'s BlockChunker, smaller, until it fits.
// Does not own the dialects (format.ts).
import { BlockChunker, scanFenceSpans, sliceUtf16Safe } from "@agent-kernel/markdown";
import {
  escapeMarkdownV2Code,
  escapeTelegramHtml,
  formatForTelegram,
  markdownToVisibleText,
  type TelegramParseMode,
} from "./format.ts";

/** Telegram's hard limit on a message's text (after entity parsing; we measure the formatted text, stricter). */
export const TELEGRAM_TEXT_LIMIT = 4096;
/** Telegram's hard limit on a media caption. */
export const TELEGRAM_CAPTION_LIMIT = 1024;

export interface TelegramChunk {
  /** The Markdown this message came from (with synthetic fence lines when a fence was cut): the plain fallback. */
  readonly markdown: string;
  /** `markdown` formatted for the parse mode, at most `limit` characters. */
  readonly formatted: string;
}

type LineKind = "prose" | "open" | "code" | "close";

interface Line {
  readonly text: string;
  readonly kind: LineKind;
  /** For lines in a fence: the fence's opening line, to reopen it after a cut. */
  readonly openLine?: string;
  readonly marker?: string;
}

const CLOSE_FENCE_RE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

function classifyLines(markdown: string): Line[] {
  const text = markdown.replace(/\r\n?/g, "\n");
  const { spans } = scanFenceSpans(text);
  const lines: Line[] = [];
  let offset = 0;
  let spanIndex = 0;
  for (const line of text.split("\n")) {
    const start = offset;
    offset += line.length + 1;
    while (spanIndex < spans.length && (spans[spanIndex]?.end ?? 0) <= start) spanIndex++;
    const span = spans[spanIndex];
    if (span === undefined || start < span.start) {
      lines.push({ text: line, kind: "prose" });
      continue;
    }
    const fence = { openLine: span.openLine, marker: span.marker };
    if (start === span.start) lines.push({ text: line, kind: "open", ...fence });
    else if (start + line.length >= span.end && CLOSE_FENCE_RE.test(line))
      lines.push({ text: line, kind: "close", ...fence });
    else lines.push({ text: line, kind: "code", ...fence });
  }
  return lines;
}

function lineCost(line: Line, parseMode: TelegramParseMode): number {
  if (line.kind === "code") {
    return (
      (parseMode === "MarkdownV2" ? escapeMarkdownV2Code(line.text) : escapeTelegramHtml(line.text)).length +
      1
    );
  }
  if (line.kind === "open" || line.kind === "close")
    return line.text.length + (parseMode === "HTML" ? 40 : 1);
  return formatForTelegram(line.text, parseMode).length + 1;
}

const FENCE_START_RE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Cuts one over-long line at whitespace where it can, else hard (never inside a surrogate pair). Every part
 * after the first starts a line of its own, so no cut may leave a part that starts like a fence line ("~~~",
 * "```" after at most three spaces): that would open a code block (or close the one the line is in) that the
 * line never had.
 */
function splitLongLine(text: string, maxChars: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > maxChars) {
    const cut = cutOf(rest, maxChars);
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  parts.push(rest);
  return parts;
}

function cutOf(rest: string, maxChars: number): number {
  // after the last whitespace in the window's second half whose next part does not start like a fence ...
  const window = rest.slice(0, maxChars);
  for (let at = window.length - 1; at > maxChars / 2; at--) {
    if (/\s/.test(window.charAt(at)) && !FENCE_START_RE.test(rest.slice(at + 1))) return at + 1;
  }
  // ... else hard, moved left off a fence-like start (the line itself does not start one: it would be a fence)
  let cut = sliceUtf16Safe(rest, 0, maxChars).length;
  while (cut > 1 && FENCE_START_RE.test(rest.slice(cut))) cut = sliceUtf16Safe(rest, 0, cut - 1).length;
  return Math.max(1, cut);
}

/** Packs lines into pieces of Markdown whose estimated formatted length is at most `budget`. */
function packLines(markdown: string, budget: number, parseMode: TelegramParseMode): string[] {
  const pieces: string[] = [];
  let current: Line[] = [];
  let cost = 0;
  let inside: Line | undefined; // the fence the current piece is inside, if any
  let contentLines = 0; // lines in the current piece besides a reopened fence line
  // each line is formatted once to learn its cost (flushes re-read costs of the lines they carry)
  const costs = new Map<Line, number>();
  const costOf = (line: Line): number => {
    let cost = costs.get(line);
    if (cost === undefined) {
      cost = lineCost(line, parseMode);
      costs.set(line, cost);
    }
    return cost;
  };
  const closeCost = (): number =>
    inside === undefined ? 0 : (inside.marker?.length ?? 3) + (parseMode === "HTML" ? 14 : 2);

  const flush = (): void => {
    if (current.length === 0) return;
    // prefer a blank line in the second half of the piece (a paragraph break), outside fences
    let carry: Line[] = [];
    if (inside === undefined) {
      let running = 0;
      let cutAt = -1;
      for (const [index, line] of current.entries()) {
        running += costOf(line);
        if (line.kind === "prose" && line.text.trim() === "" && running >= budget / 2) cutAt = index;
      }
      const tail = cutAt === -1 ? [] : current.slice(cutAt + 1);
      if (cutAt > 0 && tail.every((line) => line.kind === "prose")) {
        carry = tail;
        current = current.slice(0, cutAt);
      }
    }
    const text = current.map((line) => line.text);
    if (inside !== undefined) text.push(`${inside.text.match(/^ */)?.[0] ?? ""}${inside.marker ?? "```"}`);
    pieces.push(text.join("\n"));
    current = inside === undefined ? [] : [{ text: inside.openLine ?? inside.text, kind: "open" }];
    cost = current.reduce((sum, line) => sum + costOf(line), 0);
    contentLines = carry.length;
    for (const line of carry) {
      current.push(line);
      cost += costOf(line);
    }
  };

  for (const line of classifyLines(markdown)) {
    const lineBudget =
      budget -
      closeCost() -
      (inside === undefined ? 0 : lineCost({ text: inside.openLine ?? "", kind: "open" }, parseMode));
    const fullCost = costOf(line);
    // an over-long line is cut in proportion to how much formatting grows it (visit() catches the rest)
    const parts =
      fullCost > lineBudget
        ? splitLongLine(
            line.text,
            Math.max(8, Math.floor(((lineBudget - 1) * line.text.length) / fullCost)),
          ).map((text) => ({ ...line, text }))
        : [line];
    for (const part of parts) {
      const partCost = costOf(part);
      if (cost + partCost + closeCost() > budget && contentLines > 0) flush();
      current.push(part);
      contentLines += 1;
      cost += partCost;
      if (part.kind === "open") inside = part;
      else if (part.kind === "close") inside = undefined;
    }
  }
  inside = undefined; // an unclosed fence at the very end stays as the model wrote it
  // a final flush may carry its tail after a paragraph break into a new piece: flush until empty
  while (current.length > 0) flush();
  return pieces;
}

function splitWithBlockChunker(markdown: string, maxChars: number): string[] {
  const chunker = new BlockChunker({ minChars: 1, maxChars, breakPreference: "paragraph" });
  chunker.append(markdown);
  const out: string[] = [];
  chunker.drain(true, (chunk) => out.push(chunk.text));
  return out;
}

/**
 * Cuts Markdown into pieces whose formatted text is at most `limit` characters and whose Markdown is too
 * (so the plain-text fallback fits as well). Pieces with nothing visible are dropped.
 */
export function chunkForTelegram(
  markdown: string,
  limit: number,
  parseMode: TelegramParseMode,
): TelegramChunk[] {
  if (!Number.isInteger(limit) || limit < 64) {
    throw new RangeError(`telegram: the text limit must be an integer ≥ 64 (got ${limit})`);
  }
  const out: TelegramChunk[] = [];
  const visit = (piece: string, maxChars: number): void => {
    if (piece.trim() === "") return;
    const formatted = formatForTelegram(piece, parseMode);
    // at the floor a piece is a few characters plus synthetic fence lines: far below any limit ≥ 64
    if ((formatted.length <= limit && piece.length <= limit) || maxChars <= 8) {
      // Telegram refuses a message with nothing visible ("message text is empty"): an empty quote or fence
      if (markdownToVisibleText(piece).trim() !== "") out.push({ markdown: piece, formatted });
      return;
    }
    // shrink in proportion to how much formatting grew the text, with a margin; always make progress
    const ratio = limit / Math.max(formatted.length, piece.length);
    const smaller = Math.max(8, Math.min(maxChars - 1, Math.floor(piece.length * ratio * 0.9)));
    for (const part of splitWithBlockChunker(piece, smaller)) visit(part, smaller);
  };
  for (const piece of packLines(markdown, limit, parseMode)) visit(piece, limit);
  return out;
}
