// Telegram update → `InboundMessage`. Owns the mapping: private → direct, group/supergroup → group, channel
// posts → channel; forum topics → `threadId` (the topic's `message_thread_id`, whose root message is not
// counted as a reply); mentions from `mention` / `text_mention` / `bot_command@bot` entities; `mentionsBot`
// for a mention of the bot or a reply to one of its messages; media (the largest photo size, document, audio,
// voice, video, video note, animation, sticker) with `fileId`. Updates that carry no user content (service
// messages, edits, callbacks) map to undefined. Does not own access control or mention gating (channels-core).
import type {
  ChatType,
  InboundMessage,
  MediaItem,
  MediaKind,
  Mention,
  Sender,
} from "@agent-kernel/channels-core";
import { CHANNEL_ID } from "./bot-api.ts";

export interface TelegramUser {
  readonly id: number;
  readonly is_bot?: boolean;
  readonly first_name?: string;
  readonly last_name?: string;
  readonly username?: string;
}

export interface TelegramChat {
  readonly id: number;
  readonly type: string;
  readonly title?: string;
  readonly username?: string;
  readonly first_name?: string;
  readonly last_name?: string;
  readonly is_forum?: boolean;
}

export interface TelegramEntity {
  readonly type: string;
  readonly offset: number;
  readonly length: number;
  readonly user?: TelegramUser;
}

interface TelegramFile {
  readonly file_id: string;
  readonly file_name?: string;
  readonly mime_type?: string;
  readonly file_size?: number;
  readonly width?: number;
  readonly height?: number;
}

export interface TelegramMessage {
  readonly message_id: number;
  readonly message_thread_id?: number;
  readonly is_topic_message?: boolean;
  readonly from?: TelegramUser;
  readonly sender_chat?: TelegramChat;
  readonly date: number;
  readonly chat: TelegramChat;
  readonly reply_to_message?: TelegramMessage;
  readonly text?: string;
  readonly entities?: readonly TelegramEntity[];
  readonly caption?: string;
  readonly caption_entities?: readonly TelegramEntity[];
  readonly photo?: readonly TelegramFile[];
  readonly document?: TelegramFile;
  readonly audio?: TelegramFile;
  readonly voice?: TelegramFile;
  readonly video?: TelegramFile;
  readonly video_note?: TelegramFile;
  readonly animation?: TelegramFile;
  readonly sticker?: TelegramFile & { readonly emoji?: string };
}

export interface TelegramUpdate {
  readonly update_id: number;
  readonly message?: TelegramMessage;
  readonly channel_post?: TelegramMessage;
  readonly [other: string]: unknown;
}

export interface BotIdentity {
  readonly id: number;
  readonly username?: string;
}

function chatTypeOf(chat: TelegramChat): ChatType {
  if (chat.type === "private") return "direct";
  if (chat.type === "channel") return "channel";
  return "group";
}

function mediaItem(kind: MediaKind, file: TelegramFile, caption: string | undefined): MediaItem {
  return {
    kind,
    fileId: file.file_id,
    ...(file.mime_type === undefined ? {} : { mimeType: file.mime_type }),
    ...(file.file_name === undefined ? {} : { fileName: file.file_name }),
    ...(file.file_size === undefined ? {} : { sizeBytes: file.file_size }),
    ...(caption === undefined || caption === "" ? {} : { caption }),
  };
}

function mediaOf(message: TelegramMessage): MediaItem[] {
  const caption = message.caption;
  const media: MediaItem[] = [];
  if (message.photo !== undefined && message.photo.length > 0) {
    // Telegram lists sizes small to large; pick by area in case an old client orders them differently
    const largest = message.photo.reduce((best, size) =>
      (size.width ?? 0) * (size.height ?? 0) > (best.width ?? 0) * (best.height ?? 0) ? size : best,
    );
    media.push(mediaItem("image", largest, caption));
  }
  if (message.document !== undefined) media.push(mediaItem("document", message.document, caption));
  if (message.audio !== undefined) media.push(mediaItem("audio", message.audio, caption));
  if (message.voice !== undefined) media.push(mediaItem("voice", message.voice, caption));
  if (message.video !== undefined) media.push(mediaItem("video", message.video, caption));
  if (message.video_note !== undefined) media.push(mediaItem("video", message.video_note, caption));
  // an animation also carries a `document` copy: keep only the animation
  if (message.animation !== undefined) {
    const index = media.findIndex(
      (item) => item.kind === "document" && item.fileId === message.document?.file_id,
    );
    if (index !== -1) media.splice(index, 1);
    media.push(mediaItem("video", message.animation, caption));
  }
  if (message.sticker !== undefined) media.push(mediaItem("sticker", message.sticker, caption));
  return media;
}

/** The text an entity covers (offsets are UTF-16 code units, as JavaScript strings are). */
function entityText(text: string, entity: TelegramEntity): string {
  return text.slice(entity.offset, entity.offset + entity.length);
}

function mentionsOf(
  text: string,
  entities: readonly TelegramEntity[],
  bot: BotIdentity,
): { mentions: Mention[]; bot: boolean } {
  const mentions: Mention[] = [];
  let mentionsBot = false;
  const botName = bot.username?.toLowerCase();
  for (const entity of entities) {
    if (entity.type === "mention") {
      const username = entityText(text, entity).replace(/^@/, "");
      if (username === "") continue;
      const isBot = botName !== undefined && username.toLowerCase() === botName;
      mentions.push(isBot ? { username, userId: String(bot.id) } : { username });
      mentionsBot ||= isBot;
    } else if (entity.type === "text_mention" && entity.user !== undefined) {
      const isBot = entity.user.id === bot.id;
      mentions.push({
        userId: String(entity.user.id),
        ...(entity.user.username === undefined ? {} : { username: entity.user.username }),
      });
      mentionsBot ||= isBot;
    } else if (entity.type === "bot_command") {
      // `/cmd@bot` addresses one bot in a group
      const target = /@([A-Za-z0-9_]+)$/.exec(entityText(text, entity))?.[1];
      if (target !== undefined && botName !== undefined && target.toLowerCase() === botName)
        mentionsBot = true;
    }
  }
  return { mentions, bot: mentionsBot };
}

/** The value when it has visible text: Telegram allows blank names and titles, an InboundMessage does not. */
function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

function displayName(user: TelegramUser): string | undefined {
  return nonBlank([user.first_name, user.last_name].filter((part) => nonBlank(part) !== undefined).join(" "));
}

function senderOf(message: TelegramMessage): Sender {
  const from = message.from;
  if (from !== undefined && message.sender_chat === undefined) {
    const name = displayName(from);
    const username = nonBlank(from.username);
    return {
      id: String(from.id),
      ...(username === undefined ? {} : { username }),
      ...(name === undefined ? {} : { displayName: name }),
      isBot: from.is_bot === true,
    };
  }
  // channel posts and anonymous group admins speak as a chat
  const chat = message.sender_chat ?? message.chat;
  const username = nonBlank(chat.username);
  const title = nonBlank(chat.title);
  return {
    id: String(chat.id),
    ...(username === undefined ? {} : { username }),
    ...(title === undefined ? {} : { displayName: title }),
    isBot: false,
  };
}

/** An update that does not have the Bot API's shape: it is skipped (and reported), never retried. */
export class TelegramUpdateError extends Error {
  readonly updateId: unknown;
  constructor(updateId: unknown, problem: string) {
    super(`telegram: update ${String(updateId)} skipped: ${problem}`);
    this.name = "TelegramUpdateError";
    this.updateId = updateId;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The fields normalisation relies on, checked before it reads them (the Bot API's documented types). */
function checkMessageShape(updateId: unknown, message: unknown): void {
  const fail = (problem: string): TelegramUpdateError => new TelegramUpdateError(updateId, problem);
  if (!isRecord(message)) throw fail("the message is not an object");
  if (typeof message.message_id !== "number") throw fail("message.message_id is not a number");
  if (!isRecord(message.chat)) throw fail("message.chat is missing");
  const chatId = message.chat.id;
  if (typeof chatId !== "number" && typeof chatId !== "string") throw fail("message.chat.id is not a number");
  if (typeof message.chat.type !== "string") throw fail("message.chat.type is not a string");
  for (const field of ["text", "caption"] as const)
    if (message[field] !== undefined && typeof message[field] !== "string")
      throw fail(`message.${field} is not a string`);
  for (const field of ["entities", "caption_entities", "photo"] as const)
    if (message[field] !== undefined && !Array.isArray(message[field]))
      throw fail(`message.${field} is not an array`);
  for (const field of ["from", "reply_to_message", "document", "audio", "voice", "video", "sticker"] as const)
    if (message[field] !== undefined && !isRecord(message[field]))
      throw fail(`message.${field} is not an object`);
}

/** Normalises one update; undefined when it carries nothing for the gateway. */
export function normalizeUpdate(
  update: TelegramUpdate,
  bot: BotIdentity,
  accountId: string,
): InboundMessage | undefined {
  const message = update.message ?? update.channel_post;
  if (message === undefined) return undefined;
  checkMessageShape(update.update_id, message);
  const text = message.text ?? message.caption ?? "";
  const media = mediaOf(message);
  if (text === "" && media.length === 0) return undefined; // service message (joins, pins, topic created …)

  const chat = message.chat;
  const inTopic =
    message.is_topic_message === true || (chat.is_forum === true && message.message_thread_id !== undefined);
  const threadId =
    inTopic && message.message_thread_id !== undefined ? String(message.message_thread_id) : undefined;
  // in a forum every topic message "replies" to the topic's root: that is not a reply
  const reply = message.reply_to_message;
  const realReply =
    reply !== undefined && !(inTopic && reply.message_id === message.message_thread_id) ? reply : undefined;

  const found = mentionsOf(text, message.entities ?? message.caption_entities ?? [], bot);
  const repliesToBot = realReply?.from?.id === bot.id;

  const sender = senderOf(message);
  return {
    channel: CHANNEL_ID,
    accountId,
    messageId: String(message.message_id),
    conversation: {
      chatType: chatTypeOf(chat),
      chatId: String(chat.id),
      ...(threadId === undefined ? {} : { threadId }),
      ...(nonBlank(chat.title) === undefined ? {} : { title: chat.title }),
    },
    sender,
    text,
    media,
    mentions: found.mentions,
    mentionsBot: found.bot || repliesToBot,
    ...(realReply === undefined ? {} : { replyToMessageId: String(realReply.message_id) }),
    timestamp: message.date * 1000,
    raw: update,
  };
}
