// What a test pushes in as a user (or a channel) writing to the bot: builds the message the way Telegram's
// server would (ids, detected entities, reply embedding, forum topic fields, media with fresh file ids), stores
// it in its chat and queues its update. Owns `pushMessage`; does not own the queue (update-queue.ts), the chat
// state (chat-store.ts) or the plain builders of users and chats (updates.ts).
import { type ChatStore, stripReply } from "./chat-store.ts";
import type { FileStore } from "./file-store.ts";
import type { TgChat, TgFile, TgMessage, TgMessageEntity, TgUpdate, TgUpdateKind, TgUser } from "./types.ts";
import type { UpdateQueue } from "./update-queue.ts";
import { detectEntities } from "./updates.ts";

export interface InboundSpec {
  readonly chat: TgChat;
  /** The sender; omitted for channel posts. */
  readonly from?: TgUser;
  readonly text?: string;
  /** Entities besides the ones Telegram detects by itself (mentions, commands, URLs), e.g. `text_mention`. */
  readonly entities?: TgMessageEntity[];
  readonly caption?: string;
  /**
   * A photo: the fake makes three sizes (90, 320, 1280 px wide) with fresh file ids. Given bytes, the largest
   * size holds them (downloadable through getFile and `/file/bot<token>/<file_path>`); `true`, no size has any.
   */
  readonly photo?: boolean | Uint8Array;
  readonly document?: Partial<TgFile>;
  readonly audio?: Partial<TgFile>;
  readonly voice?: Partial<TgFile>;
  readonly video?: Partial<TgFile>;
  readonly sticker?: Partial<TgFile>;
  /** The id of a message in the same chat this one replies to. */
  readonly replyTo?: number;
  /** The forum topic (supergroups with `is_forum`). */
  readonly threadId?: number;
  /** Seconds since the epoch (default: now). */
  readonly date?: number;
  readonly edited?: boolean;
}

export interface InboundContext {
  readonly chats: ChatStore;
  readonly files: FileStore;
  readonly updates: UpdateQueue;
}

/** Builds a user message (or channel post for a channel chat), stores it in its chat and pushes its update. */
export function pushInboundMessage(
  spec: InboundSpec,
  { chats, files, updates }: InboundContext,
): TgUpdate & { message?: TgMessage; channel_post?: TgMessage } {
  const state = chats.ensure(spec.chat);
  const isChannel = spec.chat.type === "channel";
  if (!isChannel && spec.from === undefined)
    throw new Error("pushMessage: `from` is required outside channels");
  if (spec.from !== undefined) chats.rememberUser(spec.from);
  if (spec.threadId !== undefined && state.chat.is_forum === true && !state.messages.has(spec.threadId)) {
    chats.addForumTopic(spec.chat.id, spec.threadId);
  }
  const messageId = state.nextMessageId++;
  const message: TgMessage = {
    message_id: messageId,
    date: spec.date ?? Math.floor(Date.now() / 1000),
    chat: state.chat,
    ...(spec.from === undefined ? {} : { from: spec.from }),
    ...(isChannel ? { sender_chat: state.chat } : {}),
  };
  if (spec.threadId !== undefined) {
    state.topics.add(spec.threadId);
    message.message_thread_id = spec.threadId;
    if (state.chat.is_forum === true) message.is_topic_message = true;
  }
  // in a forum a topic message "replies" to the topic's root message, as Telegram sends it
  const replyTo = spec.replyTo ?? (state.chat.is_forum === true ? spec.threadId : undefined);
  if (replyTo !== undefined) {
    const target = state.messages.get(replyTo);
    if (target === undefined) throw new Error(`pushMessage: no message ${replyTo} in chat ${spec.chat.id}`);
    message.reply_to_message = stripReply(target);
  }
  if (spec.text !== undefined) {
    message.text = spec.text;
    const entities = [...detectEntities(spec.text), ...(spec.entities ?? [])];
    if (entities.length > 0) message.entities = entities.sort((a, b) => a.offset - b.offset);
  }
  if (spec.caption !== undefined) {
    message.caption = spec.caption;
    const entities = [...detectEntities(spec.caption), ...(spec.entities ?? [])];
    if (entities.length > 0) message.caption_entities = entities;
  }
  if (spec.photo === true) message.photo = files.photoSizes();
  else if (spec.photo instanceof Uint8Array) message.photo = files.photoSizes(spec.photo);
  if (spec.document !== undefined) message.document = files.newFile("document", spec.document);
  if (spec.audio !== undefined) message.audio = files.newFile("audio", spec.audio);
  if (spec.voice !== undefined) message.voice = files.newFile("voice", spec.voice);
  if (spec.video !== undefined) message.video = files.newFile("video", spec.video);
  if (spec.sticker !== undefined) message.sticker = files.newFile("sticker", spec.sticker);
  state.messages.set(messageId, message);
  const kind: TgUpdateKind = isChannel
    ? spec.edited === true
      ? "edited_channel_post"
      : "channel_post"
    : spec.edited === true
      ? "edited_message"
      : "message";
  return updates.push({ [kind]: message });
}
