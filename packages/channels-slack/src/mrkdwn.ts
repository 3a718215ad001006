// Markdown → Slack mrkdwn, and splitting a reply at the channel's limit. Owns the Slack dialect as this adapter
// sends it: Slack's three control characters `&`, `<`, `>` escaped everywhere (code included), Slack's own
// `<@U…>`/`<#C…>`/`<!here>`/`<url|label>` tokens passed through so the agent can mention people, bold /
// italic / strike / links / images / headings / bullets / block quotes rewritten, code left verbatim. Splitting
// is channels-core's (`splitText`: never inside a code fence, `chunkMode`), measured after formatting.
// Why not channels-core's `toSlackMrkdwn`/`formatAndSplit`: it escapes Slack's own tokens (a mention written by
// the agent would arrive as `&lt;@U123&gt;`) and block quotes; when it passes them through, defer to it.
import { type ChunkMode, escapeSlack, splitText } from "@agent-kernel/channels-core";
import { scanFenceSpans } from "@agent-kernel/markdown";

/** Slack's own angle-bracket tokens, which must reach Slack unescaped. */
const SLACK_TOKEN_RE =
  /<(?:[@#][A-Z0-9]+(?:\|[^<>\n]*)?|![a-z^][^<>\n]*|(?:https?:\/\/|mailto:)[^<>\s|]+(?:\|[^<>\n]*)?)>/g;
/** Markdown links and images: `[label](url)` / `![alt](url)` with an http(s) or mailto URL. */
const MD_LINK_RE = /!?\[([^\]\n]*)\]\(((?:https?:\/\/|mailto:)[^\s)]+)(?:\s+"[^"\n]*")?\)/g;
const INLINE_CODE_RE = /(`+)([^`\n]|[^`\n][\s\S]*?[^`\n])\1(?!`)/g;
// Private-use placeholders: stripped from input first so they cannot be forged.
const PLACEHOLDER_RE = /\uE000(\d+)\uE001/g;
const PRIVATE_USE_RE = /[\uE000-\uE003]/g;
const BOLD_MARK = "\uE002";

/** Slack's escaping of plain text: `&`, `<`, `>`. */
export function escapeSlackText(text: string): string {
  return escapeSlack(text);
}

/** Converts the kernel's Markdown to Slack mrkdwn. */
export function markdownToSlackMrkdwn(markdown: string): string {
  const text = markdown.replace(PRIVATE_USE_RE, "");
  const { spans } = scanFenceSpans(text);
  const out: string[] = [];
  let cursor = 0;
  for (const span of spans) {
    out.push(convertProse(text.slice(cursor, span.start)));
    out.push(convertFence(text.slice(span.start, span.end), span.openLine));
    cursor = span.end;
  }
  out.push(convertProse(text.slice(cursor)));
  return out.join("");
}

function convertFence(block: string, openLine: string): string {
  // Slack shows a fence's info string as code text: drop it.
  const body = block.slice(openLine.length);
  const closeMatch = /\n[ \t]*(`{3,}|~{3,})[ \t]*$/.exec(body);
  const inner = closeMatch ? body.slice(0, closeMatch.index) : body;
  return `\`\`\`${escapeSlackText(inner)}${closeMatch ? "\n```" : ""}`;
}

function convertProse(text: string): string {
  if (!text) return "";
  const kept: string[] = [];
  const keep = (value: string): string => {
    kept.push(value);
    return `\uE000${kept.length - 1}\uE001`;
  };
  let work = text.replace(INLINE_CODE_RE, (_match, ticks: string, code: string) =>
    keep(`${ticks.length >= 3 ? "```" : "`"}${escapeSlackText(code)}${ticks.length >= 3 ? "```" : "`"}`),
  );
  work = work.replace(MD_LINK_RE, (_match, label: string, url: string) => {
    const safeUrl = url.replace(/&/g, "&amp;").replace(/[<>|]/g, encodeURIComponent);
    const cleanLabel = label.trim();
    return keep(
      cleanLabel ? `<${safeUrl}|${escapeSlackText(cleanLabel).replace(/\|/g, "¦")}>` : `<${safeUrl}>`,
    );
  });
  work = work.replace(SLACK_TOKEN_RE, (token) => keep(token));
  work = work.split("\n").map(convertLine).join("\n");
  work = escapeSlackText(work);
  // a line-start quote marker was kept as a placeholder-free `>`; convertLine marks it with \uE003
  work = work.replace(/\uE003/g, ">");
  work = work.replace(/\*\*(?=\S)([^\n]*?\S)\*\*/g, `${BOLD_MARK}$1${BOLD_MARK}`);
  work = work.replace(/(^|[^\w])__(?=\S)([^\n]*?\S)__(?!\w)/g, `$1${BOLD_MARK}$2${BOLD_MARK}`);
  work = work.replace(/(^|[^\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])/g, "$1_$2_");
  work = work.replace(/~~(?=\S)([^\n]*?\S)~~/g, "~$1~");
  work = work.replace(new RegExp(BOLD_MARK, "g"), "*");
  return work.replace(PLACEHOLDER_RE, (_match, index: string) => kept[Number(index)] ?? "");
}

function convertLine(line: string): string {
  const heading = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/.exec(line);
  if (heading?.[1]) return `**${heading[1].replace(/^\*\*(.*)\*\*$/, "$1")}**`;
  const quote = /^( {0,3})>[ \t]?(.*)$/.exec(line);
  if (quote) return `${quote[1] ?? ""}\uE003 ${convertLine(quote[2] ?? "")}`.trimEnd();
  const bullet = /^(\s*)[-*+][ \t]+(.*)$/.exec(line);
  if (bullet && !/^\s*([-*_])\s*\1\s*\1[\s\-*_]*$/.test(line))
    return `${bullet[1] ?? ""}• ${bullet[2] ?? ""}`;
  return line;
}

/**
 * Formats Markdown for Slack and splits it into messages of at most `limit` characters *as sent*: the Markdown
 * is split first (paragraphs/lines, never inside a code fence; a fence too long for one message is closed and
 * reopened), each piece is formatted on its own so every message is valid mrkdwn, and a piece that grew past
 * the limit when escaped is split again, smaller.
 */
export function formatSlackChunks(
  markdown: string,
  limit: number,
  chunkMode: ChunkMode = "length",
): string[] {
  if (!(Number.isInteger(limit) && limit > 0))
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const out: string[] = [];
  const place = (text: string, rawLimit: number, mode: ChunkMode): void => {
    for (const piece of splitText(text, rawLimit, mode)) {
      // the break's own newline stays with the piece; Slack would show it as a blank line
      const formatted = markdownToSlackMrkdwn(piece).trimEnd();
      if (formatted.trim() === "") continue;
      if (formatted.length <= limit) {
        out.push(formatted);
        continue;
      }
      // shrink in proportion to the growth, always strictly, so this ends
      const smaller = Math.min(piece.length - 1, Math.floor((rawLimit * limit) / formatted.length));
      if (smaller < 1) throw new RangeError(`cannot fit text into ${limit} characters of Slack mrkdwn`);
      place(piece, smaller, "length");
    }
  };
  place(markdown, limit, chunkMode);
  return out;
}
