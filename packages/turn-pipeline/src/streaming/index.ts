// Streaming normalisation: reasoning tags, block chunking, reply directives, silent tokens, the ReplyStream.

export {
  type BlockChunk,
  BlockChunker,
  type BlockChunking,
  type BreakPreference,
  normalizeChunking,
} from "@agent-kernel/markdown";
export {
  BlockCoalescer,
  COALESCE_MIN_CHARS_BY_CHANNEL,
  type CoalesceSettings,
  DEFAULT_COALESCE_IDLE_MS,
  realTimers,
  resolveCoalesceSettings,
  type TimerScheduler,
} from "./block-coalescer.ts";
export {
  parseInlineDirectives,
  sanitizeReplyDirectiveId,
  stripInlineDirectiveTagsForDelivery,
  stripInlineDirectiveTagsForDisplay,
} from "./directive-tags.ts";
export { type MediaSegment, type SplitMediaResult, splitMediaFromOutput } from "./media-output.ts";
export { isMessagingToolDuplicate, normalizeTextForComparison } from "./messaging-dedupe.ts";
export { ReasoningStreamStripper, type StrippedDelta } from "./reasoning-stream.ts";
export {
  REASONING_TAG_NAMES,
  type StripReasoningOptions,
  stripReasoningTagsFromText,
} from "./reasoning-tags.ts";
export { type ReplyCallbacks, subscribeReplyCallbacks } from "./reply-callbacks.ts";
export {
  type ParseReplyDirectivesOptions,
  parseReplyDirectives,
  type ReplyDirectives,
  StreamingDirectiveAccumulator,
  type StreamingDirectiveResult,
} from "./reply-directives.ts";
export type { ReplyPayload } from "./reply-payload.ts";
export {
  type ReasoningMode,
  ReplyStream,
  type ReplyStreamEvent,
  type ReplyStreamListener,
  type ReplyStreamOptions,
} from "./reply-stream.ts";
export {
  HEARTBEAT_TOKEN,
  isSilentReplyPayloadText,
  isSilentReplyPrefixText,
  isSilentReplyText,
  SILENT_REPLY_TOKEN,
} from "./silent-tokens.ts";
