// @agent-kernel/channels-telegram: the Telegram Bot API channel — long polling with durable offsets
// (at-least-once into the handler, deduped across restarts), MarkdownV2/HTML sending with chunking that
// never breaks a code fence, replies, forum topics, media by URL or upload, typing, edits, 429 retry_after.
export {
  CHANNEL_ID,
  DEFAULT_API_BASE_URL,
  isParseEntitiesError,
  type RetryPolicy,
  TelegramBotApi,
  type UploadFile,
} from "./bot-api.ts";
export {
  createTelegramChannel,
  type TelegramChannel,
  type TelegramChannelConfig,
  type TelegramChannelOptions,
  telegramOptionsFromConfig,
} from "./channel.ts";
export {
  chunkForTelegram,
  TELEGRAM_CAPTION_LIMIT,
  TELEGRAM_TEXT_LIMIT,
  type TelegramChunk,
} from "./chunk.ts";
export {
  escapeMarkdownV2,
  escapeMarkdownV2Code,
  escapeMarkdownV2Url,
  escapeTelegramHtml,
  formatForTelegram,
  markdownToTelegramHtml,
  markdownToTelegramV2,
  type TelegramParseMode,
} from "./format.ts";
export {
  type BotIdentity,
  normalizeUpdate,
  type TelegramChat,
  type TelegramEntity,
  type TelegramMessage,
  type TelegramUpdate,
  TelegramUpdateError,
  type TelegramUser,
} from "./inbound.ts";
export {
  type ChannelStateLike,
  channelStateOffsetStore,
  fileOffsetStore,
  memoryOffsetStore,
  type OffsetStore,
} from "./offset-store.ts";
