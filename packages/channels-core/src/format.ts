// Formatting the kernel's Markdown for each channel dialect. Owns: a small Markdown reader (fenced code
// blocks, inline code, bold, italic, strikethrough, links, headings) and renderers for Telegram MarkdownV2
// (escaping per the Bot API: the 18 special characters and `\` outside code; only `` ` `` and `\` inside
// code; `)` and `\` inside link URLs), Telegram HTML (`&<>` escaped, `"` too in attributes), Slack mrkdwn
// (`*b*`, `_i_`, `~s~`, `<url|text>`, `&<>` escaped), plain text and Markdown as is. Output is always valid
// for the dialect whatever the input: what the reader does not recognise is escaped literal text.
// `formatAndSplit` formats before measuring, so the limit applies to what the channel receives. Does not own:
// where to cut (chunking.ts) or sending (adapters).

import { scanFenceSpans } from "@agent-kernel/markdown";
import { type ChunkMode, splitTextChunks } from "./chunking.ts";
import type { ChannelCapabilities } from "./contract.ts";

/** The Markdown dialect an adapter formats into (Telegram MarkdownV2 or HTML, Slack mrkdwn, Markdown, plain). */
export type Dialect = ChannelCapabilities["dialect"];

// ---------------------------------------------------------------------------
// The reader: Markdown → a small tree.

/** A node inside one line of parsed Markdown: text, code, emphasis or a link. */
export type InlineNode =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "code"; readonly text: string }
  | { readonly type: "bold" | "italic" | "strike"; readonly children: readonly InlineNode[] }
  | { readonly type: "link"; readonly url: string; readonly children: readonly InlineNode[] };

/** A block of parsed Markdown: one source line of inline nodes, or a fenced code block. */
export type BlockNode =
  | { readonly type: "line"; readonly children: readonly InlineNode[] }
  | { readonly type: "pre"; readonly lang: string; readonly code: string };

/** Blocks joined by newlines: each `line` is one source line; `pre` is a fenced code block. */
export function parseMarkdown(markdown: string): BlockNode[] {
  const blocks: BlockNode[] = [];
  const { spans } = scanFenceSpans(markdown);
  let cursor = 0;
  const pushLines = (text: string) => {
    for (const line of text.split("\n")) blocks.push({ type: "line", children: parseLine(line) });
  };
  for (const span of spans) {
    // the text before the fence, without the newline that ends it
    if (span.start > cursor) pushLines(markdown.slice(cursor, span.start - 1));
    const body = markdown.slice(span.start, span.end);
    const firstNewline = body.indexOf("\n");
    const inner = firstNewline === -1 ? "" : body.slice(firstNewline + 1);
    const closed = span.end < markdown.length || isCloseLine(inner, span.marker);
    const code = closed ? inner.replace(/\n?[ \t]*[`~]{3,}[ \t]*\r?$/, "") : inner;
    const info = span.openLine.trim().slice(span.marker.length).trim();
    blocks.push({
      type: "pre",
      lang: /^[A-Za-z0-9_+-]{1,32}$/.test(info.split(/\s/)[0] ?? "") ? (info.split(/\s/)[0] ?? "") : "",
      code,
    });
    cursor = span.end + 1;
  }
  if (cursor <= markdown.length && (cursor < markdown.length || spans.length === 0))
    pushLines(markdown.slice(cursor));
  return blocks;
}

function isCloseLine(inner: string, marker: string): boolean {
  const lastLine = inner.slice(inner.lastIndexOf("\n") + 1).trim();
  return lastLine.length >= marker.length && new RegExp(`^\\${marker[0]}{${marker.length},}$`).test(lastLine);
}

const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;

function parseLine(line: string): InlineNode[] {
  const heading = HEADING.exec(line);
  if (heading !== null) {
    const children = parseInline(heading[1] ?? "", 0);
    return children.length === 0 ? [] : [{ type: "bold", children }];
  }
  return parseInline(line, 0);
}

const MAX_DEPTH = 8;
const WORD = /[\p{L}\p{N}]/u;

function isWord(char: string | undefined): boolean {
  return char !== undefined && WORD.test(char);
}

function isSpace(char: string | undefined): boolean {
  return char === undefined || /\s/.test(char);
}

/** Inline Markdown of one line. Unmatched delimiters stay literal text. */
export function parseInline(text: string, depth: number): InlineNode[] {
  const nodes: InlineNode[] = [];
  let literal = "";
  const flush = () => {
    if (literal !== "") nodes.push({ type: "text", text: literal });
    literal = "";
  };
  let i = 0;
  while (i < text.length) {
    const char = text[i] ?? "";
    if (char === "\\" && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1] ?? "")) {
      literal += text[i + 1];
      i += 2;
      continue;
    }
    if (char === "`") {
      let run = 1;
      while (text[i + run] === "`") run++;
      const close = findBacktickClose(text, i + run, run);
      if (close !== -1) {
        flush();
        let code = text.slice(i + run, close);
        if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ") && code.trim() !== "")
          code = code.slice(1, -1);
        nodes.push({ type: "code", text: code });
        i = close + run;
        continue;
      }
      literal += "`".repeat(run);
      i += run;
      continue;
    }
    if (char === "[" && depth < MAX_DEPTH) {
      const link = matchLink(text, i);
      if (link !== undefined) {
        flush();
        nodes.push({ type: "link", url: link.url, children: parseInline(link.label, MAX_DEPTH) });
        i = link.end;
        continue;
      }
    }
    if (char === "<") {
      const auto = /^<((?:https?|mailto):[^\s<>]+)>/.exec(text.slice(i));
      if (auto?.[1] !== undefined) {
        flush();
        nodes.push({ type: "link", url: auto[1], children: [{ type: "text", text: auto[1] }] });
        i += auto[0].length;
        continue;
      }
    }
    if ((char === "*" || char === "_" || char === "~") && depth < MAX_DEPTH) {
      const span = matchEmphasis(text, i);
      if (span !== undefined) {
        flush();
        nodes.push({ type: span.type, children: parseInline(span.inner, depth + 1) });
        i = span.end;
        continue;
      }
    }
    literal += char;
    i++;
  }
  flush();
  return nodes;
}

function findBacktickClose(text: string, from: number, run: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] !== "`") continue;
    let length = 1;
    while (text[i + length] === "`") length++;
    if (length === run) return i;
    i += length - 1;
  }
  return -1;
}

function matchLink(text: string, at: number): { label: string; url: string; end: number } | undefined {
  // one level of balanced parentheses in the URL: https://en.wikipedia.org/wiki/Foo_(bar)
  const match = /^\[([^\]\n]+)\]\(\s*((?:[^\s()<>]|\([^\s()<>]*\))+)\s*\)/.exec(text.slice(at));
  if (match?.[1] === undefined || match[2] === undefined) return undefined;
  return { label: match[1], url: match[2], end: at + match[0].length };
}

/**
 * `**x**`/`__x__` bold, `*x*`/`_x_` italic, `~~x~~` strike. An opener is followed by a non-space, a closer
 * preceded by one; `_` never opens or closes inside a word (snake_case stays text).
 */
function matchEmphasis(
  text: string,
  at: number,
): { type: "bold" | "italic" | "strike"; inner: string; end: number } | undefined {
  const char = text[at] ?? "";
  const double = text[at + 1] === char;
  if (char === "~" && !double) return undefined;
  const delimiter = double ? char + char : char;
  const type = char === "~" ? "strike" : double ? "bold" : "italic";
  const innerStart = at + delimiter.length;
  if (isSpace(text[innerStart]) || text[innerStart] === char) return undefined;
  if (char === "_" && isWord(text[at - 1])) return undefined;
  for (
    let close = text.indexOf(delimiter, innerStart + 1);
    close !== -1;
    close = text.indexOf(delimiter, close + 1)
  ) {
    if (isSpace(text[close - 1])) continue;
    const after = text[close + delimiter.length];
    if (after === char) continue;
    if (char === "_" && isWord(after)) continue;
    const inner = text.slice(innerStart, close);
    if (inner.includes("`") && !balancedBackticks(inner)) continue;
    return { type, inner, end: close + delimiter.length };
  }
  return undefined;
}

function balancedBackticks(text: string): boolean {
  return (text.match(/`/g)?.length ?? 0) % 2 === 0;
}

// ---------------------------------------------------------------------------
// Renderers.

/** Only these schemes become links; anything else is shown as text (channels reject odd URLs). */
function isLinkable(url: string): boolean {
  return /^(?:https?:\/\/|mailto:|tg:\/\/)[^\s]+$/i.test(url);
}

function plainOf(nodes: readonly InlineNode[]): string {
  return nodes
    .map((node) => (node.type === "text" || node.type === "code" ? node.text : plainOf(node.children)))
    .join("");
}

/** Adjacent spans of the same style merge (Telegram reads `_a__b_` as underline). */
function mergeAdjacent(nodes: readonly InlineNode[]): InlineNode[] {
  const out: InlineNode[] = [];
  for (const node of nodes) {
    // an empty span renders nothing and would make its neighbours adjacent
    if (node.type !== "text" && node.type !== "code" && plainOf(node.children) === "") continue;
    if (node.type === "text" && node.text === "") continue;
    const last = out.at(-1);
    if (
      last !== undefined &&
      (node.type === "bold" || node.type === "italic" || node.type === "strike") &&
      last.type === node.type
    ) {
      out[out.length - 1] = { type: node.type, children: [...last.children, ...node.children] };
    } else if (last?.type === "text" && node.type === "text") {
      out[out.length - 1] = { type: "text", text: last.text + node.text };
    } else out.push(node);
  }
  return out;
}

type StyleSet = ReadonlySet<"bold" | "italic" | "strike" | "link">;

interface InlineRenderer {
  text(text: string): string;
  code(text: string, inLink: boolean): string;
  wrap(type: "bold" | "italic" | "strike", inner: string): string;
  link(url: string, inner: string, label: string): string;
  /** A link that is not linkable, or a link inside a link. */
  unlinked(url: string, inner: string, label: string): string;
}

function renderInline(nodes: readonly InlineNode[], r: InlineRenderer, active: StyleSet = new Set()): string {
  let out = "";
  for (const node of mergeAdjacent(nodes)) {
    switch (node.type) {
      case "text":
        out += r.text(node.text);
        break;
      case "code":
        out += r.code(node.text, active.has("link"));
        break;
      case "link": {
        const label = plainOf(node.children);
        if (active.has("link") || !isLinkable(node.url)) {
          out += r.unlinked(node.url, renderInline(node.children, r, active), label);
        } else out += r.link(node.url, renderInline(node.children, r, new Set([...active, "link"])), label);
        break;
      }
      default: {
        const inner = renderInline(node.children, r, new Set([...active, node.type]));
        // the same style nested in itself renders once; an empty span renders nothing
        out += active.has(node.type) || inner === "" ? inner : r.wrap(node.type, inner);
      }
    }
  }
  return out;
}

function renderBlocks(
  blocks: readonly BlockNode[],
  inline: (nodes: readonly InlineNode[]) => string,
  pre: (lang: string, code: string) => string,
): string {
  return blocks
    .map((block) => (block.type === "pre" ? pre(block.lang, block.code) : inline(block.children)))
    .join("\n");
}

const MARKDOWN_V2_SPECIAL = /[_*[\]()~`>#+\-=|{}.!\\]/g;

/** Escapes text outside entities for MarkdownV2: the 18 special characters and `\`. */
export function escapeMarkdownV2(text: string): string {
  return text.replace(MARKDOWN_V2_SPECIAL, "\\$&");
}

/** Escapes the inside of `code`/`pre` for MarkdownV2: only `` ` `` and `\`. */
export function escapeMarkdownV2Code(text: string): string {
  return text.replace(/[`\\]/g, "\\$&");
}

/** Escapes a link URL for MarkdownV2: only `)` and `\`. */
export function escapeMarkdownV2Url(url: string): string {
  return url.replace(/[)\\]/g, "\\$&");
}

const telegramMarkdownV2: InlineRenderer = {
  text: escapeMarkdownV2,
  code: (text, inLink) => (inLink ? escapeMarkdownV2(text) : `\`${escapeMarkdownV2Code(text)}\``),
  wrap: (type, inner) => {
    const delimiter = type === "bold" ? "*" : type === "italic" ? "_" : "~";
    return `${delimiter}${inner}${delimiter}`;
  },
  link: (url, inner) => `[${inner}](${escapeMarkdownV2Url(url)})`,
  unlinked: (url, inner, label) => (label === url ? inner : `${inner} \\(${escapeMarkdownV2(url)}\\)`),
};

/** Escapes `&`, `<` and `>` for Telegram HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeHtmlAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

const telegramHtml: InlineRenderer = {
  text: escapeHtml,
  code: (text, inLink) => (inLink ? escapeHtml(text) : `<code>${escapeHtml(text)}</code>`),
  wrap: (type, inner) => {
    const tag = type === "bold" ? "b" : type === "italic" ? "i" : "s";
    return `<${tag}>${inner}</${tag}>`;
  },
  link: (url, inner) => `<a href="${escapeHtmlAttribute(url)}">${inner}</a>`,
  unlinked: (url, inner, label) => (label === url ? inner : `${inner} (${escapeHtml(url)})`),
};

/** Slack's three escapes: `&`, `<`, `>` (formatting characters cannot be escaped in mrkdwn). */
export function escapeSlack(text: string): string {
  return escapeHtml(text);
}

/** Slack cannot escape a backtick inside code: it becomes U+02CB (ˋ) there. */
function slackCode(text: string): string {
  return escapeSlack(text).replace(/`/g, "\u02cb");
}

const slackMrkdwn: InlineRenderer = {
  text: escapeSlack,
  code: (text, inLink) => (inLink ? escapeSlack(text) : `\`${slackCode(text)}\``),
  wrap: (type, inner) => {
    const delimiter = type === "bold" ? "*" : type === "italic" ? "_" : "~";
    return `${delimiter}${inner}${delimiter}`;
  },
  // The label is plain text: `|` and `>` would end it early.
  link: (url, _inner, label) => {
    const safeUrl = url.replace(/[<>|]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    return label === url ? `<${safeUrl}>` : `<${safeUrl}|${escapeSlack(label).replace(/\|/g, "¦")}>`;
  },
  unlinked: (url, inner, label) => (label === url ? inner : `${inner} (${escapeSlack(url)})`),
};

const plain: InlineRenderer = {
  text: (text) => text,
  code: (text) => text,
  wrap: (_type, inner) => inner,
  link: (url, inner, label) => (label === url ? inner : `${inner} (${url})`),
  unlinked: (url, inner, label) => (label === url ? inner : `${inner} (${url})`),
};

/** Markdown → Telegram MarkdownV2 (`parse_mode: "MarkdownV2"`). */
export function toTelegramMarkdownV2(markdown: string): string {
  return renderBlocks(
    parseMarkdown(markdown),
    (nodes) => renderInline(nodes, telegramMarkdownV2),
    (lang, code) => `\`\`\`${lang}\n${escapeMarkdownV2Code(code)}\n\`\`\``,
  );
}

/** Markdown → Telegram HTML (`parse_mode: "HTML"`). */
export function toTelegramHtml(markdown: string): string {
  return renderBlocks(
    parseMarkdown(markdown),
    (nodes) => renderInline(nodes, telegramHtml),
    (lang, code) =>
      lang === ""
        ? `<pre>${escapeHtml(code)}</pre>`
        : `<pre><code class="language-${lang}">${escapeHtml(code)}</code></pre>`,
  );
}

/** Markdown → Slack mrkdwn. */
export function toSlackMrkdwn(markdown: string): string {
  return renderBlocks(
    parseMarkdown(markdown),
    (nodes) => renderInline(nodes, slackMrkdwn),
    (_lang, code) => `\`\`\`\n${slackCode(code)}\n\`\`\``,
  );
}

/** Markdown → plain text: markers dropped, links as `text (url)`, code blocks as their content. */
export function toPlainText(markdown: string): string {
  return renderBlocks(
    parseMarkdown(markdown),
    (nodes) => renderInline(nodes, plain),
    (_lang, code) => code,
  );
}

/** Formats Markdown for a dialect (`markdown` returns it unchanged). */
export function formatForDialect(markdown: string, dialect: Dialect): string {
  switch (dialect) {
    case "telegram-markdown-v2":
      return toTelegramMarkdownV2(markdown);
    case "telegram-html":
      return toTelegramHtml(markdown);
    case "slack-mrkdwn":
      return toSlackMrkdwn(markdown);
    case "plain":
      return toPlainText(markdown);
    case "markdown":
      return markdown;
  }
}

/**
 * Splits Markdown into chunks whose *formatted* text fits `limit`, formatted for the dialect. Each chunk is
 * formatted on its own (so every chunk is valid for the channel); a chunk whose formatting grew past the
 * limit is split again, smaller. Empty or whitespace-only chunks are dropped.
 */
export function formatAndSplit(
  markdown: string,
  dialect: Dialect,
  limit: number,
  options: { readonly chunkMode?: ChunkMode } = {},
): string[] {
  if (!(Number.isInteger(limit) && limit > 0))
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const out: string[] = [];
  const place = (text: string, rawLimit: number, mode: ChunkMode) => {
    for (const chunk of splitTextChunks(text, rawLimit, mode)) {
      const formatted = formatForDialect(chunk.text, dialect);
      if (formatted.trim() === "") continue;
      if (formatted.length <= limit) {
        out.push(formatted);
        continue;
      }
      // shrink in proportion to the growth; always strictly smaller so this ends
      const smaller = Math.min(chunk.text.length - 1, Math.floor((rawLimit * limit) / formatted.length));
      if (smaller < 1) {
        throw new RangeError(
          `cannot fit text into ${limit} characters of ${dialect}: one character formats longer`,
        );
      }
      place(chunk.text, smaller, "length");
    }
  };
  place(markdown, limit, options.chunkMode ?? "length");
  return out;
}
