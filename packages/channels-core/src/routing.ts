// Routing an inbound message to an agent and a session. Owns: matching `bindings` (most specific wins:
// peer > guild > team > account > channel > the default agent, as OpenClaw 2026.9.6's `resolveAgentRoute`),
// the peer a message belongs to (the sender in a DM, the chat in a group; Telegram forum topics stay in the
// peer id), and the seam that turns a route into a session key. Does not own: the key format itself — that
// is runtime-resolver's (`buildAgentPeerSessionKey`, `resolveThreadSessionKeys`), which channels-core may not
// import; apps pass those functions to `sessionKeyFor`.
import type { Binding, KernelConfig } from "@agent-kernel/config";
import type { ChatType, InboundMessage } from "./contract.ts";

/** Which binding rule chose a route's agent, from the most specific (a peer) to the default agent. */
export type RouteMatchedBy =
  | "binding.peer"
  | "binding.peer.wildcard"
  | "binding.guild"
  | "binding.team"
  | "binding.account"
  | "binding.channel"
  | "default";

/** The peer a message belongs to: the sender in a DM, the chat in a group or channel. */
export interface RoutePeer {
  readonly kind: ChatType;
  readonly id: string;
}

/** Where an inbound message goes: the agent, the channel account and peer (and thread), and the binding that chose them. */
export interface Route {
  readonly agentId: string;
  readonly channel: string;
  readonly accountId: string;
  readonly peer: RoutePeer;
  /** The thread inside the peer (Slack thread, Telegram DM topic); appended to the session key. */
  readonly threadId?: string;
  readonly matchedBy: RouteMatchedBy;
  /** The binding that matched (its index in `bindings`), absent for the default agent. */
  readonly bindingIndex?: number;
}

/** What routing matches bindings against: channel, account, peer, thread, and Slack team or Discord guild. */
export interface RoutingInput {
  readonly channel: string;
  readonly accountId: string;
  readonly peer: RoutePeer;
  readonly threadId?: string;
  readonly teamId?: string;
  readonly guildId?: string;
}

/** The parts of the config routing reads. */
export type RoutingConfig = { readonly bindings?: readonly Binding[] } & {
  readonly agents?: Pick<KernelConfig["agents"], "list"> | undefined;
};

const DEFAULT_ACCOUNT = "default";

function norm(value: string | undefined): string {
  return (value ?? "").trim().toLowerCase();
}

/** `group` and `channel` peers match each other (OpenClaw's `peerKindMatches`). */
function peerKindMatches(bindingKind: ChatType, kind: ChatType): boolean {
  return bindingKind === kind || (bindingKind !== "direct" && kind !== "direct");
}

/** The peer and thread of an inbound message, as OpenClaw keys them. */
export function routingInputFor(message: InboundMessage): RoutingInput {
  const { conversation } = message;
  const threadId = conversation.threadId;
  const isDirect = conversation.chatType === "direct";
  // Telegram forum topics are part of the group's peer id (`<chatId>:topic:<topicId>`), not a thread suffix.
  const topicInPeer = !isDirect && message.channel === "telegram" && threadId !== undefined;
  const peer: RoutePeer = {
    kind: conversation.chatType,
    id: isDirect
      ? message.sender.id
      : topicInPeer
        ? `${conversation.chatId}:topic:${threadId}`
        : conversation.chatId,
  };
  return {
    channel: message.channel,
    accountId: message.accountId,
    peer,
    ...(threadId === undefined || topicInPeer ? {} : { threadId }),
    ...(conversation.teamId === undefined ? {} : { teamId: conversation.teamId }),
  };
}

/** The agent configured as default (`agents.list[].default`, else the first, else `main`). */
export function defaultAgentIdOf(config: RoutingConfig): string {
  const list = config.agents?.list ?? [];
  return (list.find((agent) => agent.default === true) ?? list[0])?.id ?? "main";
}

function accountMatches(pattern: string | undefined, accountId: string): boolean {
  const wanted = norm(pattern);
  if (wanted === "*") return true;
  return (wanted || DEFAULT_ACCOUNT) === (norm(accountId) || DEFAULT_ACCOUNT);
}

type Tier = Exclude<RouteMatchedBy, "default">;

function tierOf(match: Binding["match"]): Tier {
  if (match.peer !== undefined) return norm(match.peer.id) === "*" ? "binding.peer.wildcard" : "binding.peer";
  if (match.guildId !== undefined) return "binding.guild";
  if (match.teamId !== undefined) return "binding.team";
  return norm(match.accountId) === "*" ? "binding.channel" : "binding.account";
}

const TIER_ORDER: readonly Tier[] = [
  "binding.peer",
  "binding.peer.wildcard",
  "binding.guild",
  "binding.team",
  "binding.account",
  "binding.channel",
];

function bindingMatches(match: Binding["match"], input: RoutingInput): boolean {
  if (norm(match.channel) !== norm(input.channel)) return false;
  if (!accountMatches(match.accountId, input.accountId)) return false;
  if (match.peer !== undefined) {
    if (!peerKindMatches(match.peer.kind, input.peer.kind)) return false;
    const id = norm(match.peer.id);
    if (id !== "*" && id !== norm(input.peer.id)) return false;
  }
  if (match.guildId !== undefined && norm(match.guildId) !== norm(input.guildId)) return false;
  if (match.teamId !== undefined && norm(match.teamId) !== norm(input.teamId)) return false;
  return true;
}

/**
 * The agent for an inbound message: the first binding (in config order) of the most specific tier that
 * matches; the default agent when none does. A binding without `accountId` matches the `default` account
 * only; `accountId: "*"` matches every account.
 */
export function resolveRoute(config: RoutingConfig, input: RoutingInput): Route {
  const bindings = config.bindings ?? [];
  const base = {
    channel: norm(input.channel),
    accountId: input.accountId.trim() || DEFAULT_ACCOUNT,
    peer: input.peer,
    ...(input.threadId === undefined ? {} : { threadId: input.threadId }),
  };
  for (const tier of TIER_ORDER) {
    const index = bindings.findIndex(
      (binding) => tierOf(binding.match) === tier && bindingMatches(binding.match, input),
    );
    const binding = bindings[index];
    if (binding !== undefined)
      return { ...base, agentId: binding.agentId, matchedBy: tier, bindingIndex: index };
  }
  return { ...base, agentId: defaultAgentIdOf(config), matchedBy: "default" };
}

/** `resolveRoute` for an inbound message. */
export function routeInbound(config: RoutingConfig, message: InboundMessage): Route {
  return resolveRoute(config, routingInputFor(message));
}

// ---------------------------------------------------------------------------
// The session-key seam.

/** The parameters of runtime-resolver's `buildAgentPeerSessionKey` (structurally the same). */
export interface PeerSessionKeyInput {
  readonly agentId: string;
  readonly mainKey?: string | undefined;
  readonly channel: string;
  readonly accountId?: string | undefined;
  readonly peerKind?: ChatType | undefined;
  readonly peerId?: string | undefined;
  readonly dmScope?: "main" | "per-peer" | "per-channel-peer" | "per-account-channel-peer" | undefined;
  readonly groupScope?: "main" | "per-group" | undefined;
  readonly identityLinks?: Readonly<Record<string, readonly string[]>> | undefined;
}

/** The kernel's key functions: pass runtime-resolver's `buildAgentPeerSessionKey` and `resolveThreadSessionKeys`. */
export interface SessionKeyBuilders {
  readonly peerKey: (params: PeerSessionKeyInput) => string;
  readonly threadKey?: (params: { baseSessionKey: string; threadId?: string | undefined }) => {
    readonly sessionKey: string;
  };
}

/** `session.*` settings that shape keys (a parsed `KernelConfig["session"]` fits). */
export interface SessionKeySettings {
  readonly dmScope?: PeerSessionKeyInput["dmScope"];
  readonly groupScope?: PeerSessionKeyInput["groupScope"];
  readonly mainKey?: string;
  readonly identityLinks?: PeerSessionKeyInput["identityLinks"];
}

/** The parameters channels-core hands the peer-key builder for a route. */
export function peerSessionKeyInput(route: Route, session: SessionKeySettings = {}): PeerSessionKeyInput {
  return {
    agentId: route.agentId,
    channel: route.channel,
    accountId: route.accountId,
    peerKind: route.peer.kind,
    peerId: route.peer.id,
    ...(session.mainKey === undefined ? {} : { mainKey: session.mainKey }),
    ...(session.dmScope === undefined ? {} : { dmScope: session.dmScope }),
    ...(session.groupScope === undefined ? {} : { groupScope: session.groupScope }),
    ...(session.identityLinks === undefined ? {} : { identityLinks: session.identityLinks }),
  };
}

/**
 * The session key of a route, built by the kernel's own functions (so keys never drift from
 * runtime-resolver's rules): the peer key by `dmScope`/`groupScope`, then the thread suffix.
 */
export function sessionKeyFor(
  route: Route,
  build: SessionKeyBuilders,
  session: SessionKeySettings = {},
): string {
  const base = build.peerKey(peerSessionKeyInput(route, session));
  if (route.threadId === undefined || build.threadKey === undefined) return base;
  return build.threadKey({ baseSessionKey: base, threadId: route.threadId }).sessionKey;
}
