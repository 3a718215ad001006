// The channel contract: what every adapter (telegram, slack, webchat, test channels) implements and what the
// gateway (apps/auto-reply) relies on. Owns the shapes only: inbound messages, outbound payloads, send results,
// capabilities and the adapter lifecycle. Does not own access control, routing, chunking or formatting (the
// other channels-core modules) nor any transport (the adapters).
import type { ReplyLimitReport } from "./reply-limit.ts";

/** `direct`: a one-to-one chat; `group`: a group chat; `channel`: a broadcast/public channel (Slack channel, Telegram channel). */
export type ChatType = "direct" | "group" | "channel";

/** The kind of a media item, as the channels tell them apart. */
export type MediaKind = "image" | "audio" | "voice" | "video" | "document" | "sticker" | "other";

/** A media item received or to send. Exactly one of `url`, `path` or `data` locates the bytes. */
export interface MediaItem {
  readonly kind: MediaKind;
  /** A URL the receiver can fetch (outbound) or the channel's download URL (inbound). */
  readonly url?: string;
  /** A local file to upload (outbound only). */
  readonly path?: string;
  /** Bytes to upload (outbound only). */
  readonly data?: Uint8Array;
  /** The channel's own id for the file (inbound, e.g. Telegram `file_id`). */
  readonly fileId?: string;
  readonly mimeType?: string;
  readonly fileName?: string;
  readonly caption?: string;
  readonly sizeBytes?: number;
}

/** Who sent an inbound message, as the channel identifies them. */
export interface Sender {
  /** The channel's stable id for the sender (Telegram user id, Slack user id, webchat client id). */
  readonly id: string;
  readonly username?: string;
  readonly displayName?: string;
  readonly isBot?: boolean;
}

/** Where a message lives: the chat, and the thread/topic inside it when the channel has threads. */
export interface Conversation {
  readonly chatType: ChatType;
  /** The chat's id (Telegram chat id, Slack channel id, webchat conversation id). For DMs, the DM chat id. */
  readonly chatId: string;
  /** Thread or topic id (Slack `thread_ts`, Telegram `message_thread_id`), absent outside threads. */
  readonly threadId?: string;
  readonly title?: string;
  /** Slack team / Discord guild: used by routing bindings. */
  readonly teamId?: string;
}

/** A user mentioned in an inbound message (`@name` or the channel's own mention markup). */
export interface Mention {
  /** The mentioned user's id when the channel gives one. */
  readonly userId?: string;
  readonly username?: string;
}

/** One inbound message, normalised. Adapters produce these; nothing downstream sees a raw channel payload. */
export interface InboundMessage {
  /** The channel id (`telegram`, `slack`, `webchat`, ...). */
  readonly channel: string;
  /** The bot account that received it (several bots can share a channel); `default` when there is one. */
  readonly accountId: string;
  /** The channel's id for this message, unique within the conversation. */
  readonly messageId: string;
  readonly conversation: Conversation;
  readonly sender: Sender;
  /** The text (or media caption), trimmed of nothing; empty string when the message is media only. */
  readonly text: string;
  readonly media: readonly MediaItem[];
  readonly mentions: readonly Mention[];
  /** True when the bot itself was mentioned (or replied to) — the input of mention gating. */
  readonly mentionsBot: boolean;
  /** The message this one replies to, when it is a reply. */
  readonly replyToMessageId?: string;
  /** Milliseconds since the epoch, from the channel. */
  readonly timestamp: number;
  /**
   * The message's pictures, downloaded by the adapter, as the model takes them (the kernel's
   * `TurnInput.images`): sent with this message's turn only. Absent when there are none or the channel does
   * not download them; a `media` image missing here could not be fetched.
   */
  readonly images?: readonly InboundImage[];
  /**
   * Downloads the message's pictures later: an adapter whose pictures cost a download sets this instead of
   * `images`, so nothing is fetched for a message the gateway refuses (a stranger, a group message without a
   * mention). The gateway calls it once the message is let in, before storing it (`withInboundImages`); it
   * resolves to what could be fetched (a failed picture is left out and reported by the adapter). Not stored.
   */
  readonly loadImages?: () => Promise<readonly InboundImage[]>;
  /** The raw channel payload, for adapters' own follow-up calls; never interpreted downstream. */
  readonly raw?: unknown;
}

/** A picture an adapter downloaded: base64 bytes and the image type its first bytes say (PNG, JPEG, GIF, WebP). */
export interface InboundImage {
  readonly type: "image";
  /** The bytes, standard base64. */
  readonly data: string;
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`, from the bytes (not the sender's claim). */
  readonly mimeType: string;
}

/** What the gateway sends: the same shape the kernel's turn outcome carries (turn-pipeline `ReplyPayload`). */
export interface ReplyPayload {
  readonly text?: string;
  readonly mediaUrls?: readonly string[];
  /** Reply to this message id (a `[[reply_to:<id>]]` directive). */
  readonly replyToId?: string;
  /** Reply to the inbound message that started the turn (`[[reply_to_current]]`). */
  readonly replyToCurrent?: boolean;
  readonly audioAsVoice?: boolean;
  readonly isError?: boolean;
}

/** Where to send. `replyToMessageId` threads the reply when the channel supports it. */
export interface OutboundTarget {
  readonly accountId: string;
  readonly chatId: string;
  readonly threadId?: string;
  readonly replyToMessageId?: string;
}

/** What the gateway asks an adapter to send: text in the kernel's Markdown and/or media, to one target. */
export interface OutboundMessage {
  readonly target: OutboundTarget;
  /** Text in the kernel's Markdown; the adapter formats it for its dialect and splits it at its limit. */
  readonly text?: string;
  readonly media?: readonly MediaItem[];
  /** A block of a streamed reply (not the final one): adapters may send it silently or edit a draft. */
  readonly isBlock?: boolean;
  /**
   * How many messages this send may become (a caller's remaining budget for the reply); absent: the channel's
   * `maxMessagesPerReply`. Past it the adapter follows reply-limit.ts (`planReplyMessages`).
   */
  readonly maxMessages?: number;
}

/** One message the channel accepted (a long text becomes several). */
export interface SentMessage {
  readonly messageId: string;
  readonly chatId: string;
  readonly threadId?: string;
}

/** What an adapter's `send` did: the messages the channel accepted, and whether the reply limit cut in. */
export interface SendResult {
  readonly messages: readonly SentMessage[];
  /** Set when the text would have become more messages than allowed (reply-limit.ts): what was done instead. */
  readonly limited?: ReplyLimitReport;
}

/** What a channel supports (threads, edits, typing, media, uploads) and its text limit and Markdown dialect. */
export interface ChannelCapabilities {
  readonly threads: boolean;
  readonly edits: boolean;
  readonly typing: boolean;
  readonly media: boolean;
  readonly reactions: boolean;
  /**
   * The adapter can upload bytes as a file (Telegram sendDocument, Slack's upload flow): a reply too long for
   * its messages is then attached whole as `reply.md`. Absent: false.
   */
  readonly fileUploads?: boolean;
  /** The channel's hard text limit per message (Telegram 4096, Slack 40000 → 4000 by default). */
  readonly maxTextLength: number;
  /** The Markdown dialect the adapter formats into. */
  readonly dialect: "telegram-markdown-v2" | "telegram-html" | "slack-mrkdwn" | "markdown" | "plain";
}

/** Receives every inbound message. Resolve only once the message is safely accepted (stored or handled). */
export type InboundHandler = (message: InboundMessage) => Promise<void>;

/** What `ChannelAdapter.start` takes: the handler for inbound messages and an optional abort signal. */
export interface ChannelStartOptions {
  readonly onMessage: InboundHandler;
  /** Aborted to stop receiving; `stop()` does the same. */
  readonly signal?: AbortSignal;
}

/** The adapter every channel implements. */
export interface ChannelAdapter {
  /** The channel id, e.g. `telegram`. */
  readonly id: string;
  readonly accountId: string;
  readonly capabilities: ChannelCapabilities;
  /** Starts receiving (polling, an HTTP endpoint, a socket). Resolves once it is receiving. */
  start(options: ChannelStartOptions): Promise<void>;
  /** Stops receiving and waits for the handler calls in flight. Idempotent. */
  stop(): Promise<void>;
  /** Sends text and/or media, split to the channel's limit, formatted for its dialect. */
  send(message: OutboundMessage): Promise<SendResult>;
  /** Shows "typing…" in the conversation (a no-op where unsupported). */
  sendTyping(target: OutboundTarget): Promise<void>;
  /** Replaces the text of a sent message; only when `capabilities.edits`. */
  edit?(target: OutboundTarget, messageId: string, text: string): Promise<void>;
}

/** The channel refused or failed a call. `retryAfterMs` is set on rate limits (HTTP 429, Slack `ratelimited`). */
export class ChannelError extends Error {
  readonly channel: string;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  /** Worth retrying: rate limits, 5xx, network resets. Not: 400/401/403/404. */
  readonly retryable: boolean;
  constructor(
    channel: string,
    message: string,
    options: {
      readonly status?: number;
      readonly retryAfterMs?: number;
      readonly retryable: boolean;
      readonly cause?: unknown;
    },
  ) {
    super(`${channel}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ChannelError";
    this.channel = channel;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.retryable = options.retryable;
  }
}
