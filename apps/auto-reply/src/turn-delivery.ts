// How one auto-reply turn reaches its conversation: sends that log instead of throwing, the typing indicator
// renewed while the turn runs, and the kernel delivery sink of the turn — block replies streamed as they come,
// the final payloads the blocks did not carry plus one short user-facing error, all under the reply's message
// budget, and the `message` tool's sends. Owns: that sink and those sends. Does not own: what the payloads
// say (the kernel), how a payload becomes a message (delivery.ts) or the turn's lifecycle (gateway.ts).
import type {
  ChannelAdapter,
  InboundMessage,
  OutboundMessage,
  ReplyPayload,
  SendResult,
} from "@agent-kernel/channels-core";
import type { DeliverySink } from "@agent-kernel/kernel";
import {
  finalPayloadsToSend,
  outboundFor,
  type ReplyMessageBudget,
  targetFor,
  userFacingError,
} from "./delivery.ts";

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Sends one message; a failure is logged and the message is not recorded as sent. */
export async function sendLogged(
  channel: ChannelAdapter,
  message: OutboundMessage,
  sent: OutboundMessage[],
  log: (line: string) => void,
): Promise<SendResult | undefined> {
  try {
    const result = await channel.send(message);
    sent.push(message);
    return result;
  } catch (error) {
    log(`send to ${channel.id}:${message.target.chatId} failed: ${errorText(error)}`);
    return undefined;
  }
}

/** Shows "typing…" now and every `intervalMs` until the returned function is called. */
export function startTyping(
  channel: ChannelAdapter,
  inbound: InboundMessage,
  intervalMs: number,
  log: (line: string) => void,
): () => void {
  if (!channel.capabilities.typing) return () => {};
  const target = targetFor(inbound);
  const ping = () => {
    channel.sendTyping(target).catch((error: unknown) => log(`typing failed: ${errorText(error)}`));
  };
  ping();
  const timer = setInterval(ping, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The delivery sink of one turn; what it sends is appended to `sent` and `messageToolSends`. */
export function replySink(turn: {
  readonly channel: ChannelAdapter;
  readonly inbound: InboundMessage;
  /** `channels.<id>.blockStreaming` is not `off`. */
  readonly blocksToChannel: boolean;
  /** One reply is at most maxMessagesPerReply messages, however many sends it takes. */
  readonly budget: ReplyMessageBudget;
  readonly sent: OutboundMessage[];
  readonly messageToolSends: OutboundMessage[];
  readonly log: (line: string) => void;
}): DeliverySink {
  const { channel, inbound, budget, sent, log } = turn;
  const hasMedia = channel.capabilities.media;
  const streamed: ReplyPayload[] = [];
  return {
    ...(turn.blocksToChannel
      ? {
          onBlockReply: async (payload) => {
            const message = outboundFor(payload, inbound, { isBlock: true, channelHasMedia: hasMedia });
            if (message === undefined) return;
            const allowance = budget.allowance(1);
            if (allowance === undefined) return budget.holdBackBlock();
            streamed.push(payload);
            budget.spend(await sendLogged(channel, { ...message, maxMessages: allowance }, sent, log));
          },
        }
      : {}),
    onFinal: async (payloads, result) => {
      const userError = userFacingError(result);
      const messages = finalPayloadsToSend(payloads, streamed)
        .map((payload) => outboundFor(payload, inbound, { isBlock: false, channelHasMedia: hasMedia }))
        .filter((message) => message !== undefined);
      if (userError !== undefined) messages.push({ target: targetFor(inbound), text: userError });
      for (const [index, message] of messages.entries()) {
        // each later send keeps at least one message
        const allowance = budget.allowance(messages.length - index - 1);
        if (allowance === undefined) budget.skipSend();
        else budget.spend(await sendLogged(channel, { ...message, maxMessages: allowance }, sent, log));
      }
    },
    messageTool: {
      async send(request) {
        const target =
          request.target === undefined || request.target === inbound.conversation.chatId
            ? targetFor(inbound)
            : { accountId: inbound.accountId, chatId: request.target };
        const message: OutboundMessage = { target, text: request.text };
        const result = await channel.send(message);
        turn.messageToolSends.push(message);
        const first = result.messages[0];
        return first === undefined ? {} : { messageId: first.messageId };
      },
    },
  };
}
