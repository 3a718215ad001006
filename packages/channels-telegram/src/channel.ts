// `createTelegramChannel`: the Telegram `ChannelAdapter`. Owns the adapter's lifecycle (getMe to learn the
// bot and check the token, deleteWebhook so long polling may run, the polling loop) and outbound delivery:
// text formatted as MarkdownV2 (or HTML) and cut at the limit measured on the formatted text, retried as HTML
// and then as plain text when Telegram answers "can't parse entities"; replies via `reply_parameters` on the
// first message; topics via `message_thread_id`; media by URL, file id or upload with captions up to 1024;
// typing; edits; at most `maxMessagesPerReply` messages per send, past it the whole reply as `reply.md`
// (channels-core's `planReplyMessages` decides). Does not own HTTP and retries (bot-api.ts), the loop's guarantees (polling.ts), the
// dialects (format.ts) or normalisation (inbound.ts).
import {
  type ChannelAdapter,
  type ChannelCapabilities,
  ChannelError,
  type ChannelStartOptions,
  type InboundHandler,
  type InboundMessage,
  type MediaItem,
  type OutboundMessage,
  type OutboundTarget,
  planReplyMessages,
  resolveMaxMessagesPerReply,
  type SendResult,
  type SentMessage,
  textMessageBudget,
} from "@agent-kernel/channels-core";
import type { KernelConfig } from "@agent-kernel/config";
import {
  CHANNEL_ID,
  isParseEntitiesError,
  type RetryPolicy,
  TelegramBotApi,
  type UploadFile,
} from "./bot-api.ts";
import {
  chunkForTelegram,
  TELEGRAM_CAPTION_LIMIT,
  TELEGRAM_TEXT_LIMIT,
  type TelegramChunk,
} from "./chunk.ts";
import { formatForTelegram, type TelegramParseMode } from "./format.ts";
import {
  type BotIdentity,
  normalizeUpdate,
  type TelegramUpdate,
  TelegramUpdateError,
  type TelegramUser,
} from "./inbound.ts";
import { DEFAULT_MAX_IMAGE_BYTES, downloadInboundImages } from "./inbound-images.ts";
import { memoryOffsetStore, type OffsetStore } from "./offset-store.ts";
import { loadPollPosition, runPolling } from "./polling.ts";

export type TelegramChannelConfig = NonNullable<KernelConfig["channels"]["telegram"]>;

export interface TelegramChannelOptions {
  /** From @BotFather (`channels.telegram.botToken`). */
  readonly token: string;
  /** Default `default`. */
  readonly accountId?: string;
  /** Default `https://api.telegram.org`; tests point it at the local fake. */
  readonly apiBaseUrl?: string;
  /** The long-poll wait Telegram holds a getUpdates open for (default 30 s). */
  readonly pollTimeoutSeconds?: number;
  /** Formatted characters per message (default 4000, at most Telegram's 4096). */
  readonly textChunkLimit?: number;
  /**
   * Messages one reply's text may become (`channels.telegram.maxMessagesPerReply`, default 10); past it the
   * whole reply is sent as `reply.md` after the first limit - 1 messages (channels-core `planReplyMessages`).
   */
  readonly maxMessagesPerReply?: number;
  /** Default `MarkdownV2`; `HTML` is also the first fallback of MarkdownV2. */
  readonly parseMode?: TelegramParseMode;
  /** Where the polling position survives restarts (default: memory, i.e. it does not). */
  readonly offsetStore?: OffsetStore;
  /** Default `["message", "channel_post"]`. */
  readonly allowedUpdates?: readonly string[];
  readonly retry?: RetryPolicy;
  /** Backoff between failed polls and failed handler calls (default 1 s doubling to 30 s). */
  readonly pollBackoff?: { readonly baseDelayMs?: number; readonly maxDelayMs?: number };
  /** Handler attempts per update before it is reported and skipped (default 3). */
  readonly handlerAttempts?: number;
  /**
   * Inbound pictures (the largest photo size, image documents) are downloaded into `InboundMessage.images`
   * up to this size each (default 6 MiB, the kernel's cap); 0 downloads none.
   */
  readonly maxImageBytes?: number;
  /** Polling problems (network, 409, 401, store failures, skipped updates). Default: `console.error`. */
  readonly onError?: (error: Error) => void;
}

/** The adapter, with the bot identity learned at `start()` and a per-call abort signal on sends. */
export interface TelegramChannel extends ChannelAdapter {
  /** The bot (from getMe) once started. */
  readonly bot: TelegramUser | undefined;
  send(message: OutboundMessage, options?: { readonly signal?: AbortSignal }): Promise<SendResult>;
  sendTyping(target: OutboundTarget, options?: { readonly signal?: AbortSignal }): Promise<void>;
  edit(
    target: OutboundTarget,
    messageId: string,
    text: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<void>;
  /** Resolves when the polling loop has ended (after `stop()`, a rejected token or a store failure). */
  readonly stopped: Promise<void>;
}

/** The adapter options `channels.telegram` gives (token, base URL, poll timeout, text and message limits). */
export function telegramOptionsFromConfig(
  config: TelegramChannelConfig,
  extra: Omit<
    TelegramChannelOptions,
    "token" | "apiBaseUrl" | "pollTimeoutSeconds" | "textChunkLimit" | "maxMessagesPerReply"
  > = {},
): TelegramChannelOptions {
  if (config.botToken === undefined) {
    throw new ChannelError(CHANNEL_ID, "channels.telegram.botToken is not set (use ${TELEGRAM_BOT_TOKEN})", {
      retryable: false,
    });
  }
  return {
    ...extra,
    token: config.botToken,
    textChunkLimit: config.textChunkLimit,
    maxMessagesPerReply: config.maxMessagesPerReply,
    ...(config.apiBaseUrl === undefined ? {} : { apiBaseUrl: config.apiBaseUrl }),
    ...(config.pollTimeoutSeconds === undefined ? {} : { pollTimeoutSeconds: config.pollTimeoutSeconds }),
  };
}

interface TgSentMessage {
  readonly message_id: number;
  readonly message_thread_id?: number;
  readonly chat: { readonly id: number };
}

const MEDIA_METHODS: Record<MediaItem["kind"], { method: string; field: string }> = {
  image: { method: "sendPhoto", field: "photo" },
  audio: { method: "sendAudio", field: "audio" },
  voice: { method: "sendVoice", field: "voice" },
  video: { method: "sendVideo", field: "video" },
  document: { method: "sendDocument", field: "document" },
  sticker: { method: "sendSticker", field: "sticker" },
  other: { method: "sendDocument", field: "document" },
};

export function createTelegramChannel(options: TelegramChannelOptions): TelegramChannel {
  const accountId = options.accountId ?? "default";
  const parseMode = options.parseMode ?? "MarkdownV2";
  const textLimit = Math.min(TELEGRAM_TEXT_LIMIT, options.textChunkLimit ?? 4000);
  let maxMessagesPerReply: number;
  try {
    maxMessagesPerReply = resolveMaxMessagesPerReply(options.maxMessagesPerReply);
  } catch (error) {
    throw new ChannelError(CHANNEL_ID, (error as Error).message, { retryable: false });
  }
  const pollTimeoutSeconds = options.pollTimeoutSeconds ?? 30;
  if (!Number.isInteger(pollTimeoutSeconds) || pollTimeoutSeconds < 0) {
    throw new ChannelError(
      CHANNEL_ID,
      `pollTimeoutSeconds must be a non-negative integer (got ${pollTimeoutSeconds})`,
      {
        retryable: false,
      },
    );
  }
  const api = new TelegramBotApi({
    token: options.token,
    ...(options.apiBaseUrl === undefined ? {} : { apiBaseUrl: options.apiBaseUrl }),
    ...(options.retry === undefined ? {} : { retry: options.retry }),
  });
  const onError = options.onError ?? ((error: Error) => console.error(error));
  const store = options.offsetStore ?? memoryOffsetStore();

  let bot: TelegramUser | undefined;
  let controller: AbortController | undefined;
  let loop: Promise<void> = Promise.resolve();
  let resolveStopped: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });

  const capabilities: ChannelCapabilities = {
    threads: true,
    edits: true,
    typing: true,
    media: true,
    reactions: false,
    fileUploads: true,
    maxTextLength: TELEGRAM_TEXT_LIMIT,
    dialect: parseMode === "MarkdownV2" ? "telegram-markdown-v2" : "telegram-html",
  };

  function routing(target: OutboundTarget): Record<string, unknown> {
    return {
      chat_id: target.chatId,
      ...(target.threadId === undefined ? {} : { message_thread_id: Number(target.threadId) }),
    };
  }

  function replyTo(target: OutboundTarget): Record<string, unknown> {
    if (target.replyToMessageId === undefined) return {};
    // the reply is sent even if the original was deleted meanwhile
    return {
      reply_parameters: { message_id: Number(target.replyToMessageId), allow_sending_without_reply: true },
    };
  }

  /** Sends formatted text, falling back to HTML then plain text on "can't parse entities". */
  async function sendWithFallback(
    chunk: TelegramChunk,
    send: (text: string, mode: TelegramParseMode | undefined) => Promise<TgSentMessage>,
  ): Promise<TgSentMessage> {
    try {
      return await send(chunk.formatted, parseMode);
    } catch (error) {
      if (!isParseEntitiesError(error)) throw error;
    }
    if (parseMode === "MarkdownV2") {
      const html = formatForTelegram(chunk.markdown, "HTML");
      if (html.length <= textLimit) {
        try {
          return await send(html, "HTML");
        } catch (error) {
          if (!isParseEntitiesError(error)) throw error;
        }
      }
    }
    return send(chunk.markdown, undefined);
  }

  function sent(result: TgSentMessage, target: OutboundTarget): SentMessage {
    const threadId =
      result.message_thread_id === undefined ? target.threadId : String(result.message_thread_id);
    return {
      messageId: String(result.message_id),
      chatId: String(result.chat.id),
      ...(threadId === undefined ? {} : { threadId }),
    };
  }

  function mediaReference(
    item: MediaItem,
    field: string,
  ): { value?: string; files?: Record<string, UploadFile> } {
    const located = [item.url, item.path, item.data, item.fileId].filter(
      (value) => value !== undefined,
    ).length;
    if (located === 0) {
      throw new ChannelError(CHANNEL_ID, `a ${item.kind} media item needs a url, path, data or fileId`, {
        retryable: false,
      });
    }
    if (item.url !== undefined) return { value: item.url };
    if (item.fileId !== undefined && item.path === undefined && item.data === undefined)
      return { value: item.fileId };
    const upload: UploadFile = {
      ...(item.path === undefined ? {} : { path: item.path }),
      ...(item.data === undefined ? {} : { data: item.data }),
      ...(item.fileName === undefined ? {} : { fileName: item.fileName }),
      ...(item.mimeType === undefined ? {} : { mimeType: item.mimeType }),
    };
    return { files: { [field]: upload } };
  }

  async function sendMedia(
    item: MediaItem,
    caption: TelegramChunk | undefined,
    target: OutboundTarget,
    first: boolean,
    signal: AbortSignal | undefined,
  ): Promise<TgSentMessage> {
    const { method, field } = MEDIA_METHODS[item.kind];
    const reference = mediaReference(item, field);
    const base = {
      ...routing(target),
      ...(first ? replyTo(target) : {}),
      ...(reference.value === undefined ? {} : { [field]: reference.value }),
    };
    const callOptions = {
      ...(signal === undefined ? {} : { signal }),
      ...(reference.files === undefined ? {} : { files: reference.files }),
    };
    if (caption === undefined) return api.call<TgSentMessage>(method, base, callOptions);
    return sendWithFallback(caption, (text, mode) =>
      api.call<TgSentMessage>(
        method,
        { ...base, caption: text, ...(mode === undefined ? {} : { parse_mode: mode }) },
        callOptions,
      ),
    );
  }

  /** A caption that fits in one formatted piece of ≤ 1024 characters, else undefined (sent as text). */
  function captionChunk(markdown: string | undefined): TelegramChunk | undefined {
    if (markdown === undefined || markdown.trim() === "") return undefined;
    const chunks = chunkForTelegram(markdown, TELEGRAM_CAPTION_LIMIT, parseMode);
    return chunks.length === 1 ? chunks[0] : undefined;
  }

  async function send(
    message: OutboundMessage,
    callOptions: { readonly signal?: AbortSignal } = {},
  ): Promise<SendResult> {
    const { target } = message;
    const signal = callOptions.signal;
    const messages: SentMessage[] = [];
    let first = true;
    const media = message.media ?? [];
    let text = message.text ?? "";
    // captions too long for their item follow as text, in item order, before the reply's text
    const overflowCaptions: string[] = [];
    // media first; the reply's text rides as the first item's caption when it fits (as OpenClaw does)
    for (const [index, item] of media.entries()) {
      let caption = captionChunk(item.caption);
      const ownCaption = item.caption ?? "";
      const overflow = ownCaption.trim() !== "" && caption === undefined;
      if (index === 0 && caption === undefined && !overflow) {
        caption = captionChunk(text);
        if (caption !== undefined) text = "";
      }
      const result = await sendMedia(item, caption, target, first, signal);
      messages.push(sent(result, target));
      first = false;
      if (overflow) overflowCaptions.push(ownCaption);
    }
    text = [...overflowCaptions, text].filter((part) => part !== "").join("\n\n");
    const sendChunk = async (chunk: TelegramChunk): Promise<void> => {
      const base = {
        ...routing(target),
        ...(first ? replyTo(target) : {}),
        // a streamed block that is not the final reply arrives without a notification sound
        ...(message.isBlock === true ? { disable_notification: true } : {}),
      };
      const result = await sendWithFallback(chunk, (formatted, mode) =>
        api.call<TgSentMessage>(
          "sendMessage",
          { ...base, text: formatted, ...(mode === undefined ? {} : { parse_mode: mode }) },
          signal === undefined ? {} : { signal },
        ),
      );
      messages.push(sent(result, target));
      first = false;
    };
    const limit = resolveMaxMessagesPerReply(maxMessagesPerReply, message.maxMessages);
    const plan = planReplyMessages({
      text,
      chunks: chunkForTelegram(text, textLimit, parseMode),
      maxMessages: textMessageBudget(limit, messages.length),
      canAttachFiles: true,
      sizeOf: (chunk) => chunk.markdown.length,
    });
    for (const chunk of plan.chunks) await sendChunk(chunk);
    if (plan.kind === "attached") {
      const result = await sendMedia(plan.file, captionChunk(plan.file.caption), target, first, signal);
      messages.push(sent(result, target));
    } else if (plan.kind === "truncated") {
      for (const chunk of chunkForTelegram(plan.notice, textLimit, parseMode)) await sendChunk(chunk);
    }
    return plan.kind === "all" ? { messages } : { messages, limited: plan.report };
  }

  async function deliver(
    update: TelegramUpdate,
    handler: InboundHandler,
    identity: BotIdentity,
    signal: AbortSignal,
  ): Promise<void> {
    let message: InboundMessage | undefined;
    try {
      message = normalizeUpdate(update, identity, accountId);
    } catch (error) {
      // A malformed update would fail the same way on every retry: report it and let the offset pass it.
      if (error instanceof TelegramUpdateError) {
        onError(error);
        return;
      }
      throw error;
    }
    if (message === undefined) return;
    const maxImageBytes = options.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES;
    if (maxImageBytes > 0 && message.media.length > 0) {
      // fetched only if the gateway lets the message in (a stranger's photos are never downloaded)
      const media = message.media;
      message = {
        ...message,
        loadImages: () => downloadInboundImages(api, media, { maxBytes: maxImageBytes, signal, onError }),
      };
    }
    await handler(message);
  }

  return {
    id: CHANNEL_ID,
    accountId,
    capabilities,
    get bot() {
      return bot;
    },
    stopped,

    async start(startOptions: ChannelStartOptions): Promise<void> {
      if (controller !== undefined)
        throw new ChannelError(CHANNEL_ID, "start() was already called", { retryable: false });
      controller = new AbortController();
      const signal = controller.signal;
      startOptions.signal?.addEventListener("abort", () => controller?.abort(startOptions.signal?.reason), {
        once: true,
      });
      let position: Awaited<ReturnType<typeof loadPollPosition>>;
      try {
        bot = await api.call<TelegramUser>("getMe", {}, { signal });
        position = await loadPollPosition(store, bot.id, onError);
        // long polling and a webhook exclude each other; keep pending updates (they are ours to handle)
        await api.call("deleteWebhook", { drop_pending_updates: false }, { signal });
      } catch (error) {
        resolveStopped();
        throw error;
      }
      const identity: BotIdentity = {
        id: bot.id,
        ...(bot.username === undefined ? {} : { username: bot.username }),
      };
      loop = runPolling(
        {
          api,
          store,
          timeoutSeconds: pollTimeoutSeconds,
          allowedUpdates: options.allowedUpdates ?? ["message", "channel_post"],
          deliver: (update) => deliver(update, startOptions.onMessage, identity, signal),
          onError,
          signal,
          handlerAttempts: Math.max(1, options.handlerAttempts ?? 3),
          backoff: {
            baseDelayMs: options.pollBackoff?.baseDelayMs ?? 1000,
            maxDelayMs: options.pollBackoff?.maxDelayMs ?? 30_000,
          },
        },
        position,
      )
        .catch((error: unknown) => onError(error instanceof Error ? error : new Error(String(error))))
        .finally(resolveStopped);
    },

    async stop(): Promise<void> {
      if (controller === undefined) {
        resolveStopped();
        return;
      }
      controller.abort();
      await loop;
    },

    send,

    async sendTyping(target, callOptions = {}): Promise<void> {
      await api.call(
        "sendChatAction",
        { ...routing(target), action: "typing" },
        callOptions.signal === undefined ? {} : { signal: callOptions.signal },
      );
    },

    async edit(target, messageId, text, callOptions = {}): Promise<void> {
      // an edited message keeps one message: the first piece (a streamed draft rarely outgrows it)
      const chunk = chunkForTelegram(text, textLimit, parseMode)[0];
      if (chunk === undefined) {
        throw new ChannelError(CHANNEL_ID, "edit: the new text is empty", { retryable: false });
      }
      try {
        await sendWithFallback(chunk, (formatted, mode) =>
          api.call<TgSentMessage>(
            "editMessageText",
            {
              chat_id: target.chatId,
              message_id: Number(messageId),
              text: formatted,
              ...(mode === undefined ? {} : { parse_mode: mode }),
            },
            callOptions.signal === undefined ? {} : { signal: callOptions.signal },
          ),
        );
      } catch (error) {
        // editing to the same text is success for the caller (a draft that did not change)
        if (error instanceof ChannelError && /message is not modified/i.test(error.message)) return;
        throw error;
      }
    },
  };
}
