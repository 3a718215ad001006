// The two Telegram dialects the adapter sends: MarkdownV2 (the default) and HTML (the fallback), and the
// visible text a reader gets. The renderers are channels-core's (`toTelegramMarkdownV2`, `toTelegramHtml`,
// `toPlainText`): one Markdown reading for every channel. This module only names them for Telegram and picks
// one per parse mode; the tests hold them to Telegram's strict parsers (the fake's tdlib grammar). Does not
// own splitting (chunk.ts) or sending (channel.ts).
import {
  escapeHtml,
  escapeMarkdownV2,
  escapeMarkdownV2Code,
  escapeMarkdownV2Url,
  toPlainText,
  toTelegramHtml,
  toTelegramMarkdownV2,
} from "@agent-kernel/channels-core";

export type TelegramParseMode = "MarkdownV2" | "HTML";

export { escapeMarkdownV2, escapeMarkdownV2Code, escapeMarkdownV2Url };

/** Escapes `&`, `<` and `>` for Telegram HTML text. */
export const escapeTelegramHtml: (text: string) => string = escapeHtml;

/** Markdown → MarkdownV2 (`parse_mode: "MarkdownV2"`). */
export const markdownToTelegramV2: (markdown: string) => string = toTelegramMarkdownV2;

/** Markdown → Telegram HTML (`parse_mode: "HTML"`). */
export const markdownToTelegramHtml: (markdown: string) => string = toTelegramHtml;

/** The text a reader sees once Telegram has parsed the formatting: Telegram refuses a message where it is empty. */
export const markdownToVisibleText: (markdown: string) => string = toPlainText;

/** Formats Markdown for a parse mode. */
export function formatForTelegram(markdown: string, parseMode: TelegramParseMode): string {
  return parseMode === "MarkdownV2" ? toTelegramMarkdownV2(markdown) : toTelegramHtml(markdown);
}
