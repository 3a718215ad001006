// The fake Telegram Bot API server: a real HTTP server on 127.0.0.1 answering `GET|POST /bot<token>/<method>`
// in Telegram's wire format, with the in-process control API tests drive it through (push inbound updates,
// read every call, inject faults). Owns sockets, the update queue and its long polling (offset confirmation,
// `allowed_updates`, the 409 when a second poller arrives), chats and their messages, and the methods an
// adapter uses: getMe, getUpdates, sendMessage, sendPhoto/Document/Audio/Voice/Video/Sticker,
// sendChatAction, editMessageText, deleteWebhook/setWebhook/getWebhookInfo. Text parsing lives in
// markdown-v2.ts / html.ts, body decoding in request-body.ts, builders in updates.ts.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { parseTelegramHtml } from "./html.ts";
import { EntityParseError, type ParsedText, parseMarkdownV2 } from "./markdown-v2.ts";
import {
  BadParamError,
  type CallParams,
  optionalBool,
  optionalInt,
  optionalObject,
  optionalString,
  optionalStringArray,
  readCallParams,
  type UploadedFile,
} from "./request-body.ts";
import type {
  TgChat,
  TgFile,
  TgMessage,
  TgMessageEntity,
  TgPhotoSize,
  TgResponse,
  TgUpdate,
  TgUpdateKind,
  TgUser,
} from "./types.ts";
import { detectEntities } from "./updates.ts";

export const TEXT_LIMIT = 4096;
export const CAPTION_LIMIT = 1024;
/** A forum's General topic: the Bot API refuses it as a message_thread_id (send without one instead). */
const GENERAL_TOPIC_ID = 1;

export type FaultKind =
  | "rate_limit"
  | "server_error"
  | "bad_gateway"
  | "reset"
  | "unauthorized"
  | "parse_entities";

export interface Fault {
  readonly kind: FaultKind;
  /** Only calls of this method (case-insensitive); default: any method. */
  readonly method?: string;
  /** How many matching calls fail (default 1). */
  readonly times?: number;
  /** `rate_limit` only: seconds in `parameters.retry_after` (default 1). */
  readonly retryAfter?: number;
}

/** One received call, in arrival order. */
export interface RecordedCall {
  readonly index: number;
  /** The method as Telegram resolves it (lower-cased name mapped to its canonical spelling). */
  readonly method: string;
  readonly httpMethod: string;
  readonly contentType: string;
  /** The decoded parameters (files excluded). */
  readonly params: Record<string, unknown>;
  readonly files: readonly UploadedFile[];
  /** `ok`, `error:<code>` or `reset`. */
  served: string;
  /** The JSON answer, when one was written. */
  response?: TgResponse;
  readonly receivedAt: number;
}

export interface InboundSpec {
  readonly chat: TgChat;
  /** The sender; omitted for channel posts. */
  readonly from?: TgUser;
  readonly text?: string;
  /** Entities besides the ones Telegram detects by itself (mentions, commands, URLs), e.g. `text_mention`. */
  readonly entities?: TgMessageEntity[];
  readonly caption?: string;
  /** A photo: the fake makes three sizes (90, 320, 1280 px wide) with fresh file ids. */
  readonly photo?: boolean;
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
  /** Every call except getUpdates, getMe and the webhook methods: what the bot sent. */
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

const METHODS = [
  "getMe",
  "getUpdates",
  "sendMessage",
  "sendPhoto",
  "sendDocument",
  "sendAudio",
  "sendVoice",
  "sendVideo",
  "sendSticker",
  "sendChatAction",
  "editMessageText",
  "deleteWebhook",
  "setWebhook",
  "getWebhookInfo",
  "getFile",
] as const;
type MethodName = (typeof METHODS)[number];
const METHOD_BY_LOWER = new Map<string, MethodName>(METHODS.map((name) => [name.toLowerCase(), name]));
const NOT_SENT = new Set<string>([
  "getUpdates",
  "getMe",
  "deleteWebhook",
  "setWebhook",
  "getWebhookInfo",
  "getFile",
]);

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

/** What each media method calls its file field, and the message field the file lands in. */
const MEDIA_METHODS: Record<
  string,
  { field: "photo" | "document" | "audio" | "voice" | "video" | "sticker" }
> = {
  sendPhoto: { field: "photo" },
  sendDocument: { field: "document" },
  sendAudio: { field: "audio" },
  sendVoice: { field: "voice" },
  sendVideo: { field: "video" },
  sendSticker: { field: "sticker" },
};

const ALL_DEFAULT_KINDS: readonly TgUpdateKind[] = [
  "message",
  "edited_message",
  "channel_post",
  "edited_channel_post",
  "callback_query",
];

/** An answer Telegram would give instead of a result. */
class ApiError extends Error {
  readonly code: number;
  readonly retryAfter: number | undefined;
  constructor(code: number, description: string, retryAfter?: number) {
    super(description);
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

function badRequest(description: string): ApiError {
  return new ApiError(400, `Bad Request: ${description}`);
}

interface Waiter {
  readonly res: http.ServerResponse;
  readonly wake: () => void;
  readonly conflict: () => void;
}

interface ChatState {
  chat: TgChat;
  nextMessageId: number;
  messages: Map<number, TgMessage>;
  topics: Set<number>;
}

interface StoredFile {
  file: TgFile;
  bytes?: Uint8Array;
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
  const calls: RecordedCall[] = [];
  const sent: RecordedCall[] = [];
  const chats = new Map<number, ChatState>();
  /** Every user the fake has seen (senders of pushed messages, private chats): the ones a mention can name. */
  const users = new Map<number, TgUser>();
  const files = new Map<string, StoredFile>();
  let queue: TgUpdate[] = [];
  let nextUpdateId = options.firstUpdateId ?? 1000;
  let allowedKinds: readonly TgUpdateKind[] = ALL_DEFAULT_KINDS;
  let waiter: Waiter | undefined;
  let webhookUrl = "";
  let faults: { fault: Fault; left: number }[] = [];
  let fileCounter = 0;
  const callListeners = new Set<(call: RecordedCall) => void>();
  const parkListeners = new Set<() => void>();
  const sockets = new Set<Socket>();
  let closed = false;

  function chatState(chat: TgChat): ChatState {
    const existing = chats.get(chat.id);
    if (existing !== undefined) {
      existing.chat = { ...existing.chat, ...chat };
      return existing;
    }
    const state: ChatState = { chat, nextMessageId: 1, messages: new Map(), topics: new Set() };
    chats.set(chat.id, state);
    if (chat.type === "private" && !users.has(chat.id)) {
      users.set(chat.id, {
        id: chat.id,
        is_bot: false,
        first_name: chat.first_name ?? "",
        ...(chat.last_name === undefined ? {} : { last_name: chat.last_name }),
        ...(chat.username === undefined ? {} : { username: chat.username }),
      });
    }
    return state;
  }

  function newFile(kind: string, spec: Partial<TgFile> = {}, bytes?: Uint8Array): TgFile {
    fileCounter += 1;
    const file: TgFile = {
      file_id: `${kind}-file-${fileCounter}`,
      file_unique_id: `${kind}-unique-${fileCounter}`,
      ...(bytes === undefined ? {} : { file_size: bytes.length }),
      ...spec,
    };
    files.set(file.file_id, bytes === undefined ? { file } : { file, bytes });
    return file;
  }

  function photoSizes(bytes?: Uint8Array): TgPhotoSize[] {
    return [90, 320, 1280].map((width) => {
      const file = newFile("photo", {}, bytes);
      return {
        file_id: file.file_id,
        file_unique_id: file.file_unique_id,
        width,
        height: Math.round((width * 3) / 4),
        file_size: bytes?.length ?? width * 40,
      };
    });
  }

  function wakeWaiter(): void {
    waiter?.wake();
  }

  function pushUpdate(update: Omit<TgUpdate, "update_id">): TgUpdate {
    const full: TgUpdate = { update_id: nextUpdateId++, ...update };
    queue.push(full);
    wakeWaiter();
    return full;
  }

  function pushMessage(spec: InboundSpec): TgUpdate & { message?: TgMessage; channel_post?: TgMessage } {
    const state = chatState(spec.chat);
    const isChannel = spec.chat.type === "channel";
    if (!isChannel && spec.from === undefined)
      throw new Error("pushMessage: `from` is required outside channels");
    if (spec.from !== undefined) users.set(spec.from.id, spec.from);
    if (spec.threadId !== undefined && state.chat.is_forum === true && !state.messages.has(spec.threadId)) {
      addForumTopic(spec.chat.id, spec.threadId);
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
    if (spec.photo === true) message.photo = photoSizes();
    if (spec.document !== undefined) message.document = newFile("document", spec.document);
    if (spec.audio !== undefined) message.audio = newFile("audio", spec.audio);
    if (spec.voice !== undefined) message.voice = newFile("voice", spec.voice);
    if (spec.video !== undefined) message.video = newFile("video", spec.video);
    if (spec.sticker !== undefined) message.sticker = newFile("sticker", spec.sticker);
    state.messages.set(messageId, message);
    const kind: TgUpdateKind = isChannel
      ? spec.edited === true
        ? "edited_channel_post"
        : "channel_post"
      : spec.edited === true
        ? "edited_message"
        : "message";
    return pushUpdate({ [kind]: message });
  }

  function addForumTopic(chatId: number, threadId: number): void {
    const state = chats.get(chatId);
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

  // -- methods ------------------------------------------------------------------------------------------

  function requireChat(values: Record<string, unknown>): ChatState {
    const raw = values.chat_id;
    if (raw === undefined || raw === null || raw === "") throw badRequest("chat_id is empty");
    const id = typeof raw === "number" ? raw : Number(raw);
    const state = Number.isInteger(id) ? chats.get(id) : undefined;
    if (state === undefined) throw badRequest("chat not found");
    return state;
  }

  /** The known user a `tg://user?id=` mention names; Telegram's server cannot mention a user it never saw. */
  function resolveMentions(parsed: ParsedText): ParsedText {
    if (!parsed.entities.some((entity) => entity.type === "text_mention")) return parsed;
    const entities = parsed.entities.map((entity) => {
      if (entity.type !== "text_mention" || entity.user === undefined) return entity;
      const known = users.get(entity.user.id);
      if (known === undefined) throw badRequest("user not found");
      return { ...entity, user: known };
    });
    return { text: parsed.text, entities };
  }

  function parseFormatted(text: string, parseMode: string | undefined): ParsedText {
    // the Bot API server lower-cases parse_mode: "HTML", "html", "MarkdownV2", "markdownv2" all work
    const mode = parseMode?.toLowerCase() ?? "";
    if (mode === "" || mode === "none" || text === "") return { text, entities: [] };
    try {
      if (mode === "markdownv2") return resolveMentions(parseMarkdownV2(text));
      if (mode === "html") return resolveMentions(parseTelegramHtml(text));
    } catch (error) {
      if (error instanceof EntityParseError) throw badRequest(`can't parse entities: ${error.message}`);
      throw error;
    }
    // legacy "Markdown" is real but deliberately not faked: adapters must use MarkdownV2 or HTML
    throw badRequest("unsupported parse_mode");
  }

  function threadAndReply(state: ChatState, values: Record<string, unknown>): Partial<TgMessage> {
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

  function storeBotMessage(state: ChatState, fields: Partial<TgMessage>): TgMessage {
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

  function sendMessage(values: Record<string, unknown>): TgMessage {
    const state = requireChat(values);
    const raw = optionalString(values, "text") ?? "";
    if (raw.trim() === "") throw badRequest("message text is empty");
    const parsed = parseFormatted(raw, optionalString(values, "parse_mode"));
    if (parsed.text.trim() === "") throw badRequest("message text is empty");
    if (parsed.text.length > TEXT_LIMIT) throw badRequest("message is too long");
    const extra = threadAndReply(state, values);
    return storeBotMessage(state, {
      ...extra,
      text: parsed.text,
      ...(parsed.entities.length > 0 ? { entities: parsed.entities } : {}),
    });
  }

  function sendMedia(method: string, params: CallParams): TgMessage {
    const { values } = params;
    const state = requireChat(values);
    const field = MEDIA_METHODS[method]?.field;
    if (field === undefined) throw new ApiError(404, "Not Found");
    const extra = threadAndReply(state, values);
    const reference = values[field];
    let upload: UploadedFile | undefined;
    let existing: TgFile | undefined;
    let url: string | undefined;
    if (reference === undefined) {
      upload = params.files.find((file) => file.field === field);
      if (upload === undefined) throw badRequest(`there is no ${field} in the request`);
    } else if (typeof reference === "string" && reference.startsWith("attach://")) {
      const name = reference.slice("attach://".length);
      upload = params.files.find((file) => file.field === name);
      if (upload === undefined) throw badRequest(`file "${name}" to attach not found`);
    } else if (typeof reference === "string" && /^https?:\/\/\S+$/i.test(reference)) {
      url = reference;
    } else if (typeof reference === "string" && files.has(reference)) {
      existing = files.get(reference)?.file;
    } else {
      throw badRequest("wrong file identifier/HTTP URL specified");
    }
    if (upload !== undefined && upload.bytes.length === 0) throw badRequest(`file must be non-empty`);
    const caption = optionalString(values, "caption");
    const fields: Partial<TgMessage> = { ...extra };
    if (caption !== undefined && caption !== "") {
      const parsed = parseFormatted(caption, optionalString(values, "parse_mode"));
      if (parsed.text.length > CAPTION_LIMIT) throw badRequest("message caption is too long");
      fields.caption = parsed.text;
      if (parsed.entities.length > 0) fields.caption_entities = parsed.entities;
    }
    const described: Partial<TgFile> =
      upload !== undefined
        ? { file_name: upload.fileName, mime_type: upload.mimeType }
        : url !== undefined
          ? { file_name: new URL(url).pathname.split("/").pop() ?? "" }
          : {};
    if (field === "photo") {
      fields.photo =
        existing === undefined ? photoSizes(upload?.bytes) : [{ ...existing, width: 1280, height: 960 }];
    } else {
      fields[field] = existing ?? newFile(field, described, upload?.bytes);
    }
    return storeBotMessage(state, fields);
  }

  function editMessageText(values: Record<string, unknown>): TgMessage {
    const state = requireChat(values);
    const messageId = optionalInt(values, "message_id");
    const message = messageId === undefined ? undefined : state.messages.get(messageId);
    if (message === undefined) throw badRequest("message to edit not found");
    if (message.from?.id !== bot.id) throw badRequest("message can't be edited");
    if (message.text === undefined) throw badRequest("there is no text in the message to edit");
    const raw = optionalString(values, "text") ?? "";
    if (raw.trim() === "") throw badRequest("message text is empty");
    const parsed = parseFormatted(raw, optionalString(values, "parse_mode"));
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

  function sendChatAction(values: Record<string, unknown>): true {
    const state = requireChat(values);
    const action = optionalString(values, "action");
    if (action === undefined || !CHAT_ACTIONS.has(action))
      throw badRequest("wrong parameter action in request");
    threadAndReply(state, values);
    return true;
  }

  /** Confirms (drops) updates below `offset`; negative: keeps only the last `-offset` updates. */
  function confirm(offset: number | undefined): void {
    if (offset === undefined || offset === 0) return;
    if (offset < 0) queue = queue.slice(Math.max(0, queue.length + offset));
    else queue = queue.filter((update) => update.update_id >= offset);
  }

  function deliverable(limit: number): TgUpdate[] {
    // updates of kinds the bot did not ask for are dropped, as Telegram never stores them for the bot
    queue = queue.filter((update) => allowedKinds.some((kind) => update[kind] !== undefined));
    return queue.slice(0, limit);
  }

  function getUpdates(values: Record<string, unknown>, res: http.ServerResponse, call: RecordedCall): void {
    if (webhookUrl !== "") {
      throw new ApiError(
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    }
    const offset = optionalInt(values, "offset");
    const limit = Math.min(100, Math.max(1, optionalInt(values, "limit") ?? 100));
    const timeout = Math.max(0, optionalInt(values, "timeout") ?? 0);
    const allowed = optionalStringArray(values, "allowed_updates");
    if (allowed !== undefined) {
      allowedKinds =
        allowed.length === 0
          ? ALL_DEFAULT_KINDS
          : allowed.filter((kind): kind is TgUpdateKind => ALL_DEFAULT_KINDS.includes(kind as TgUpdateKind));
    }
    waiter?.conflict();
    confirm(offset);
    const ready = deliverable(limit);
    if (ready.length > 0 || timeout === 0) {
      answer(res, call, { ok: true, result: ready });
      return;
    }
    const finish = (): void => {
      clearTimeout(timer);
      if (waiter === self) waiter = undefined;
      res.off("close", onClose);
    };
    const onClose = (): void => {
      // the client went away (aborted): nothing was delivered, nothing is confirmed
      finish();
      call.served = "aborted";
    };
    const self: Waiter = {
      res,
      wake: () => {
        const woken = deliverable(limit);
        if (woken.length === 0) return;
        finish();
        answer(res, call, { ok: true, result: woken });
      },
      conflict: () => {
        finish();
        answer(res, call, {
          ok: false,
          error_code: 409,
          description:
            "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
        });
      },
    };
    const timer = setTimeout(() => {
      finish();
      answer(res, call, { ok: true, result: [] });
    }, timeout * 1000);
    res.on("close", onClose);
    waiter = self;
    for (const listener of [...parkListeners]) listener();
  }

  function getFile(values: Record<string, unknown>): TgFile & { file_path: string } {
    const id = optionalString(values, "file_id");
    const stored = id === undefined ? undefined : files.get(id);
    if (stored === undefined) throw badRequest("invalid file_id");
    return { ...stored.file, file_path: `files/${stored.file.file_id}` };
  }

  // -- HTTP -----------------------------------------------------------------------------------------------

  function answer(res: http.ServerResponse, call: RecordedCall, body: TgResponse): void {
    call.served = body.ok ? "ok" : `error:${body.error_code}`;
    call.response = body;
    if (!res.headersSent && !res.destroyed) {
      const text = JSON.stringify(body);
      res.writeHead(body.ok ? 200 : body.error_code, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    }
    for (const listener of [...callListeners]) listener(call);
  }

  function takeFault(method: string): Fault | undefined {
    const index = faults.findIndex(
      (entry) =>
        entry.fault.method === undefined || entry.fault.method.toLowerCase() === method.toLowerCase(),
    );
    const entry = faults[index];
    if (entry === undefined) return undefined;
    entry.left -= 1;
    if (entry.left <= 0) faults = faults.filter((_, i) => i !== index);
    return entry.fault;
  }

  function serveFault(fault: Fault, res: http.ServerResponse, call: RecordedCall): void {
    switch (fault.kind) {
      case "rate_limit": {
        const retryAfter = fault.retryAfter ?? 1;
        answer(res, call, {
          ok: false,
          error_code: 429,
          description: `Too Many Requests: retry after ${retryAfter}`,
          parameters: { retry_after: retryAfter },
        });
        return;
      }
      case "server_error":
        answer(res, call, { ok: false, error_code: 500, description: "Internal Server Error" });
        return;
      case "unauthorized":
        answer(res, call, { ok: false, error_code: 401, description: "Unauthorized" });
        return;
      case "parse_entities":
        answer(res, call, {
          ok: false,
          error_code: 400,
          description:
            "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0",
        });
        return;
      case "bad_gateway": {
        // what Telegram's nginx front answers when the backend is down: HTML, not the JSON envelope
        call.served = "error:502";
        const html =
          "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n";
        res.writeHead(502, { "content-type": "text/html", "content-length": Buffer.byteLength(html) });
        res.end(html);
        for (const listener of [...callListeners]) listener(call);
        return;
      }
      case "reset":
        call.served = "reset";
        res.socket?.destroy();
        for (const listener of [...callListeners]) listener(call);
        return;
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = /^\/bot([^/]+)\/([A-Za-z]+)\/?$/.exec(url.pathname);
    let params: CallParams;
    try {
      params = await readCallParams(req, url.searchParams);
    } catch (error) {
      params = { values: {}, files: [], contentType: req.headers["content-type"] ?? "" };
      if (match === null || !(error instanceof BadParamError)) throw error;
      const call = record(match[2] ?? "", req, params);
      answer(res, call, { ok: false, error_code: 400, description: error.message });
      return;
    }
    if (match === null) {
      const call = record("", req, params);
      answer(res, call, { ok: false, error_code: 404, description: "Not Found" });
      return;
    }
    const [, requestToken = "", rawMethod = ""] = match;
    const method = METHOD_BY_LOWER.get(rawMethod.toLowerCase());
    const call = record(method ?? rawMethod, req, params);
    const fault = takeFault(call.method);
    if (fault !== undefined) return serveFault(fault, res, call);
    if (requestToken !== token) {
      answer(res, call, { ok: false, error_code: 401, description: "Unauthorized" });
      return;
    }
    try {
      const result = run(method, params, res, call);
      if (result !== undefined) answer(res, call, { ok: true, result: result.value });
    } catch (error) {
      if (error instanceof ApiError) {
        answer(res, call, {
          ok: false,
          error_code: error.code,
          description: error.message,
          ...(error.retryAfter === undefined ? {} : { parameters: { retry_after: error.retryAfter } }),
        });
        return;
      }
      if (error instanceof BadParamError) {
        answer(res, call, { ok: false, error_code: 400, description: error.message });
        return;
      }
      throw error;
    }
  }

  /** Runs a method; undefined when the method answers by itself later (a waiting long poll). */
  function run(
    method: MethodName | undefined,
    params: CallParams,
    res: http.ServerResponse,
    call: RecordedCall,
  ): { value: unknown } | undefined {
    const { values } = params;
    switch (method) {
      case "getMe":
        // every field of today's UserFromGetMe (@grammyjs/types 5); the optional supports_guest_queries is
        // left out, as Telegram leaves out optional booleans that are false
        return {
          value: {
            ...bot,
            can_join_groups: true,
            can_read_all_group_messages: false,
            supports_inline_queries: false,
            can_connect_to_business: false,
            has_main_web_app: false,
            has_topics_enabled: false,
            allows_users_to_create_topics: false,
            can_manage_bots: false,
            supports_join_request_queries: false,
          },
        };
      case "getUpdates":
        getUpdates(values, res, call);
        return undefined;
      case "sendMessage":
        return { value: sendMessage(values) };
      case "sendPhoto":
      case "sendDocument":
      case "sendAudio":
      case "sendVoice":
      case "sendVideo":
      case "sendSticker":
        return { value: sendMedia(method, params) };
      case "sendChatAction":
        return { value: sendChatAction(values) };
      case "editMessageText":
        return { value: editMessageText(values) };
      case "deleteWebhook":
        webhookUrl = "";
        if (optionalBool(values, "drop_pending_updates") === true) queue = [];
        return { value: true };
      case "setWebhook":
        webhookUrl = optionalString(values, "url") ?? "";
        return { value: true };
      case "getWebhookInfo":
        return {
          value: { url: webhookUrl, has_custom_certificate: false, pending_update_count: queue.length },
        };
      case "getFile":
        return { value: getFile(values) };
      default:
        throw new ApiError(404, "Not Found");
    }
  }

  function record(method: string, req: http.IncomingMessage, params: CallParams): RecordedCall {
    const call: RecordedCall = {
      index: calls.length,
      method,
      httpMethod: req.method ?? "GET",
      contentType: params.contentType,
      params: params.values,
      files: params.files,
      served: "pending",
      receivedAt: Date.now(),
    };
    calls.push(call);
    if (!NOT_SENT.has(method)) sent.push(call);
    return call;
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            ok: false,
            error_code: 500,
            description: `Internal Server Error: ${String(error)}`,
          }),
        );
      }
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    token,
    bot,
    calls,
    sent,
    pushUpdate,
    pushMessage,
    addChat: (chat) => void chatState(chat),
    addForumTopic,
    messages: (chatId) =>
      [...(chats.get(chatId)?.messages.values() ?? [])].sort((a, b) => a.message_id - b.message_id),
    pendingUpdates: () => [...queue],
    failNext: (fault) => {
      faults.push({ fault, left: fault.times ?? 1 });
    },
    waitForCall: (method, predicate) =>
      new Promise((resolve) => {
        const listener = (call: RecordedCall): void => {
          if (call.method.toLowerCase() !== method.toLowerCase()) return;
          if (predicate !== undefined && !predicate(call)) return;
          callListeners.delete(listener);
          resolve(call);
        };
        callListeners.add(listener);
      }),
    waitForLongPoll: () =>
      new Promise<void>((resolve) => {
        if (waiter !== undefined) return resolve();
        const listener = (): void => {
          parkListeners.delete(listener);
          resolve();
        };
        parkListeners.add(listener);
      }),
    setWebhook: (url) => {
      webhookUrl = url;
    },
    clearCalls: () => {
      calls.length = 0;
      sent.length = 0;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      waiter = undefined;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A replied-to message is embedded without its own `reply_to_message` (Telegram nests one level only). */
function stripReply(message: TgMessage): TgMessage {
  const { reply_to_message: _nested, ...rest } = message;
  return rest;
}
