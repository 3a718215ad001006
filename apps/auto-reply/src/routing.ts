// Who may talk to the gateway and which agent session a message goes to, over channels-core's rules: its
// access decision (`decideAccess`: DM and group policies, allowlists, pairing, mention gating) and its
// routing (`routeInbound`: bindings, peers, threads, then `sessionKeyFor`). The gateway takes both as hooks
// (`access`, `route`) so a deployment can replace them. Owns: reading the channel's settings out of the
// config, who counts as the owner, and the session-key builder channels-core asks for. Does not own the rules
// themselves (channels-core) or running turns (gateway.ts).
//
// The key builder restates runtime-resolver's `buildAgentPeerSessionKey` and `resolveThreadSessionKeys`
// (apps may not import runtime-resolver and the kernel does not re-export them yet); `routing.test.ts` pins
// the shapes the CLI's `--to` produces through the kernel, so a drift fails there.
import {
  type ChatType,
  decideAccess,
  effectiveAccessSettings,
  type InboundMessage,
  type PeerSessionKeyInput,
  routeInbound,
  type SessionKeyBuilders,
  senderMatches,
  sessionKeyFor,
} from "@agent-kernel/channels-core";
import type { KernelConfig } from "@agent-kernel/config";

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

const lowerTrim = (value: string | undefined) => (value ?? "").trim().toLowerCase();
const idPart = (value: string | undefined, fallback: string) =>
  lowerTrim(value)
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "") || fallback;

/** runtime-resolver's peer-key rules (OpenClaw 2026.9.6 shapes), without identity links. */
export function peerSessionKey(params: PeerSessionKeyInput): string {
  const agentId = idPart(params.agentId, "main");
  const main = `agent:${agentId}:${lowerTrim(params.mainKey) || "main"}`;
  const kind = params.peerKind ?? "direct";
  const channel = lowerTrim(params.channel) || "unknown";
  if (kind === "direct") {
    const peer = lowerTrim(params.peerId);
    const scope = params.dmScope ?? "main";
    if (!peer || scope === "main") return main;
    if (scope === "per-account-channel-peer")
      return `agent:${agentId}:${channel}:${idPart(params.accountId, "default")}:direct:${peer}`;
    if (scope === "per-channel-peer") return `agent:${agentId}:${channel}:direct:${peer}`;
    return `agent:${agentId}:direct:${peer}`;
  }
  if (params.groupScope === "main") return main;
  return `agent:${agentId}:${channel}:${kind}:${lowerTrim(params.peerId) || "unknown"}`;
}

export const SESSION_KEY_BUILDERS: SessionKeyBuilders = {
  peerKey: peerSessionKey,
  threadKey: ({ baseSessionKey, threadId }) => {
    const thread = (threadId ?? "").trim();
    return { sessionKey: thread ? `${baseSessionKey}:thread:${thread.toLowerCase()}` : baseSessionKey };
  },
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
