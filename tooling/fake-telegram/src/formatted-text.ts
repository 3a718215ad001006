// A `text` / `caption` with its `parse_mode`, turned into the plain text and entities Telegram stores: picks
// the parser by mode as the Bot API server does (any letter case; none/empty: plain), wraps a parser's refusal
// in "Bad Request: can't parse entities: …", and resolves `tg://user?id=` mentions to users the fake has seen.
// Owns the mode choice and that envelope; the grammars are markdown-v2.ts / html.ts, the link rules links.ts.
import { badRequest } from "./api-error.ts";
import type { ChatStore } from "./chat-store.ts";
import { parseTelegramHtml } from "./html.ts";
import { EntityParseError, type ParsedText, parseMarkdownV2 } from "./markdown-v2.ts";

export function parseFormatted(text: string, parseMode: string | undefined, chats: ChatStore): ParsedText {
  // the Bot API server lower-cases parse_mode: "HTML", "html", "MarkdownV2", "markdownv2" all work
  const mode = parseMode?.toLowerCase() ?? "";
  if (mode === "" || mode === "none" || text === "") return { text, entities: [] };
  try {
    if (mode === "markdownv2") return resolveMentions(parseMarkdownV2(text), chats);
    if (mode === "html") return resolveMentions(parseTelegramHtml(text), chats);
  } catch (error) {
    if (error instanceof EntityParseError) throw badRequest(`can't parse entities: ${error.message}`);
    throw error;
  }
  // legacy "Markdown" is real but deliberately not faked: adapters must use MarkdownV2 or HTML
  throw badRequest("unsupported parse_mode");
}

/** The known user a `tg://user?id=` mention names; Telegram's server cannot mention a user it never saw. */
function resolveMentions(parsed: ParsedText, chats: ChatStore): ParsedText {
  if (!parsed.entities.some((entity) => entity.type === "text_mention")) return parsed;
  const entities = parsed.entities.map((entity) => {
    if (entity.type !== "text_mention" || entity.user === undefined) return entity;
    const known = chats.knownUser(entity.user.id);
    if (known === undefined) throw badRequest("user not found");
    return { ...entity, user: known };
  });
  return { text: parsed.text, entities };
}
