// The session key an inbound message lands under, as OpenClaw 2026.9.6's
// `resolveSessionKey` (`src/config/sessions/session-key.ts`, `group.ts`)
// derives it from the message context with no channel plugin loaded. Owns:
// `session.scope` ("global" puts every message in one `global` bucket), group
// and channel keys from `From`/`ChatType`/`Provider`/`To`, and direct chats
// collapsing to the agent's main key. Does not own: the key grammar
// (session-key.ts) or plugin-specific key rewriting (the channels).
import {
  buildAgentMainSessionKey,
  normalizeAgentId,
  normalizeMainKey,
  normalizeSessionKey,
  normalizeSessionPeerId,
} from "./session-key.ts";

/** `session.scope`: one conversation per sender (and per group), or one shared `global` conversation. */
export type SessionScope = "per-sender" | "global";

/** The fields of an inbound message context that decide its session key (OpenClaw's MsgContext names). */
export interface MessageSessionContext {
  /** An explicit key chosen by the caller; wins over everything else. */
  readonly SessionKey?: string | undefined;
  /** The sender or group address, e.g. `+15551234567`, `telegram:group:-100123`, `discord:987`. */
  readonly From?: string | undefined;
  /** The address the message was sent to (a group target such as `chat:-100555`). */
  readonly To?: string | undefined;
  /** The original target when the message was relayed; preferred over `To`. */
  readonly OriginatingTo?: string | undefined;
  /** `direct`, `group` or `channel`; other values count as direct. */
  readonly ChatType?: string | undefined;
  /** The channel the message came from when `From` does not start with it. */
  readonly Provider?: string | undefined;
}

/**
 * The channel ids whose name may lead a group address (`<channel>:group:<id>`):
 * OpenClaw 2026.9.6's bundled deliverable channels plus `webchat`.
 */
export const GROUP_SURFACES: ReadonlySet<string> = new Set([
  "a2a",
  "buzz",
  "clickclack",
  "discord",
  "feishu",
  "googlechat",
  "imessage",
  "irc",
  "line",
  "matrix",
  "mattermost",
  "msteams",
  "nextcloud-talk",
  "nostr",
  "raft",
  "reef",
  "signal",
  "slack",
  "sms",
  "synology-chat",
  "telegram",
  "tlon",
  "twitch",
  "webchat",
  "whatsapp",
  "zalo",
  "zalouser",
]);

const optional = (value: string | undefined): string | undefined => value?.trim() || undefined;
const optionalLower = (value: string | undefined): string | undefined => optional(value)?.toLowerCase();

/** Digits of a phone-like address as `+<digits>` (a leading `<channel>:` dropped); "" when there are none. */
export function normalizeE164(address: string): string {
  const digits = address
    .replace(/^[a-z][a-z0-9-]*:/i, "")
    .trim()
    .replace(/\D/g, "");
  return digits ? `+${digits}` : "";
}

/** The rest of the parts from `start`, joined back with `:`; null when the first of them is blank. */
function opaqueTail(parts: readonly string[], start: number): string | null {
  return optional(parts[start]) ? parts.slice(start).join(":") : null;
}

function originatingGroupTargetId(ctx: MessageSessionContext, provider: string): string | null {
  const target = optional(ctx.OriginatingTo ?? ctx.To) ?? "";
  const parts = target.split(":");
  if (parts.length < 2) return null;
  const head = (parts[0] ?? "").trim().toLowerCase();
  const second = optionalLower(parts[1]);
  if ((second === "group" || second === "channel") && (head === provider || GROUP_SURFACES.has(head))) {
    return opaqueTail(parts, 2);
  }
  if (head === provider || head === "chat" || head === "room" || head === "group" || head === "channel") {
    return opaqueTail(parts, 1);
  }
  return null;
}

/** `<channel>:<group|channel>:<id>` for a group or channel message; null for a direct one. */
export function resolveGroupSessionKey(ctx: MessageSessionContext): string | null {
  const from = optional(ctx.From) ?? "";
  const chatType = optionalLower(ctx.ChatType);
  const groupType = chatType === "channel" || chatType === "group" ? chatType : undefined;
  if (!groupType && !from.includes(":group:") && !from.includes(":channel:")) return null;
  const parts = from.split(":");
  const head = (parts[0] ?? "").trim().toLowerCase();
  const headIsSurface = head !== "" && GROUP_SURFACES.has(head);
  const provider = headIsSurface ? head : optionalLower(ctx.Provider);
  if (!provider) return null;
  const second = optionalLower(parts[1]);
  const secondIsKind = second === "group" || second === "channel";
  const kind = secondIsKind
    ? second
    : from.includes(":channel:") || groupType === "channel"
      ? "channel"
      : "group";
  const targetId = !secondIsKind && groupType ? originatingGroupTargetId(ctx, provider) : null;
  const id = targetId || (headIsSurface ? opaqueTail(parts, secondIsKind ? 2 : 1) : from);
  if (!id) return null;
  const peerId = normalizeSessionPeerId({ channel: provider, peerKind: kind, peerId: id });
  return peerId ? `${provider}:${kind}:${peerId}` : null;
}

/** The raw bucket before agent scoping: `global`, a group key, the sender's E.164 number, or `unknown`. */
export function deriveSessionKey(scope: SessionScope | undefined, ctx: MessageSessionContext): string {
  if (scope === "global") return "global";
  const group = resolveGroupSessionKey(ctx);
  if (group) return group;
  return (ctx.From ? normalizeE164(ctx.From) : "") || "unknown";
}

/**
 * The session key an inbound message is stored under. An explicit
 * `ctx.SessionKey` wins (normalised). With `scope: "global"` every other
 * message shares the key `global` (no agent prefix, as OpenClaw). Otherwise a
 * group or channel message gets `agent:<agentId>:<channel>:<kind>:<id>` and a
 * direct message the agent's main key (`agent:<agentId>:<mainKey>`). Throws
 * when that needs an agent and `agentId` is blank.
 */
export function resolveSessionKey(
  scope: SessionScope | undefined,
  ctx: MessageSessionContext,
  mainKey?: string | undefined,
  agentId?: string | undefined,
): string {
  const explicit = ctx.SessionKey?.trim();
  if (explicit) return normalizeSessionKey(explicit);
  const raw = deriveSessionKey(scope, ctx);
  if (scope === "global") return raw;
  if (!agentId?.trim()) throw new Error("Session key resolution requires an explicit configured agent id.");
  const canonicalAgentId = normalizeAgentId(agentId);
  if (!raw.includes(":group:") && !raw.includes(":channel:")) {
    return buildAgentMainSessionKey({ agentId: canonicalAgentId, mainKey: normalizeMainKey(mainKey) });
  }
  return `agent:${canonicalAgentId}:${raw}`;
}
