// Where a run's answer goes: the last deliverable payload of the outcome (text or media, not an error, not a
// silent or heartbeat-only reply), sent once to the job's `delivery.channel`/`delivery.to` through a channel
// adapter the caller passed in. Owns the choice of payload and the outbound message. Does not own any
// transport (channels-*), formatting or splitting (the adapter).
import type {
  ChannelAdapter,
  MediaItem,
  MediaKind,
  OutboundMessage,
  SendResult,
} from "@agent-kernel/channels-core";
import type { TurnOutcome } from "@agent-kernel/kernel";

/** What the scheduler needs of a channel: its id, the account it sends as, and `send`. */
export type CronDeliveryChannel = Pick<ChannelAdapter, "id" | "accountId" | "send">;

export type ReplyPayload = TurnOutcome["result"]["payloads"][number];

/** Replies that mean "nothing to say" and are never delivered on their own. */
const SILENT_TEXTS = new Set(["NO_REPLY", "HEARTBEAT_OK"]);

function isDeliverable(payload: ReplyPayload): boolean {
  if (payload.isError) return false;
  const text = payload.text?.trim() ?? "";
  const media = payload.mediaUrls?.length ?? 0;
  if (media > 0) return true;
  return text !== "" && !SILENT_TEXTS.has(text);
}

/** OpenClaw's `pickLastDeliverablePayload`, without its fallback to an error payload. */
export function pickLastDeliverablePayload(payloads: readonly ReplyPayload[]): ReplyPayload | undefined {
  for (let index = payloads.length - 1; index >= 0; index--) {
    const payload = payloads[index];
    if (payload !== undefined && isDeliverable(payload)) return payload;
  }
  return undefined;
}

const MEDIA_KINDS: readonly [RegExp, MediaKind][] = [
  [/\.(png|jpe?g|gif|webp|bmp|svg)$/i, "image"],
  [/\.(mp3|m4a|ogg|oga|opus|wav|flac)$/i, "audio"],
  [/\.(mp4|mov|webm|mkv)$/i, "video"],
];

function mediaItem(url: string): MediaItem {
  const path = url.split(/[?#]/)[0] ?? url;
  const kind = MEDIA_KINDS.find(([pattern]) => pattern.test(path))?.[1] ?? "document";
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? { kind, url } : { kind, path: url };
}

/** The message that delivers `payload` to chat `to`. */
export function outboundFor(
  channel: CronDeliveryChannel,
  to: string,
  payload: ReplyPayload,
): OutboundMessage {
  const text = payload.text?.trim();
  return {
    target: { accountId: channel.accountId, chatId: to },
    ...(text ? { text } : {}),
    ...(payload.mediaUrls?.length ? { media: payload.mediaUrls.map(mediaItem) } : {}),
  };
}

export type DeliveryResult =
  | { readonly status: "sent"; readonly channel: string; readonly to: string; readonly result: SendResult }
  | { readonly status: "nothing-to-deliver" }
  | { readonly status: "failed"; readonly channel: string; readonly to: string; readonly error: string };

/** Sends the outcome's last deliverable payload; never throws (a failure is a result the run records). */
export async function deliverOutcome(
  channels: readonly CronDeliveryChannel[],
  target: { readonly channel: string; readonly to: string },
  outcome: TurnOutcome,
): Promise<DeliveryResult> {
  const payload = pickLastDeliverablePayload(outcome.result.payloads);
  if (payload === undefined) return { status: "nothing-to-deliver" };
  const channel = channels.find((candidate) => candidate.id === target.channel);
  if (channel === undefined) {
    const known = channels.map((candidate) => candidate.id);
    return {
      status: "failed",
      ...target,
      error: `no channel adapter "${target.channel}" was given to the scheduler (${known.length > 0 ? `have: ${known.join(", ")}` : "none given: the agent-cron command runs no channels; run the jobs in the gateway (agent-kernel gateway) to deliver"})`,
    };
  }
  try {
    const result = await channel.send(outboundFor(channel, target.to, payload));
    return { status: "sent", ...target, result };
  } catch (error) {
    return { status: "failed", ...target, error: error instanceof Error ? error.message : String(error) };
  }
}
