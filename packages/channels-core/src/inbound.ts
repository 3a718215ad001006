// Inbound normalisation helpers every adapter uses. Owns: checking an `InboundMessage` an adapter built (a
// clear error naming the bad field), finding and stripping mentions of the bot in text (by username and by
// id patterns such as Slack's `<@U123>`), and dropping redelivered messages (same channel, account, chat and
// message id inside a time window). Does not own: parsing any channel's payload (adapters) or access
// control (access.ts).
import type { ChatType, InboundMessage, MediaKind } from "./contract.ts";

/** Thrown by `validateInboundMessage` for a message that does not fit the contract; `field` names the bad field. */
export class InboundMessageError extends Error {
  override readonly name = "InboundMessageError";
  /** The path of the bad field, e.g. `conversation.chatId`. */
  readonly field: string;
  constructor(field: string, problem: string) {
    super(`invalid inbound message: ${field} ${problem}`);
    this.field = field;
  }
}

const CHAT_TYPES: readonly ChatType[] = ["direct", "group", "channel"];
const MEDIA_KINDS: readonly MediaKind[] = [
  "image",
  "audio",
  "voice",
  "video",
  "document",
  "sticker",
  "other",
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function requireString(record: Record<string, unknown>, key: string, path: string, nonEmpty = true): void {
  const value = record[key];
  if (typeof value !== "string")
    throw new InboundMessageError(path, `must be a string, got ${describe(value)}`);
  if (nonEmpty && value.trim() === "") throw new InboundMessageError(path, "must not be empty");
}

function optionalString(record: Record<string, unknown>, key: string, path: string): void {
  if (record[key] !== undefined) requireString(record, key, path);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? JSON.stringify(value) : typeof value;
}

/**
 * Checks that a value is a well-formed `InboundMessage` and returns it typed; throws `InboundMessageError`
 * naming the first bad field. Adapters call it on what they built, so a mapping bug fails loudly at the edge.
 */
export function validateInboundMessage(value: unknown): InboundMessage {
  if (!isRecord(value)) throw new InboundMessageError("message", `must be an object, got ${describe(value)}`);
  requireString(value, "channel", "channel");
  requireString(value, "accountId", "accountId");
  requireString(value, "messageId", "messageId");
  const conversation = value.conversation;
  if (!isRecord(conversation)) {
    throw new InboundMessageError("conversation", `must be an object, got ${describe(conversation)}`);
  }
  if (!CHAT_TYPES.includes(conversation.chatType as ChatType)) {
    throw new InboundMessageError(
      "conversation.chatType",
      `must be one of ${CHAT_TYPES.join(", ")}, got ${describe(conversation.chatType)}`,
    );
  }
  requireString(conversation, "chatId", "conversation.chatId");
  optionalString(conversation, "threadId", "conversation.threadId");
  optionalString(conversation, "teamId", "conversation.teamId");
  if (conversation.title !== undefined) requireString(conversation, "title", "conversation.title", false);
  const sender = value.sender;
  if (!isRecord(sender))
    throw new InboundMessageError("sender", `must be an object, got ${describe(sender)}`);
  requireString(sender, "id", "sender.id");
  optionalString(sender, "username", "sender.username");
  if (sender.isBot !== undefined && typeof sender.isBot !== "boolean") {
    throw new InboundMessageError("sender.isBot", `must be a boolean, got ${describe(sender.isBot)}`);
  }
  requireString(value, "text", "text", false);
  if (!Array.isArray(value.media))
    throw new InboundMessageError("media", `must be an array, got ${describe(value.media)}`);
  value.media.forEach((item: unknown, index) => {
    const path = `media[${index}]`;
    if (!isRecord(item)) throw new InboundMessageError(path, `must be an object, got ${describe(item)}`);
    if (!MEDIA_KINDS.includes(item.kind as MediaKind)) {
      throw new InboundMessageError(
        `${path}.kind`,
        `must be one of ${MEDIA_KINDS.join(", ")}, got ${describe(item.kind)}`,
      );
    }
    if (
      item.url === undefined &&
      item.fileId === undefined &&
      item.path === undefined &&
      item.data === undefined
    ) {
      throw new InboundMessageError(path, "must locate its bytes (url, fileId, path or data)");
    }
  });
  if (value.loadImages !== undefined && typeof value.loadImages !== "function")
    throw new InboundMessageError("loadImages", `must be a function, got ${describe(value.loadImages)}`);
  if (value.images !== undefined) {
    if (!Array.isArray(value.images))
      throw new InboundMessageError("images", `must be an array, got ${describe(value.images)}`);
    value.images.forEach((image: unknown, index) => {
      const path = `images[${index}]`;
      if (!isRecord(image) || image.type !== "image")
        throw new InboundMessageError(path, 'must be an object with type "image"');
      requireString(image, "data", `${path}.data`);
      if (typeof image.mimeType !== "string" || !/^image\/[\w.+-]+$/.test(image.mimeType))
        throw new InboundMessageError(
          `${path}.mimeType`,
          `must be an image type, got ${describe(image.mimeType)}`,
        );
    });
  }
  if (!Array.isArray(value.mentions)) {
    throw new InboundMessageError("mentions", `must be an array, got ${describe(value.mentions)}`);
  }
  value.mentions.forEach((mention: unknown, index) => {
    if (!isRecord(mention) || (mention.userId === undefined && mention.username === undefined)) {
      throw new InboundMessageError(`mentions[${index}]`, "must have a userId or a username");
    }
  });
  if (typeof value.mentionsBot !== "boolean") {
    throw new InboundMessageError("mentionsBot", `must be a boolean, got ${describe(value.mentionsBot)}`);
  }
  optionalString(value, "replyToMessageId", "replyToMessageId");
  if (typeof value.timestamp !== "number" || !Number.isFinite(value.timestamp) || value.timestamp < 0) {
    throw new InboundMessageError(
      "timestamp",
      `must be milliseconds since the epoch, got ${describe(value.timestamp)}`,
    );
  }
  if (value.text === "" && value.media.length === 0) {
    throw new InboundMessageError("text", "must not be empty when there is no media");
  }
  return value as unknown as InboundMessage;
}

// ---------------------------------------------------------------------------
// Mentions.

/** How the bot is named in text: `@username` and the channel's id patterns (Slack `<@U123>`). */
export interface BotIdentity {
  /** Without the leading `@`; matched case-insensitively at a word boundary. */
  readonly username?: string;
  readonly userId?: string;
  /** Extra patterns, e.g. `/<@U0BOT(?:\|[^>]*)?>/` for Slack. Their global flag is not needed. */
  readonly patterns?: readonly RegExp[];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Every regex that names the bot; `@name` must not continue with a name character. */
export function botMentionPatterns(bot: BotIdentity): RegExp[] {
  const patterns: RegExp[] = [];
  const username = bot.username?.replace(/^@/, "");
  if (username) patterns.push(new RegExp(`(?<![\\w@])@${escapeRegExp(username)}(?![\\w])`, "giu"));
  if (bot.userId) patterns.push(new RegExp(`<@${escapeRegExp(bot.userId)}(?:\\|[^>]*)?>`, "g"));
  for (const pattern of bot.patterns ?? []) {
    patterns.push(
      new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`),
    );
  }
  return patterns;
}

/** True when the text names the bot (by username, id or a channel pattern). */
export function mentionsBot(text: string, bot: BotIdentity): boolean {
  return botMentionPatterns(bot).some((pattern) => {
    pattern.lastIndex = 0;
    return pattern.test(text);
  });
}

/** True when a structured mention (from the channel's entities) is the bot. */
export function mentionListIncludesBot(
  mentions: readonly { readonly userId?: string; readonly username?: string }[],
  bot: BotIdentity,
): boolean {
  const username = bot.username?.replace(/^@/, "").toLowerCase();
  return mentions.some(
    (m) =>
      (bot.userId !== undefined && m.userId === bot.userId) ||
      (username !== undefined && m.username?.replace(/^@/, "").toLowerCase() === username),
  );
}

/**
 * Removes mentions of the bot and tidies the spaces they leave (`"@bot  hi"` → `"hi"`, `"hi @bot!"` →
 * `"hi!"`). Other mentions stay.
 */
export function stripBotMention(text: string, bot: BotIdentity): string {
  // a private-use character marks where mentions were (text that already holds one just loses mentions)
  if (text.includes("\uE000"))
    return botMentionPatterns(bot)
      .reduce((out, p) => out.replace(p, ""), text)
      .trim();
  let out = text;
  for (const pattern of botMentionPatterns(bot)) out = out.replace(pattern, "\uE000");
  if (!out.includes("\uE000")) return text;
  // leading mentions used as an address ("@bot, hi") take their comma or colon with them
  out = out.replace(/^(?:\s*\uE000\s*[,:;]?)+\s*/, "");
  // before punctuation, a newline or the end, a mention goes with the spaces before it ("hi @bot!" → "hi!")
  out = out.replace(/[ \t]*\uE000(?=[ \t]*(?:[.!?,;:\n]|$))/g, "");
  // between words, a mention and its spaces become one space
  return out.replace(/[ \t]*\uE000[ \t]*/g, " ").trim();
}

// ---------------------------------------------------------------------------
// Dedupe.

/** The window and size bound of an `InboundDeduper`, and its clock. */
export interface InboundDeduperOptions {
  /** How long a seen message stays remembered (default 20 minutes). */
  readonly windowMs?: number;
  /** At most this many remembered messages; the oldest go first (default 10 000). */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

/** The identity of one inbound message: channel, account, chat and message id. */
export function inboundMessageKey(
  message: Pick<InboundMessage, "channel" | "accountId" | "messageId"> & {
    readonly conversation: Pick<InboundMessage["conversation"], "chatId">;
  },
): string {
  return JSON.stringify([message.channel, message.accountId, message.conversation.chatId, message.messageId]);
}

/**
 * Drops redeliveries (Telegram after a restart, Slack's retried events): `isDuplicate` answers false the
 * first time a message is seen and true for the same message inside the window. In memory, bounded.
 */
export class InboundDeduper {
  readonly #windowMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** Insertion order is expiry order (one window for all), so the oldest entry is always first. */
  readonly #seen = new Map<string, number>();

  constructor(options: InboundDeduperOptions = {}) {
    this.#windowMs = options.windowMs ?? 20 * 60 * 1000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Records the message and tells whether it was already seen inside the window. */
  isDuplicate(message: Parameters<typeof inboundMessageKey>[0]): boolean {
    const now = this.#now();
    this.#evict(now);
    const key = inboundMessageKey(message);
    const seenAt = this.#seen.get(key);
    if (seenAt !== undefined && now - seenAt < this.#windowMs) return true;
    this.#seen.delete(key);
    this.#seen.set(key, now);
    if (this.#seen.size > this.#maxEntries) {
      const oldest = this.#seen.keys().next();
      if (oldest.done !== true) this.#seen.delete(oldest.value);
    }
    return false;
  }

  /** Forgets a message (its handling failed and a redelivery should be processed). */
  forget(message: Parameters<typeof inboundMessageKey>[0]): void {
    this.#seen.delete(inboundMessageKey(message));
  }

  get size(): number {
    return this.#seen.size;
  }

  #evict(now: number): void {
    for (const [key, seenAt] of this.#seen) {
      if (now - seenAt < this.#windowMs) break;
      this.#seen.delete(key);
    }
  }
}
