// History limiting (OpenClaw 2026.9.6 `src/agents/embedded-agent-runner/history.ts`): how many user turns of a
// session's context reach the model, and which limit applies to a session key (DM vs group/channel). Owns:
// the turn arithmetic and the config lookup. Does not own: building the context (pi's projection) or the
// inbound group-context window (how many unseen group messages are injected into a prompt).

/** Marks a leading message the limit never drops (OpenClaw's symbol, so the same marker works on both sides). */
export const SESSION_HISTORY_PRELUDE: unique symbol = Symbol.for("openclaw.sessionHistoryPrelude");

/** The smallest shape `limitHistoryTurns` reads: a message with a role. */
export interface RoleMessage {
  readonly role?: unknown;
}

function isSessionHistoryPrelude(message: RoleMessage | undefined): boolean {
  return Boolean(message && (message as { [SESSION_HISTORY_PRELUDE]?: unknown })[SESSION_HISTORY_PRELUDE]);
}

/**
 * Keeps the most recent user turns (each with its following assistant and tool messages). A missing, zero or
 * negative limit returns the input unchanged. Leading non-conversation messages (compaction or branch
 * summary, a marked prelude) are always kept. Hysteresis, as in 2026.9.6: with target = floor(limit) and
 * max = ceil(1.5 × target), nothing is dropped until there are more than max user turns, then turns are
 * dropped in batches so the kept prefix (and the provider's prompt cache) stays stable between batches.
 * Returns the same array when nothing is dropped.
 */
export function limitHistoryTurns<Message extends RoleMessage>(
  messages: readonly Message[],
  limit: number | undefined,
): readonly Message[] {
  if (!limit || limit <= 0 || messages.length === 0) return messages;
  let conversationStart = 0;
  while (conversationStart < messages.length) {
    const message = messages[conversationStart];
    if (isSessionHistoryPrelude(message)) {
      conversationStart++;
      continue;
    }
    const role = message?.role;
    if (role === "user" || role === "assistant") break;
    conversationStart++;
  }
  let userCount = 0;
  for (let i = conversationStart; i < messages.length; i++) if (messages[i]?.role === "user") userCount++;
  const targetUserTurns = Math.floor(limit);
  const maxUserTurns = Math.ceil(targetUserTurns * 1.5);
  if (userCount <= maxUserTurns) return messages;
  const evictionBatchSize = maxUserTurns - targetUserTurns + 1;
  const userTurnsToKeep = targetUserTurns + ((userCount - targetUserTurns) % evictionBatchSize);
  let seen = 0;
  let lastUserIndex = messages.length;
  for (let i = messages.length - 1; i >= conversationStart; i--) {
    if (messages[i]?.role !== "user") continue;
    seen++;
    if (seen > userTurnsToKeep)
      return [...messages.slice(0, conversationStart), ...messages.slice(lastUserIndex)];
    lastUserIndex = i;
  }
  return messages;
}

/** The per-channel settings the lookup reads; `ChannelConfig` from `@agent-kernel/config` fits. */
export interface HistoryLimitChannelSettings {
  readonly historyLimit?: number | undefined;
  readonly dmHistoryLimit?: number | undefined;
  readonly dms?:
    | Readonly<Record<string, { readonly historyLimit?: number | undefined } | undefined>>
    | undefined;
  /** Per-account overrides (OpenClaw's multi-account channels); the kernel config has none yet. */
  readonly accounts?: Readonly<Record<string, HistoryLimitChannelSettings | undefined>> | undefined;
}

/** The part of the config the lookup reads; `KernelConfig` fits. */
export interface HistoryLimitConfig {
  readonly channels?: Readonly<Record<string, unknown>> | undefined;
  readonly session?:
    | { readonly identityLinks?: Readonly<Record<string, readonly string[]>> | undefined }
    | undefined;
}

/** What the router already knows about the conversation; narrows an ambiguous key. */
export interface HistoryLimitRoute {
  readonly chatType?: "direct" | "group" | "channel";
  readonly peerId?: string;
  readonly accountId?: string;
}

type ChatKind = "direct" | "group" | "channel";

const THREAD_SUFFIX = /^(.*)(?::(?:thread|topic):\d+)$/i;
const DEFAULT_ACCOUNT_ID = "default";
const VALID_ACCOUNT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/i;
const BLOCKED_OBJECT_KEYS = new Set(["__proto__", "prototype", "constructor"]);

/**
 * The history limit for a session key: `<channel>:<kind>:<peer>` or `<channel>:<account>:direct:<peer>`
 * (an `agent:<id>:` prefix is skipped, `dm` counts as `direct`). Direct: the per-DM `dms.<peer>.historyLimit`
 * (thread or topic suffix stripped), then `dmHistoryLimit`; group/channel: `historyLimit`. An account's
 * value wins over the channel's. Main keys, unknown channels and unset values give `undefined` (no limit).
 */
export function getHistoryLimitFromSessionKey(
  sessionKey: string | undefined,
  config: HistoryLimitConfig | undefined,
  route?: HistoryLimitRoute,
): number | undefined {
  if (!sessionKey || !config) return undefined;
  const parts = sessionKey.split(":");
  const providerParts = parts.length >= 3 && parts[0] === "agent" ? parts.slice(2) : parts;
  const provider = lowerTrimmed(providerParts[0]);
  if (!provider) return undefined;
  const candidates = [0, 1].flatMap((accountSegments) => {
    const kind = normalizeChatType(providerParts[1 + accountSegments]);
    const accountId = accountSegments ? providerParts[1] : undefined;
    if (!kind || (route?.chatType && kind !== route.chatType) || (accountSegments && kind !== "direct"))
      return [];
    return [{ kind, accountId, userId: providerParts.slice(2 + accountSegments).join(":") }];
  });
  const rawPeerId = route?.peerId?.trim();
  const logicalPeerId = rawPeerId
    ? lowerTrimmed(resolveLinkedPeerId(config.session?.identityLinks, provider, rawPeerId) ?? rawPeerId)
    : undefined;
  const matching = logicalPeerId
    ? candidates.filter(
        (candidate) =>
          candidate.kind !== "direct" ||
          candidate.userId === logicalPeerId ||
          stripThreadSuffix(candidate.userId) === logicalPeerId,
      )
    : candidates;
  const resolved = matching.length === 1 ? matching[0] : undefined;
  const kind =
    resolved?.kind ??
    (candidates.every((candidate) => candidate.kind === candidates[0]?.kind)
      ? candidates[0]?.kind
      : undefined);
  const userId = resolved && (logicalPeerId ?? stripThreadSuffix(resolved.userId));
  const routedAccountId =
    route?.accountId ?? (candidates.length === 1 ? candidates[0]?.accountId : resolved?.accountId);
  const channelEntry = Object.entries(config.channels ?? {}).find(
    ([channel]) => lowerTrimmed(channel) === provider,
  );
  const providerConfig = asChannelSettings(channelEntry?.[1]);
  if (!providerConfig) return undefined;
  const trimmedAccountId = routedAccountId?.trim();
  const accountConfig = trimmedAccountId
    ? findAccount(providerConfig.accounts, normalizeAccountId(trimmedAccountId))
    : undefined;
  if (kind === "direct") {
    if (userId) {
      const perDmLimit = (accountConfig?.dms ?? providerConfig.dms)?.[userId]?.historyLimit;
      if (perDmLimit !== undefined) return perDmLimit;
    }
    return accountConfig?.dmHistoryLimit ?? providerConfig.dmHistoryLimit;
  }
  if (kind === "channel" || kind === "group")
    return accountConfig?.historyLimit ?? providerConfig.historyLimit;
  return undefined;
}

function lowerTrimmed(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed.toLowerCase() : undefined;
}

function normalizeChatType(raw: string | undefined): ChatKind | undefined {
  const value = lowerTrimmed(raw);
  if (value === "direct" || value === "dm") return "direct";
  if (value === "group" || value === "channel") return value;
  return undefined;
}

function stripThreadSuffix(value: string): string {
  return value.match(THREAD_SUFFIX)?.[1] ?? value;
}

function resolveLinkedPeerId(
  identityLinks: Readonly<Record<string, readonly string[]>> | undefined,
  channel: string,
  peerId: string,
): string | undefined {
  if (!identityLinks) return undefined;
  const candidates = new Set([peerId.toLowerCase(), `${channel}:${peerId}`.toLowerCase()]);
  for (const [canonical, ids] of Object.entries(identityLinks)) {
    const canonicalName = canonical.trim();
    if (!canonicalName || !Array.isArray(ids)) continue;
    if (ids.some((id) => candidates.has(id.trim().toLowerCase()))) return canonicalName;
  }
  return undefined;
}

function normalizeAccountId(value: string): string {
  const lower = value.toLowerCase();
  const canonical = VALID_ACCOUNT_ID.test(value)
    ? lower
    : lower
        .replace(/[^a-z0-9_-]+/g, "-")
        .replace(/^-+/, "")
        .replace(/-+$/, "")
        .slice(0, 64);
  return canonical && !BLOCKED_OBJECT_KEYS.has(canonical) ? canonical : DEFAULT_ACCOUNT_ID;
}

function findAccount(
  accounts: HistoryLimitChannelSettings["accounts"],
  accountId: string,
): HistoryLimitChannelSettings | undefined {
  if (!accounts) return undefined;
  if (Object.hasOwn(accounts, accountId) && !BLOCKED_OBJECT_KEYS.has(accountId)) return accounts[accountId];
  const key = Object.keys(accounts).find(
    (candidate) => !BLOCKED_OBJECT_KEYS.has(candidate) && normalizeAccountId(candidate) === accountId,
  );
  return key === undefined ? undefined : accounts[key];
}

function asChannelSettings(value: unknown): HistoryLimitChannelSettings | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as HistoryLimitChannelSettings)
    : undefined;
}
