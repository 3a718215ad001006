// What the gateway sends to a channel for one turn, as pure functions: reply payloads into outbound messages
// (reply threading, media), which final payloads still need sending once blocks were streamed, the one
// short user-facing message for each class of surfaced error, and the reply's message budget across its
// sends (`channels.<id>.maxMessagesPerReply`; the per-send rule is channels-core's `planReplyMessages`, applied
// by the adapters) with the run event that records a hit. Also the gateway's declared delivery policy
// (docs/entry-points.md, checked by tooling/parity). Owns those rules. Does not own sending (gateway.ts), silent
// tokens or the messaging-tool duplicate filter (the kernel's ReplyStream drops those payloads before they
// reach the outcome), or formatting for a channel's dialect (the adapter).
import {
  DEFAULT_MAX_MESSAGES_PER_REPLY,
  type InboundMessage,
  type MediaItem,
  type MediaKind,
  type OutboundMessage,
  type OutboundTarget,
  type ReplyLimitReport,
  type ReplyPayload,
  type SendResult,
} from "@agent-kernel/channels-core";
import type { KernelConfig } from "@agent-kernel/config";
import { type AnyKernelStore, TURN_LIMIT_REASONS, type TurnOutcome } from "@agent-kernel/kernel";

/**
 * How an entry point delivers a turn, declared so it can be documented and tested (tooling/parity). Every
 * app runs the same kernel path; only these choices differ.
 */
export interface DeliveryPolicy {
  readonly app: string;
  /** What is sent while the turn runs: block replies (when block streaming is on), partial text, or nothing. */
  readonly streaming: "blocks" | "partials" | "none";
  /** What is sent after the run: every payload, only the ones blocks did not already carry, the last one, JSON, nothing. */
  readonly final: "all" | "unstreamed" | "last" | "json" | "none";
  /** How a failed, timed-out or aborted run is presented. */
  readonly errors: "user-message" | "stderr-and-exit-code" | "dropped" | "status-error" | "null-plan";
  /** `NO_REPLY` replies: never delivered (the kernel drops them; every app agrees). */
  readonly silent: "suppressed";
  /** Replies the `message` tool already sent are not delivered again (the kernel filters them). */
  readonly messagingToolDedupe: boolean;
  /** `[[reply_to_current]]` / `[[reply_to:<id>]]` become the channel's reply-to. */
  readonly replyThreading: boolean;
  /** Typing indicators while a turn runs. */
  readonly typing: boolean;
}

export const AUTO_REPLY_DELIVERY_POLICY: DeliveryPolicy = {
  app: "auto-reply",
  streaming: "blocks",
  final: "unstreamed",
  errors: "user-message",
  silent: "suppressed",
  messagingToolDedupe: true,
  replyThreading: true,
  typing: true,
};

/** Where replies to `message` go: its conversation and thread, threaded to `replyToId` when given. */
export function targetFor(message: InboundMessage, replyToId?: string): OutboundTarget {
  return {
    accountId: message.accountId,
    chatId: message.conversation.chatId,
    ...(message.conversation.threadId === undefined ? {} : { threadId: message.conversation.threadId }),
    ...(replyToId === undefined ? {} : { replyToMessageId: replyToId }),
  };
}

const MEDIA_KINDS: readonly [RegExp, MediaKind][] = [
  [/\.(png|jpe?g|gif|webp|bmp|heic)$/i, "image"],
  [/\.(mp3|m4a|wav|flac|aac)$/i, "audio"],
  [/\.(ogg|oga|opus)$/i, "voice"],
  [/\.(mp4|mov|webm|mkv)$/i, "video"],
];

function mediaItem(ref: string, audioAsVoice: boolean): MediaItem {
  const path = ref.replace(/[?#].*$/, "");
  let kind: MediaKind = MEDIA_KINDS.find(([pattern]) => pattern.test(path))?.[1] ?? "document";
  if (audioAsVoice && (kind === "audio" || kind === "voice")) kind = "voice";
  if (/^https:\/\//i.test(ref)) return { kind, url: ref };
  return { kind, path: ref.replace(/^file:\/\//i, "") };
}

/**
 * One reply payload as an outbound message for the conversation of `inbound`. `replyToCurrent` without an id
 * (the kernel had no current message id) replies to the inbound message; an explicit id wins. Media on a
 * channel without media support are sent as links under the text.
 */
export function outboundFor(
  payload: ReplyPayload,
  inbound: InboundMessage,
  options: { readonly isBlock: boolean; readonly channelHasMedia: boolean },
): OutboundMessage | undefined {
  const replyTo = payload.replyToId ?? (payload.replyToCurrent ? inbound.messageId : undefined);
  const urls = payload.mediaUrls ?? [];
  // Blocks cut at a paragraph break keep its newlines at their edges (the chunker's 2026.9.6 output); a
  // chat message starting with blank lines looks broken, so the edges go.
  let text = (payload.text ?? "").replace(/^\n+|\n+$/g, "");
  let media: MediaItem[] = [];
  if (urls.length > 0) {
    if (options.channelHasMedia) media = urls.map((url) => mediaItem(url, payload.audioAsVoice === true));
    else text = [text, ...urls].filter((part) => part !== "").join("\n");
  }
  if (text.trim() === "" && media.length === 0) return undefined;
  return {
    target: targetFor(inbound, replyTo),
    ...(text.trim() === "" ? {} : { text }),
    ...(media.length === 0 ? {} : { media }),
    ...(options.isBlock ? { isBlock: true } : {}),
  };
}

function sameText(a: string | undefined, b: string | undefined): boolean {
  return (a ?? "").replace(/\s+/g, " ").trim() === (b ?? "").replace(/\s+/g, " ").trim();
}

/**
 * The final payloads still to send after the run. Error payloads never go out as they are (the user gets
 * `userFacingError` instead). With no block streamed, every other payload is sent. Once blocks were streamed
 * they carried the text: a final payload is sent only if the blocks did not already contain it (its text is
 * not in the streamed text, or it has media no block carried), as OpenClaw's block pipeline does.
 */
export function finalPayloadsToSend(
  payloads: readonly ReplyPayload[],
  streamedBlocks: readonly ReplyPayload[],
): ReplyPayload[] {
  const plain = payloads.filter((payload) => payload.isError !== true);
  if (streamedBlocks.length === 0) return plain;
  const streamedText = streamedBlocks
    .map((block) => block.text ?? "")
    .join("\n")
    .replace(/\s+/g, " ");
  const streamedMedia = new Set(streamedBlocks.flatMap((block) => block.mediaUrls ?? []));
  return plain.filter((payload) => {
    const media = payload.mediaUrls ?? [];
    if (media.some((url) => !streamedMedia.has(url))) return true;
    const text = (payload.text ?? "").replace(/\s+/g, " ").trim();
    if (text === "") return false;
    return !streamedText.includes(text) && !streamedBlocks.some((block) => sameText(block.text, text));
  });
}

/** The error classes the gateway tells users about, with the reasons (runtime-resolver's taxonomy) in each. */
const REASON_CLASSES: readonly [readonly string[], string][] = [
  [["rate_limit"], "⚠️ The model is busy right now (rate-limited). Please try again in a moment."],
  [["overloaded"], "⚠️ The model provider is overloaded right now. Please try again in a moment."],
  [
    ["auth", "auth_permanent"],
    "⚠️ The model provider rejected the credentials. The operator needs to check the API key.",
  ],
  [
    ["billing"],
    "⚠️ The model provider reports a billing problem (quota or credit). The operator needs to check the account.",
  ],
  [
    ["context_overflow"],
    "⚠️ Context limit exceeded. I've reset our conversation to start fresh - please try again.",
  ],
  [
    ["timeout", "stalled"],
    "⚠️ The model took too long to answer and the request timed out. Please try again.",
  ],
  [
    ["server_error", "unavailable", "transient", "tls_certificate"],
    "⚠️ The model provider had a temporary error. Please try again.",
  ],
  [["model_not_found"], "⚠️ The configured model is not available. The operator needs to check the config."],
  [["internal", "attempt_limit"], "⚠️ Something went wrong on our side before a reply; it was logged."],
];

const MAX_DETAIL = 200;

/** The first line of a provider message, without a JSON body or a stack, cut to a readable length. */
function shortDetail(message: string | undefined): string {
  const firstLine = (message ?? "").split("\n")[0] ?? "";
  const withoutBody = firstLine.replace(/\s*[{[].*$/, "").trim();
  const text = withoutBody === "" ? firstLine.trim() : withoutBody;
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text;
}

/**
 * The one short message a user sees when the turn did not answer; undefined when nothing should be said (the
 * run succeeded, it was aborted on purpose, or a turn limit ended it: the turn's last payload is already its
 * one line). Never a stack trace, never a raw provider JSON body.
 */
export function userFacingError(outcome: Pick<TurnOutcome, "status" | "result">): string | undefined {
  if (outcome.status === "ok" || outcome.status === "aborted") return undefined;
  if ((TURN_LIMIT_REASONS as readonly (string | undefined)[]).includes(outcome.result.reason))
    return undefined;
  const reason = outcome.status === "timeout" ? "timeout" : (outcome.result.reason ?? "unclassified");
  for (const [reasons, message] of REASON_CLASSES) if (reasons.includes(reason)) return message;
  const detail = shortDetail(outcome.result.errorMessage);
  return `⚠️ Agent failed before reply${detail === "" ? "" : `: ${detail.replace(/\.$/, "")}`}.`;
}

/** Which error classes the gateway has a message for (documented in docs/entry-points.md). */
export function userFacingErrorClasses(): readonly {
  readonly reasons: readonly string[];
  readonly message: string;
}[] {
  return REASON_CLASSES.map(([reasons, message]) => ({ reasons, message }));
}

/** `channels.<id>.maxMessagesPerReply` of the channel a reply goes to (default 10). */
export function maxMessagesPerReplyFor(config: Pick<KernelConfig, "channels">, channel: string): number {
  return config.channels[channel]?.maxMessagesPerReply ?? DEFAULT_MAX_MESSAGES_PER_REPLY;
}

/**
 * The messages one turn's reply may still become. Every send of the reply (streamed blocks, final payloads,
 * the error line) draws on it through `OutboundMessage.maxMessages`, so a reply split across payloads or
 * streamed as blocks stays within the limit as a whole; within one send the adapter applies the rule. A block
 * always leaves one message for the end: once only that one is left, blocks are held back and the final
 * delivery carries the reply (as `reply.md` where the channel uploads files).
 */
export class ReplyMessageBudget {
  readonly limit: number;
  #remaining: number;
  readonly #limited: ReplyLimitReport[] = [];
  #heldBackBlocks = 0;
  #skippedSends = 0;

  constructor(limit: number) {
    if (!(Number.isInteger(limit) && limit >= 1))
      throw new RangeError(`maxMessagesPerReply must be a positive integer, got ${limit}`);
    this.limit = limit;
    this.#remaining = limit;
  }

  get remaining(): number {
    return this.#remaining;
  }

  /** The `maxMessages` of a send that must leave `reserve` messages to the sends after it; undefined: none. */
  allowance(reserve = 0): number | undefined {
    const left = this.#remaining - reserve;
    return left >= 1 ? left : undefined;
  }

  /** Counts what a send became (nothing for a failed send) and keeps the adapter's limit report. */
  spend(result: SendResult | undefined): void {
    if (result === undefined) return;
    this.#remaining = Math.max(0, this.#remaining - result.messages.length);
    if (result.limited !== undefined) this.#limited.push(result.limited);
  }

  /** A block not sent because only the reply's last message was left. */
  holdBackBlock(): void {
    this.#heldBackBlocks += 1;
  }

  /** A final payload not sent because the earlier ones used every message. */
  skipSend(): void {
    this.#skippedSends += 1;
  }

  /** Whether the limit was hit, and how: for the turn's record and its run's `delivery` event. */
  report(): DeliveryLimitRecord | undefined {
    if (this.#limited.length === 0 && this.#heldBackBlocks === 0 && this.#skippedSends === 0)
      return undefined;
    return {
      limit: this.limit,
      sends: this.#limited,
      heldBackBlocks: this.#heldBackBlocks,
      skippedSends: this.#skippedSends,
    };
  }
}

/** A reply that hit `maxMessagesPerReply`: recorded on the handled turn and as its run's `delivery` event. */
export interface DeliveryLimitRecord {
  readonly limit: number;
  /** The adapters' reports of the sends they cut short (attached as reply.md, or truncated with a notice). */
  readonly sends: readonly ReplyLimitReport[];
  /** Streamed blocks held back once only the last message was left (the final delivery carried them). */
  readonly heldBackBlocks: number;
  /** Final payloads not sent because earlier ones used every message. */
  readonly skippedSends: number;
}

/** One log line for a reply that hit the limit. */
export function deliveryLimitLine(runId: string, channel: string, record: DeliveryLimitRecord): string {
  const sends = record.sends.map(
    (send) =>
      `${send.wouldBe} messages cut to ${send.shownChunks}${send.handling === "attached" ? " + reply.md" : ` + a notice (${send.omittedChars} characters left out)`}`,
  );
  const extra = [
    ...(record.heldBackBlocks > 0 ? [`${record.heldBackBlocks} block(s) held back`] : []),
    ...(record.skippedSends > 0 ? [`${record.skippedSends} payload(s) not sent`] : []),
  ];
  return `run ${runId}: the reply on ${channel} hit maxMessagesPerReply ${record.limit}: ${[...sends, ...extra].join("; ")}`;
}

/**
 * Appends the hit to the run's events (stream `delivery`, after the run's last event): the run record says the
 * reply was cut for the channel, next to what the model answered.
 */
export async function recordDeliveryLimit(
  store: Pick<AnyKernelStore, "runs"> | undefined,
  runId: string,
  channel: string,
  record: DeliveryLimitRecord,
  now: number = Date.now(),
): Promise<void> {
  // a gateway over a kernel the caller owns, without its store, has nowhere to write: the log line stays
  if (store === undefined) return;
  const events = await store.runs.events(runId);
  const seq = (events.at(-1)?.seq ?? -1) + 1;
  await store.runs.appendEvents(runId, [
    { seq, ts: now, stream: "delivery", data: { phase: "reply_message_limit", channel, ...record } },
  ]);
}
