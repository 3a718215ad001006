// Slack Events API `message` / `app_mention` events → the contract's InboundMessage. Owns: which events are
// user messages (no bot echoes, no edits/joins/deletions), chat types (im → direct, mpim/private group → group,
// channel → channel), threads (`thread_ts`), mentions (`<@U…>`, the bot's own included), files → media, and
// decoding Slack's text markup to plain text. Does not own access control or mention gating (channels-core).
import type { ChatType, InboundMessage, MediaItem, MediaKind, Mention } from "@agent-kernel/channels-core";
import { SLACK_CHANNEL_ID } from "./web-api.ts";

export interface SlackIdentity {
  readonly accountId: string;
  /** The bot's user id (auth.test `user_id`): its mentions set `mentionsBot`, its own messages are dropped. */
  readonly botUserId: string;
  /** The bot's bot id (auth.test `bot_id`). */
  readonly botId?: string;
  readonly teamId?: string;
  /** Accept messages other bots post (default false: two bots answering each other loop forever). */
  readonly allowBots?: boolean;
}

/** Subtypes that are still a person's message; every other subtype (edits, joins, bot_message, …) is not. */
const USER_MESSAGE_SUBTYPES = new Set(["file_share", "thread_broadcast", "me_message"]);

const MENTION_RE = /<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g;

type SlackObject = Record<string, unknown>;

/** Returns the normalised message, or undefined when the event is not a user message to handle. */
export function normalizeSlackEvent(
  event: unknown,
  identity: SlackIdentity,
  envelopeTeamId?: string,
): InboundMessage | undefined {
  if (!isObject(event)) return undefined;
  const type = event.type;
  if (type !== "message" && type !== "app_mention") return undefined;
  const subtype = str(event.subtype);
  if (subtype !== undefined && !USER_MESSAGE_SUBTYPES.has(subtype)) return undefined;
  const user = str(event.user);
  const botId = str(event.bot_id);
  const channel = str(event.channel);
  const ts = str(event.ts);
  if (!user || !channel || !ts) return undefined;
  if (user === identity.botUserId || (botId !== undefined && botId === identity.botId)) return undefined;
  if (botId !== undefined && !identity.allowBots) return undefined;

  const rawText = str(event.text) ?? "";
  const mentions = parseMentions(rawText);
  const threadTs = str(event.thread_ts);
  const isThreadReply = threadTs !== undefined && threadTs !== ts;
  const repliesToBot = isThreadReply && str(event.parent_user_id) === identity.botUserId;
  const teamId = str(event.team) ?? envelopeTeamId ?? identity.teamId;
  const media = Array.isArray(event.files) ? event.files.filter(isObject).map(fileToMedia) : [];
  const text = decodeSlackText(rawText);
  // nothing to answer (an emptied message, a file share whose files Slack did not include)
  if (text.trim() === "" && media.length === 0) return undefined;
  return {
    channel: SLACK_CHANNEL_ID,
    accountId: identity.accountId,
    messageId: ts,
    conversation: {
      chatType: chatTypeOf(str(event.channel_type), channel),
      chatId: channel,
      ...(threadTs !== undefined ? { threadId: threadTs } : {}),
      ...(teamId !== undefined ? { teamId } : {}),
    },
    sender: { id: user, ...(botId !== undefined ? { isBot: true } : {}) },
    text,
    media,
    mentions,
    mentionsBot:
      type === "app_mention" || repliesToBot || mentions.some((m) => m.userId === identity.botUserId),
    ...(isThreadReply ? { replyToMessageId: threadTs } : {}),
    timestamp: Math.round(Number.parseFloat(ts) * 1000),
    raw: event,
  };
}

/** `im` → direct, `mpim`/`group` (private channel) → group, `channel` → channel; else by the id's prefix. */
export function chatTypeOf(channelType: string | undefined, channelId: string): ChatType {
  switch (channelType) {
    case "im":
      return "direct";
    case "mpim":
    case "group":
      return "group";
    case "channel":
      return "channel";
    default:
      if (channelId.startsWith("D")) return "direct";
      if (channelId.startsWith("G")) return "group";
      return "channel";
  }
}

export function parseMentions(text: string): Mention[] {
  const mentions: Mention[] = [];
  const seen = new Set<string>();
  for (const match of text.matchAll(MENTION_RE)) {
    const userId = match[1];
    if (!userId || seen.has(userId)) continue;
    seen.add(userId);
    const username = match[2]?.trim();
    mentions.push(username ? { userId, username } : { userId });
  }
  return mentions;
}

/**
 * Slack text → plain text: `<@U1|ann>` → `@ann` (`@U1` without a label), `<#C1|general>` → `#general`,
 * `<!here>` → `@here`, `<url|label>` → `label (url)`, `<url>` → `url`, then `&lt; &gt; &amp;` decoded.
 */
export function decodeSlackText(text: string): string {
  const decoded = text.replace(/<([^<>\n]+)>/g, (whole, inner: string) => {
    const [target = "", label] = splitOnce(inner, "|");
    if (target.startsWith("@")) return `@${label || target.slice(1)}`;
    if (target.startsWith("#")) return `#${label || target.slice(1)}`;
    if (target.startsWith("!")) {
      const special = target.slice(1).split("^")[0] ?? "";
      return label || (["here", "channel", "everyone"].includes(special) ? `@${special}` : whole);
    }
    if (/^(https?:\/\/|mailto:)/.test(target)) {
      const plain = target.replace(/^mailto:/, "");
      return !label || label === plain || label === target ? plain : `${label} (${plain})`;
    }
    return whole;
  });
  return decoded.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function fileToMedia(file: SlackObject): MediaItem {
  const mimeType = str(file.mimetype);
  const url = str(file.url_private_download) ?? str(file.url_private);
  const fileId = str(file.id);
  const fileName = str(file.name);
  const size = file.size;
  return {
    kind: mediaKindOf(mimeType, str(file.subtype)),
    ...(url !== undefined ? { url } : {}),
    ...(fileId !== undefined ? { fileId } : {}),
    ...(mimeType !== undefined ? { mimeType } : {}),
    ...(fileName !== undefined ? { fileName } : {}),
    ...(typeof size === "number" ? { sizeBytes: size } : {}),
  };
}

function mediaKindOf(mimeType: string | undefined, subtype: string | undefined): MediaKind {
  if (subtype === "slack_audio") return "voice";
  if (!mimeType) return "other";
  if (mimeType.startsWith("image/")) return "image";
  if (mimeType.startsWith("audio/")) return "audio";
  if (mimeType.startsWith("video/")) return "video";
  return "document";
}

function splitOnce(value: string, separator: string): [string, string | undefined] {
  const at = value.indexOf(separator);
  return at === -1 ? [value, undefined] : [value.slice(0, at), value.slice(at + 1)];
}

function isObject(value: unknown): value is SlackObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
