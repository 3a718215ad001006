// The gateway's access decision with pairing: the access hook, told which senders the pairing store has
// approved (direct messages under `dmPolicy: pairing`), and the pairing code sent to a sender who must pair
// first. Owns: consulting the pairing store and the challenge message. Does not own: the access rules
// (routing.ts, channels-core) or the pairing store's state (channels-core over the kernel store).
import {
  type ChannelAdapter,
  effectiveAccessSettings,
  type InboundMessage,
  type PairingStore,
} from "@agent-kernel/channels-core";
import type { KernelConfig } from "@agent-kernel/config";
import { targetFor } from "./delivery.ts";
import type { AccessHook, AccessVerdict } from "./routing.ts";
import { sendLogged } from "./turn-delivery.ts";

/** The access decision, with the pairing store consulted for direct messages under `dmPolicy: pairing`. */
export async function decideAccess(
  access: AccessHook,
  config: KernelConfig,
  pairing: PairingStore | undefined,
  message: InboundMessage,
): Promise<AccessVerdict> {
  const channel = config.channels[message.channel];
  const needsPairing =
    pairing !== undefined &&
    channel !== undefined &&
    message.conversation.chatType === "direct" &&
    effectiveAccessSettings(channel, message.accountId).dmPolicy === "pairing";
  const paired =
    needsPairing && (await pairing?.isPaired(message.channel, message.accountId, message.sender.id)) === true;
  return access(message, config, paired ? { pairedSenders: new Set([message.sender.id]) } : {});
}

/** Answers a sender who must pair first with their pairing code (the owner approves it). */
export async function challengeSender(
  pairing: PairingStore | undefined,
  channel: ChannelAdapter | undefined,
  message: InboundMessage,
  log: (line: string) => void,
): Promise<void> {
  if (pairing === undefined || channel === undefined) return;
  const result = await pairing.challenge(message.channel, message.accountId, message.sender);
  if (result.status === "too-many-pending") {
    log(`pairing for ${message.sender.id} on ${message.channel}: too many pending requests; no code sent`);
    return;
  }
  if (result.status === "existing" && message.conversation.chatType !== "direct") return;
  await sendLogged(
    channel,
    {
      target: targetFor(message),
      text: `This assistant only answers approved senders. Your ${message.channel} id: ${message.sender.id}. Pairing code: ${result.code} — ask the owner to approve it.`,
    },
    [],
    log,
  );
}
