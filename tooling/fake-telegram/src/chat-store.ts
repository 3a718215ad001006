// The chats the fake knows, with their messages (users' and the bot's) and forum topics, and the users it has
// seen (senders of pushed messages, private chats): the ones a `tg://user?id=` mention can name. Owns this
// state and the lookups the methods share ("chat not found"); does not own building inbound messages
// (inbound-messages.ts) or what a send method stores (message-methods.ts, file-methods.ts).
import { badRequest } from "./api-error.ts";
import type { TgChat, TgMessage, TgUser } from "./types.ts";

export interface ChatState {
  chat: TgChat;
  nextMessageId: number;
  messages: Map<number, TgMessage>;
  topics: Set<number>;
}

export class ChatStore {
  readonly #chats = new Map<number, ChatState>();
  readonly #users = new Map<number, TgUser>();

  /** The chat's state, made on first sight; a known chat takes the new fields. A private chat's user is known. */
  ensure(chat: TgChat): ChatState {
    const existing = this.#chats.get(chat.id);
    if (existing !== undefined) {
      existing.chat = { ...existing.chat, ...chat };
      return existing;
    }
    const state: ChatState = { chat, nextMessageId: 1, messages: new Map(), topics: new Set() };
    this.#chats.set(chat.id, state);
    if (chat.type === "private" && !this.#users.has(chat.id)) {
      this.#users.set(chat.id, {
        id: chat.id,
        is_bot: false,
        first_name: chat.first_name ?? "",
        ...(chat.last_name === undefined ? {} : { last_name: chat.last_name }),
        ...(chat.username === undefined ? {} : { username: chat.username }),
      });
    }
    return state;
  }

  /** The chat a method's `chat_id` names: "chat_id is empty" / "chat not found" as Telegram answers. */
  require(values: Record<string, unknown>): ChatState {
    const raw = values.chat_id;
    if (raw === undefined || raw === null || raw === "") throw badRequest("chat_id is empty");
    const id = typeof raw === "number" ? raw : Number(raw);
    const state = Number.isInteger(id) ? this.#chats.get(id) : undefined;
    if (state === undefined) throw badRequest("chat not found");
    return state;
  }

  /** Registers a forum topic: its root message (`forum_topic_created`) is made when the chat lacks it. */
  addForumTopic(chatId: number, threadId: number): void {
    const state = this.#chats.get(chatId);
    if (state === undefined) throw new Error(`addForumTopic: unknown chat ${chatId}`);
    state.topics.add(threadId);
    if (!state.messages.has(threadId)) {
      state.messages.set(threadId, {
        message_id: threadId,
        date: Math.floor(Date.now() / 1000),
        chat: state.chat,
        message_thread_id: threadId,
        forum_topic_created: { name: `topic ${threadId}`, icon_color: 7322096 },
      });
      state.nextMessageId = Math.max(state.nextMessageId, threadId + 1);
    }
  }

  /** Every message of a chat, by message id order. */
  messages(chatId: number): TgMessage[] {
    return [...(this.#chats.get(chatId)?.messages.values() ?? [])].sort(
      (a, b) => a.message_id - b.message_id,
    );
  }

  rememberUser(user: TgUser): void {
    this.#users.set(user.id, user);
  }

  knownUser(id: number): TgUser | undefined {
    return this.#users.get(id);
  }
}

/** A replied-to message is embedded without its own `reply_to_message` (Telegram nests one level only). */
export function stripReply(message: TgMessage): TgMessage {
  const { reply_to_message: _nested, ...rest } = message;
  return rest;
}
