// Who may talk to the gateway and which agent session a message goes to, over channels-core's rules: its
// access decision (`decideAccess`: DM and group policies, allowlists, pairing, mention gating) and its
// routing (`routeInbound`: bindings, peers, threads, then `sessionKeyFor`). The gateway takes both as hooks
// (`access`, `route`) so a deployment can replace them. Owns: reading the channel's settings out of the
// config, who counts as the owner, and the session-key builder channels-core asks for. Does not own the rules
// themselves (channels-core) or running turns (gateway.ts).
//
// The key builders are the kernel's (re-exported from runtime-resolver); `routing.test.ts` pins the keys
// against what the CLI's `--to` produces through the kernel.
import {
  type ChatType,
  decideAccess,
  effectiveAccessSettings,
  type InboundMessage,
  routeInbound,
  type SessionKeyBuilders,
  senderMatches,
  sessionKeyFor,
} from "@agent-kernel/channels-core";
import type { KernelConfig } from "@agent-kernel/config";
import { buildAgentPeerSessionKey, resolveThreadSessionKeys } from "@agent-kernel/kernel";

export type AccessVerdict =
  | { readonly allowed: true; readonly senderIsOwner: boolean; readonly explanation: string }
  | {
      readonly allowed: false;
      readonly explanation: string;
      /** The sender may ask for access: the gateway answers with a pairing code. */
      readonly pairing?: boolean;
    };

export interface Route {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly chatType: ChatType;
}

/** What the access hook may consult besides the config: senders approved through pairing. */
export interface AccessContext {
  readonly pairedSenders?: ReadonlySet<string>;
}

export type AccessHook = (
  message: InboundMessage,
  config: KernelConfig,
  context: AccessContext,
) => AccessVerdict;
export type RouteHook = (message: InboundMessage, config: KernelConfig) => Route;

/**
 * channels-core's decision on the channel's settings. A channel with no `channels.<id>` entry answers nobody.
 * The owner (who keeps owner-only tools) is a sender named explicitly in the effective `allowFrom`: a `*`
 * admits everyone but makes nobody the owner.
 */
export const defaultAccess: AccessHook = (message, config, context) => {
  const channel = config.channels[message.channel];
  if (channel === undefined)
    return {
      allowed: false,
      explanation: `channel "${message.channel}" is not configured (channels.${message.channel})`,
    };
  const decision = decideAccess(
    channel,
    message,
    context.pairedSenders === undefined ? {} : { pairedSenders: context.pairedSenders },
  );
  if (decision.outcome === "allow") {
    const allowFrom = effectiveAccessSettings(channel, message.accountId).allowFrom ?? [];
    const named = allowFrom.filter((entry) => entry.trim() !== "*");
    return {
      allowed: true,
      senderIsOwner: senderMatches(named, message.sender, message.channel),
      explanation: decision.explanation,
    };
  }
  return {
    allowed: false,
    explanation: decision.explanation,
    ...(decision.outcome === "pairing-challenge" ? { pairing: true } : {}),
  };
};

/** The kernel's own peer-key rules (runtime-resolver's, OpenClaw 2026.9.6 shapes, identity links included). */
export const peerSessionKey: SessionKeyBuilders["peerKey"] = buildAgentPeerSessionKey;

export const SESSION_KEY_BUILDERS: SessionKeyBuilders = {
  peerKey: buildAgentPeerSessionKey,
  threadKey: resolveThreadSessionKeys,
};

/** channels-core's route (bindings → agent, peer, thread) and the session key under `session.*`. */
export const defaultRoute: RouteHook = (message, config) => {
  const route = routeInbound(config, message);
  return {
    agentId: route.agentId,
    sessionKey: sessionKeyFor(route, SESSION_KEY_BUILDERS, config.session),
    chatType: message.conversation.chatType,
  };
};
