// The methods that send or change the bot's text: sendMessage, editMessageText and sendChatAction, with what
// every send shares — the thread and reply rules (`message_thread_id`, `reply_parameters`,
// `reply_to_message_id`) and storing the bot's message in its chat. Owns the text limits and these checks with
// Telegram's wording; does not own media (file-methods.ts), parsing (formatted-text.ts) or routing.
import { badRequest } from "./api-error.ts";
import { type ChatState, type ChatStore, stripReply } from "./chat-store.ts";
import { parseFormatted } from "./formatted-text.ts";
import { optionalBool, optionalInt, optionalObject, optionalString } from "./request-body.ts";
import type { TgMessage, TgUser } from "./types.ts";

export const TEXT_LIMIT = 4096;
export const CAPTION_LIMIT = 1024;
/** A forum's General topic: the Bot API refuses it as a message_thread_id (send without one instead). */
const GENERAL_TOPIC_ID = 1;

const CHAT_ACTIONS = new Set([
  "typing",
  "upload_photo",
  "record_video",
  "upload_video",
  "record_voice",
  "upload_voice",
  "upload_document",
  "choose_sticker",
  "find_location",
  "record_video_note",
  "upload_video_note",
]);

/** What the send methods work on: the bot's own user and the chats. */
export interface BotContext {
  readonly bot: TgUser;
  readonly chats: ChatStore;
}

/** The thread and reply fields of an outgoing message, checked against the chat. */
export function threadAndReply(state: ChatState, values: Record<string, unknown>): Partial<TgMessage> {
  const extra: Partial<TgMessage> = {};
  // The Bot API server reads a missing, zero or negative id as "no thread". In a forum the General topic (1)
  // and unknown topics are "message thread not found"; a private chat has no topics (getMe says
  // has_topics_enabled: false). Outside forums the real server ignores the id; the fake is stricter and
  // accepts only a reply thread seen in that chat (still sending outside any thread, like the real one).
  const threadId = optionalInt(values, "message_thread_id");
  if (threadId !== undefined && threadId > 0) {
    if (state.chat.is_forum === true) {
      if (threadId === GENERAL_TOPIC_ID || !state.topics.has(threadId))
        throw badRequest("message thread not found");
      extra.message_thread_id = threadId;
      extra.is_topic_message = true;
    } else if (state.chat.type === "private" || !state.topics.has(threadId)) {
      throw badRequest("message thread not found");
    }
  }
  const replyParameters = optionalObject(values, "reply_parameters");
  const replyId =
    replyParameters === undefined
      ? optionalInt(values, "reply_to_message_id")
      : optionalInt(replyParameters, "message_id");
  const allowWithout =
    (replyParameters === undefined
      ? optionalBool(values, "allow_sending_without_reply")
      : optionalBool(replyParameters, "allow_sending_without_reply")) ?? false;
  if (replyParameters !== undefined && replyId === undefined)
    throw badRequest("message to be replied not found");
  if (replyId !== undefined) {
    const target = state.messages.get(replyId);
    if (target === undefined) {
      if (!allowWithout) throw badRequest("message to be replied not found");
    } else extra.reply_to_message = stripReply(target);
  }
  return extra;
}

/** Stores a message from the bot in its chat under the chat's next message id. */
export function storeBotMessage(bot: TgUser, state: ChatState, fields: Partial<TgMessage>): TgMessage {
  const message: TgMessage = {
    message_id: state.nextMessageId++,
    from: bot,
    chat: state.chat,
    date: Math.floor(Date.now() / 1000),
    ...fields,
  };
  state.messages.set(message.message_id, message);
  return message;
}

export function sendMessage(values: Record<string, unknown>, { bot, chats }: BotContext): TgMessage {
  const state = chats.require(values);
  const raw = optionalString(values, "text") ?? "";
  if (raw.trim() === "") throw badRequest("message text is empty");
  const parsed = parseFormatted(raw, optionalString(values, "parse_mode"), chats);
  if (parsed.text.trim() === "") throw badRequest("message text is empty");
  if (parsed.text.length > TEXT_LIMIT) throw badRequest("message is too long");
  const extra = threadAndReply(state, values);
  return storeBotMessage(bot, state, {
    ...extra,
    text: parsed.text,
    ...(parsed.entities.length > 0 ? { entities: parsed.entities } : {}),
  });
}

export function editMessageText(values: Record<string, unknown>, { bot, chats }: BotContext): TgMessage {
  const state = chats.require(values);
  const messageId = optionalInt(values, "message_id");
  const message = messageId === undefined ? undefined : state.messages.get(messageId);
  if (message === undefined) throw badRequest("message to edit not found");
  if (message.from?.id !== bot.id) throw badRequest("message can't be edited");
  if (message.text === undefined) throw badRequest("there is no text in the message to edit");
  const raw = optionalString(values, "text") ?? "";
  if (raw.trim() === "") throw badRequest("message text is empty");
  const parsed = parseFormatted(raw, optionalString(values, "parse_mode"), chats);
  if (parsed.text.length > TEXT_LIMIT) throw badRequest("message is too long");
  if (
    parsed.text === message.text &&
    JSON.stringify(parsed.entities) === JSON.stringify(message.entities ?? [])
  ) {
    throw badRequest(
      "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
  }
  const edited: TgMessage = { ...message, text: parsed.text, edit_date: Math.floor(Date.now() / 1000) };
  if (parsed.entities.length > 0) edited.entities = parsed.entities;
  else delete edited.entities;
  state.messages.set(edited.message_id, edited);
  return edited;
}

export function sendChatAction(values: Record<string, unknown>, { chats }: BotContext): true {
  const state = chats.require(values);
  const action = optionalString(values, "action");
  if (action === undefined || !CHAT_ACTIONS.has(action))
    throw badRequest("wrong parameter action in request");
  threadAndReply(state, values);
  return true;
}
