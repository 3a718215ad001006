// The fake Telegram Bot API server's face: `startFakeTelegram` wires the parts together and returns the control
// API tests drive it through (push inbound updates, read every call, inject faults). Owns the options, the
// control API and the bot's identity; the parts own the rest — the HTTP front and method table
// (http-front.ts), the call record (call-log.ts), faults (faults.ts), chats, users and topics (chat-store.ts),
// inbound messages (inbound-messages.ts), the update queue and long polling (update-queue.ts), text methods
// (message-methods.ts, formatted-text.ts), media and files (file-methods.ts, file-store.ts). Text parsing lives
// in markdown-v2.ts / html.ts / links.ts, body decoding in request-body.ts / multipart.ts, builders in
// updates.ts.
import { CallLog, type RecordedCall } from "./call-log.ts";
import { ChatStore } from "./chat-store.ts";
import { type Fault, FaultQueue } from "./faults.ts";
import { FileStore } from "./file-store.ts";
import { listenBotApi } from "./http-front.ts";
import { type InboundSpec, pushInboundMessage } from "./inbound-messages.ts";
import type { TgChat, TgMessage, TgUpdate, TgUser } from "./types.ts";
import { UpdateQueue } from "./update-queue.ts";

export type { RecordedCall } from "./call-log.ts";
export type { Fault, FaultKind } from "./faults.ts";
export type { InboundSpec } from "./inbound-messages.ts";
export { CAPTION_LIMIT, TEXT_LIMIT } from "./message-methods.ts";

export interface FakeTelegramOptions {
  /** The bot token the server accepts (default `123456:TEST-token`). */
  token?: string;
  /** The bot's own user (default id 123456, username `kernel_test_bot`). */
  bot?: Partial<TgUser>;
  /** Default 0: a free port. */
  port?: number;
  /** The first update id (default 1000). */
  firstUpdateId?: number;
}

export interface FakeTelegram {
  /** `http://127.0.0.1:<port>`: the Bot API base URL (the client appends `/bot<token>/<method>`). */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  readonly bot: TgUser;
  /** Every call received (getUpdates included), arrival order; a live array. */
  readonly calls: readonly RecordedCall[];
  /** Every call except getUpdates, getMe, getFile and the webhook methods: what the bot sent. */
  readonly sent: readonly RecordedCall[];
  /** Appends a raw update (the id is assigned) and wakes a waiting long poll. */
  pushUpdate(update: Omit<TgUpdate, "update_id">): TgUpdate;
  /** Builds a user message (or channel post for a channel chat), stores it in its chat and pushes its update. */
  pushMessage(spec: InboundSpec): TgUpdate & { message?: TgMessage; channel_post?: TgMessage };
  /** Makes a chat known (the bot can send to it) without any message. */
  addChat(chat: TgChat): void;
  /** Registers a forum topic (the thread id the bot may post into). */
  addForumTopic(chatId: number, threadId: number): void;
  /** Every message of a chat (users' and the bot's), by message id order; the bot's carry parsed entities. */
  messages(chatId: number): TgMessage[];
  /** Updates not yet confirmed by a getUpdates offset. */
  pendingUpdates(): readonly TgUpdate[];
  /** The next `times` calls (of `method`) fail as `kind`. Faults queue in order. */
  failNext(fault: Fault): void;
  /** Resolves with the next call of `method` that arrives (and is answered) after this call. */
  waitForCall(method: string, predicate?: (call: RecordedCall) => boolean): Promise<RecordedCall>;
  /** Resolves once a getUpdates long poll is parked waiting for an update (at once if one is). */
  waitForLongPoll(): Promise<void>;
  /** Sets a webhook: getUpdates answers 409 until deleteWebhook. */
  setWebhook(url: string): void;
  clearCalls(): void;
  /** Stops listening and destroys every connection (waiting long polls included). Idempotent. */
  close(): Promise<void>;
}

export async function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const token = options.token ?? "123456:TEST-token";
  const bot: TgUser = {
    id: 123456,
    is_bot: true,
    first_name: "Kernel Test Bot",
    username: "kernel_test_bot",
    ...options.bot,
  };
  const log = new CallLog();
  const faults = new FaultQueue();
  const chats = new ChatStore();
  const files = new FileStore();
  const updates = new UpdateQueue(options.firstUpdateId ?? 1000, log);
  const front = await listenBotApi({ token, bot, log, faults, chats, files, updates }, options.port ?? 0);
  const port = front.port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    token,
    bot,
    calls: log.calls,
    sent: log.sent,
    pushUpdate: (update) => updates.push(update),
    pushMessage: (spec) => pushInboundMessage(spec, { chats, files, updates }),
    addChat: (chat) => void chats.ensure(chat),
    addForumTopic: (chatId, threadId) => chats.addForumTopic(chatId, threadId),
    messages: (chatId) => chats.messages(chatId),
    pendingUpdates: () => updates.pending(),
    failNext: (fault) => faults.add(fault),
    waitForCall: (method, predicate) => log.waitForCall(method, predicate),
    waitForLongPoll: () => updates.waitForLongPoll(),
    setWebhook: (url) => updates.setWebhook(url),
    clearCalls: () => log.clear(),
    close: async () => {
      updates.forgetParkedPoll();
      await front.close();
    },
  };
}
