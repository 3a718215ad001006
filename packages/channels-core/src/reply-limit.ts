// How many chat messages one reply may become (issue 19.2: a 250 KB reply had become 60 Telegram messages).
// Owns the rule, for every adapter alike: given the chunks an adapter cut a reply's text into, the number of
// messages it may send and whether it can upload a file, which chunks go out and what replaces the rest —
// the whole reply as a file (`reply.md`) with one short line where the channel can upload, else one last
// message saying how much was left out. Never more messages than the limit. Also where the limit comes from
// (`channels.<id>.maxMessagesPerReply`, default 10). Does not own cutting text (chunking.ts, the adapters'
// own chunkers) nor sending (the adapters).
//
// OpenClaw 2026.9.6 has no such bound (its `planOutboundTextMessageUnits` sends every chunk): a deliberate
// deviation, docs/parity.md.
import { CHANNEL_DEFAULTS } from "@agent-kernel/config";
import type { MediaItem } from "./contract.ts";

/** How many messages one reply may become when the config sets no `maxMessagesPerReply` (10). */
export const DEFAULT_MAX_MESSAGES_PER_REPLY: number = CHANNEL_DEFAULTS.maxMessagesPerReply;

/** The file an over-long reply is attached as. */
export const REPLY_FILE_NAME = "reply.md";

/** What happened to a reply that hit the limit: reported in `SendResult.limited`, logged by the gateway. */
export interface ReplyLimitReport {
  /** The messages this reply's text was allowed. */
  readonly limit: number;
  /** The messages the text would have become without the limit. */
  readonly wouldBe: number;
  /** Chunks of the text sent as messages of their own (`limit - 1`). */
  readonly shownChunks: number;
  /** Characters of the text (as cut) that no message shows. */
  readonly omittedChars: number;
  /** `attached`: the whole reply went as `reply.md`; `truncated`: the last message says what was left out. */
  readonly handling: "attached" | "truncated";
}

/** How `planReplyMessages` sends a reply: every chunk, or the first chunks plus the whole text as a file or a truncation notice. */
export type ReplyMessagePlan<C> =
  /** Within the limit: every chunk is a message. */
  | { readonly kind: "all"; readonly chunks: readonly C[] }
  /** The first chunks, then `file` (the whole text, its caption the one line): `chunks.length + 1 <= limit`. */
  | {
      readonly kind: "attached";
      readonly chunks: readonly C[];
      readonly file: MediaItem & { readonly data: Uint8Array; readonly caption: string };
      readonly report: ReplyLimitReport;
    }
  /** The first chunks, then `notice` as the last message: `chunks.length + 1 <= limit`. */
  | {
      readonly kind: "truncated";
      readonly chunks: readonly C[];
      readonly notice: string;
      readonly report: ReplyLimitReport;
    };

/** What `planReplyMessages` needs: the reply's text, the adapter's chunks of it, the message budget and whether files upload. */
export interface ReplyPlanInput<C> {
  /** The reply's whole text (Markdown): what the file holds. */
  readonly text: string;
  /** The adapter's cut of `text`, one chunk per message. */
  readonly chunks: readonly C[];
  /** How many messages the text may become (at least 1). */
  readonly maxMessages: number;
  /** The channel can upload a file (`ChannelCapabilities.fileUploads`). */
  readonly canAttachFiles: boolean;
  /** Characters of the reply a chunk shows; default its length when chunks are strings. */
  readonly sizeOf?: (chunk: C) => number;
}

const count = (value: number): string => value.toLocaleString("en-US");
const messages = (value: number): string => `${count(value)} message${value === 1 ? "" : "s"}`;

/** The one line an attached reply carries (the file's caption). */
export function attachedReplyLine(limit: number, wouldBe: number): string {
  return `⚠️ This reply was too long for ${messages(limit)} (it would have been ${count(wouldBe)}); the whole reply is attached as ${REPLY_FILE_NAME}.`;
}

/** The last message of a truncated reply. */
export function truncatedReplyNotice(omittedChars: number, limit: number): string {
  return `… [reply truncated: ${count(omittedChars)} more characters not shown; limit ${messages(limit)}]`;
}

function defaultSize(chunk: unknown): number {
  if (typeof chunk === "string") return chunk.length;
  throw new TypeError("planReplyMessages: chunks that are not strings need a sizeOf");
}

/**
 * The messages one reply's text becomes under `maxMessages`. Within it: every chunk. Past it: the first
 * `maxMessages - 1` chunks, then either the whole text as `reply.md` (captioned with one line) or, where the
 * channel cannot upload, a notice of how many characters were left out.
 */
export function planReplyMessages<C>(input: ReplyPlanInput<C>): ReplyMessagePlan<C> {
  const limit = input.maxMessages;
  if (!(Number.isInteger(limit) && limit >= 1))
    throw new RangeError(`maxMessages must be a positive integer, got ${limit}`);
  if (input.chunks.length <= limit) return { kind: "all", chunks: input.chunks };
  const sizeOf = input.sizeOf ?? defaultSize;
  const shown = input.chunks.slice(0, limit - 1);
  let omittedChars = 0;
  for (const chunk of input.chunks.slice(limit - 1)) omittedChars += sizeOf(chunk);
  const report = {
    limit,
    wouldBe: input.chunks.length,
    shownChunks: shown.length,
    omittedChars,
  };
  if (input.canAttachFiles) {
    return {
      kind: "attached",
      chunks: shown,
      file: {
        kind: "document",
        data: new TextEncoder().encode(input.text),
        fileName: REPLY_FILE_NAME,
        mimeType: "text/markdown",
        caption: attachedReplyLine(limit, input.chunks.length),
      },
      report: { ...report, handling: "attached" },
    };
  }
  return {
    kind: "truncated",
    chunks: shown,
    notice: truncatedReplyNotice(omittedChars, limit),
    report: { ...report, handling: "truncated" },
  };
}

/**
 * The limit an adapter applies to one send: the message's own `maxMessages` (a caller's remaining budget for
 * the reply) when given, else the channel's `maxMessagesPerReply` (default 10).
 */
export function resolveMaxMessagesPerReply(
  configured: number | undefined,
  perMessage?: number | undefined,
): number {
  const limit = perMessage ?? configured ?? DEFAULT_MAX_MESSAGES_PER_REPLY;
  if (!(Number.isInteger(limit) && limit >= 1))
    throw new RangeError(`maxMessagesPerReply must be a positive integer, got ${limit}`);
  return limit;
}

/**
 * The messages left for a send's text once its media items took theirs: a reply's media are all sent (the
 * model attached them on purpose), the text gets the rest of the limit and at least one message.
 */
export function textMessageBudget(limit: number, mediaMessages: number): number {
  return Math.max(1, limit - mediaMessages);
}
