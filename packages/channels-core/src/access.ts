// Access control for inbound messages: who may talk to the bot, where, and whether it must be mentioned.
// Owns: the DM policies (pairing | allowlist | open | disabled), the group policies (open | allowlist |
// disabled) with the group allowlist (`groups.<id>` / `"*"`), the sender allowlists (`allowFrom`,
// `groupAllowFrom`, per-group `allowFrom`), mention gating (`requireMention`, true by default in groups),
// per-account overrides (`accounts.<id>`), and one explainable decision per message. Does not own: the
// pairing store (pairing.ts; its result comes in as `AccessState.pairedSenders`) or what happens next (apps).
//
// The rules follow OpenClaw 2026.9.6 (`src/security/dm-policy-shared.ts`, `src/config/group-policy.ts`,
// `src/channels/mention-gating.ts`), `dmPolicy: "open"` included (everyone only with `"*"` in allowFrom, which
// the config check demands); deviations are named where they happen.
import type { ChannelConfig } from "@agent-kernel/config";
import type { InboundMessage } from "./contract.ts";

/** Who may message the bot directly: `pairing`, `allowlist`, `open` or `disabled` (a channel's `dmPolicy`). */
export type DmPolicy = ChannelConfig["dmPolicy"];
/** Which groups the bot answers in: `open`, `allowlist` or `disabled` (a channel's `groupPolicy`). */
export type GroupPolicy = ChannelConfig["groupPolicy"];

/** The parts of a channel's config access control reads (a parsed `channels.<id>`, defaults filled). */
export type ChannelAccessConfig = Pick<ChannelConfig, "dmPolicy" | "groupPolicy"> &
  Partial<Pick<ChannelConfig, "enabled" | "allowFrom" | "groupAllowFrom" | "groups" | "accounts">>;

/** What the stores know about this sender, loaded before the (pure) decision. */
export interface AccessState {
  /** Senders approved through pairing for this channel account (ids as `Sender.id`). */
  readonly pairedSenders?: ReadonlySet<string> | readonly string[];
}

/** What to do with an inbound message: handle it, drop it, answer with a pairing code, or ignore it for lack of a mention. */
export type AccessOutcome = "allow" | "deny" | "pairing-challenge" | "ignore-no-mention";

/** The stable code of the rule that decided an `AccessDecision`, for logs, metrics and tests. */
export type AccessReason =
  | "channel_disabled"
  | "account_disabled"
  | "dm_policy_disabled"
  | "dm_policy_open"
  | "dm_policy_allowlisted"
  | "dm_policy_paired"
  | "dm_policy_not_allowlisted"
  | "dm_policy_pairing_required"
  | "group_policy_disabled"
  | "group_disabled"
  | "group_not_allowlisted"
  | "group_sender_empty_allowlist"
  | "group_sender_not_allowlisted"
  | "group_mention_required"
  | "group_allowed";

/** The verdict of `decideAccess` on one message: the outcome, the rule that decided it and the effective policy. */
export interface AccessDecision {
  readonly outcome: AccessOutcome;
  /** A stable code for logs, metrics and tests. */
  readonly reason: AccessReason;
  /** One sentence naming the setting that decided, e.g. `dmPolicy=allowlist: sender 42 is not in allowFrom`. */
  readonly explanation: string;
  /** The effective settings after account overrides. */
  readonly policy: {
    readonly dmPolicy: DmPolicy;
    readonly groupPolicy: GroupPolicy;
    /** Only for group/channel messages. */
    readonly requireMention?: boolean;
  };
}

export type AccessSettings = ReturnType<typeof effectiveAccessSettings>;

/** The channel settings with `accounts.<accountId>` applied (exact id first, then case-insensitively). */
export function effectiveAccessSettings(config: ChannelAccessConfig, accountId: string) {
  const account = findAccount(config.accounts, accountId);
  return {
    enabled: config.enabled !== false,
    accountEnabled: account?.enabled !== false,
    dmPolicy: account?.dmPolicy ?? config.dmPolicy,
    groupPolicy: account?.groupPolicy ?? config.groupPolicy,
    allowFrom: account?.allowFrom ?? config.allowFrom,
    groupAllowFrom: account?.groupAllowFrom ?? config.groupAllowFrom,
    groups: config.groups,
  };
}

function findAccount<T>(accounts: Readonly<Record<string, T>> | undefined, accountId: string): T | undefined {
  if (accounts === undefined) return undefined;
  if (Object.hasOwn(accounts, accountId)) return accounts[accountId];
  const lowered = accountId.toLowerCase();
  const key = Object.keys(accounts).find((k) => k.toLowerCase() === lowered);
  return key === undefined ? undefined : accounts[key];
}

/**
 * Whether an allowlist entry names this sender: `*` matches everyone; `<channel>:` prefixes are dropped;
 * `@name` matches the username (case-insensitively); anything else the sender id (case-insensitively).
 */
export function senderMatches(
  entries: readonly string[] | undefined,
  sender: InboundMessage["sender"],
  channel: string,
): boolean {
  if (entries === undefined) return false;
  const id = sender.id.trim().toLowerCase();
  const username = sender.username?.trim().replace(/^@/, "").toLowerCase();
  const prefix = `${channel.toLowerCase()}:`;
  for (const raw of entries) {
    let entry = raw.trim().toLowerCase();
    if (entry === "*") return true;
    if (entry.startsWith(prefix)) entry = entry.slice(prefix.length);
    if (entry === "") continue;
    if (entry.startsWith("@")) {
      if (username !== undefined && username !== "" && entry.slice(1) === username) return true;
    } else if (entry === id) return true;
  }
  return false;
}

function isPaired(paired: AccessState["pairedSenders"], senderId: string): boolean {
  if (paired === undefined) return false;
  return "has" in paired ? paired.has(senderId) : paired.includes(senderId);
}

function hasEntries(list: readonly string[] | undefined): list is readonly string[] {
  return list?.some((entry) => entry.trim() !== "") === true;
}

/**
 * Decides what to do with one inbound message. Pure: the same config, message and state give the same
 * decision, and every decision says which setting made it.
 */
export function decideAccess(
  config: ChannelAccessConfig,
  message: InboundMessage,
  state: AccessState = {},
): AccessDecision {
  const settings = effectiveAccessSettings(config, message.accountId);
  const isGroup = message.conversation.chatType !== "direct";
  const basePolicy = { dmPolicy: settings.dmPolicy, groupPolicy: settings.groupPolicy };
  const decide = (
    outcome: AccessOutcome,
    reason: AccessReason,
    explanation: string,
    requireMention?: boolean,
  ): AccessDecision => ({
    outcome,
    reason,
    explanation,
    policy: requireMention === undefined ? basePolicy : { ...basePolicy, requireMention },
  });
  if (!settings.enabled)
    return decide("deny", "channel_disabled", `channels.${message.channel}.enabled=false`);
  if (!settings.accountEnabled) {
    return decide(
      "deny",
      "account_disabled",
      `channels.${message.channel}.accounts.${message.accountId}.enabled=false`,
    );
  }
  return isGroup ? decideGroup(settings, message, decide) : decideDirect(settings, message, state, decide);
}

type Decide = (
  outcome: AccessOutcome,
  reason: AccessReason,
  explanation: string,
  requireMention?: boolean,
) => AccessDecision;

function decideDirect(
  settings: AccessSettings,
  message: InboundMessage,
  state: AccessState,
  decide: Decide,
): AccessDecision {
  const { dmPolicy, allowFrom } = settings;
  const senderId = message.sender.id;
  switch (dmPolicy) {
    case "disabled":
      return decide("deny", "dm_policy_disabled", "dmPolicy=disabled: direct messages are off");
    case "open":
      // As OpenClaw: "open" admits everyone only with "*" in allowFrom (the config check demands it); without
      // it the list is an allowlist, and an unset or empty list admits nobody.
      if (allowFrom?.some((entry) => entry.trim() === "*") === true) {
        return decide(
          "allow",
          "dm_policy_open",
          'dmPolicy=open with allowFrom "*": anyone may send direct messages',
        );
      }
      return senderMatches(allowFrom, message.sender, message.channel)
        ? decide("allow", "dm_policy_allowlisted", `dmPolicy=open: sender ${senderId} is in allowFrom`)
        : decide(
            "deny",
            "dm_policy_not_allowlisted",
            hasEntries(allowFrom)
              ? `dmPolicy=open without "*" in allowFrom: sender ${senderId} is not in allowFrom`
              : 'dmPolicy=open without "*" in allowFrom: nobody may send direct messages (add allowFrom: ["*"])',
          );
    case "allowlist":
      return senderMatches(allowFrom, message.sender, message.channel)
        ? decide("allow", "dm_policy_allowlisted", `dmPolicy=allowlist: sender ${senderId} is in allowFrom`)
        : decide(
            "deny",
            "dm_policy_not_allowlisted",
            `dmPolicy=allowlist: sender ${senderId} is not in allowFrom`,
          );
    case "pairing":
      if (senderMatches(allowFrom, message.sender, message.channel)) {
        return decide(
          "allow",
          "dm_policy_allowlisted",
          `dmPolicy=pairing: sender ${senderId} is in allowFrom`,
        );
      }
      if (isPaired(state.pairedSenders, senderId)) {
        return decide(
          "allow",
          "dm_policy_paired",
          `dmPolicy=pairing: sender ${senderId} was approved by pairing`,
        );
      }
      return decide(
        "pairing-challenge",
        "dm_policy_pairing_required",
        `dmPolicy=pairing: sender ${senderId} is not approved yet; answer with a pairing code`,
      );
  }
}

function decideGroup(settings: AccessSettings, message: InboundMessage, decide: Decide): AccessDecision {
  const { groupPolicy, groups } = settings;
  const chatId = message.conversation.chatId;
  const senderId = message.sender.id;
  if (groupPolicy === "disabled") {
    return decide("deny", "group_policy_disabled", "groupPolicy=disabled: group messages are off");
  }
  const groupConfig = groups === undefined ? undefined : findGroup(groups, chatId);
  const wildcard = groups?.["*"];
  const hasGroups = groups !== undefined && Object.keys(groups).length > 0;
  // OpenClaw: listing groups turns the group allowlist on under any policy; "allowlist" with no groups but a
  // sender allowlist filters by sender only.
  const groupAllowlistOn = groupPolicy === "allowlist" || hasGroups;
  const senderFilterOnly = groupPolicy === "allowlist" && !hasGroups && hasEntries(settings.groupAllowFrom);
  if (groupAllowlistOn && groupConfig === undefined && wildcard === undefined && !senderFilterOnly) {
    return decide(
      "deny",
      "group_not_allowlisted",
      hasGroups
        ? `group ${chatId} is not listed in groups (and there is no "*")`
        : `groupPolicy=allowlist: no groups and no groupAllowFrom are configured`,
    );
  }
  const selected = groupConfig ?? wildcard;
  if (selected?.enabled === false) {
    return decide("deny", "group_disabled", `groups.${groupConfig ? chatId : "*"}.enabled=false`);
  }
  // Senders: a group's own allowFrom wins; under "allowlist" the channel's groupAllowFrom, else allowFrom.
  const groupSenders = selected?.allowFrom;
  if (hasEntries(groupSenders)) {
    if (!senderMatches(groupSenders, message.sender, message.channel)) {
      return decide(
        "deny",
        "group_sender_not_allowlisted",
        `sender ${senderId} is not in groups.${groupConfig ? chatId : "*"}.allowFrom`,
      );
    }
  } else if (groupPolicy === "allowlist") {
    const explicit = hasEntries(settings.groupAllowFrom);
    const senders = explicit ? settings.groupAllowFrom : settings.allowFrom;
    const listName = explicit ? "groupAllowFrom" : "allowFrom";
    if (!hasEntries(senders)) {
      return decide(
        "deny",
        "group_sender_empty_allowlist",
        "groupPolicy=allowlist: no sender allowlist (groupAllowFrom, allowFrom or groups.<id>.allowFrom)",
      );
    }
    if (!senderMatches(senders, message.sender, message.channel)) {
      return decide(
        "deny",
        "group_sender_not_allowlisted",
        `groupPolicy=allowlist: sender ${senderId} is not in ${listName}`,
      );
    }
  }
  const requireMention = groupConfig?.requireMention ?? wildcard?.requireMention ?? true;
  if (requireMention && !message.mentionsBot) {
    return decide(
      "ignore-no-mention",
      "group_mention_required",
      `requireMention=true in group ${chatId}: the bot was not mentioned`,
      requireMention,
    );
  }
  return decide(
    "allow",
    "group_allowed",
    `groupPolicy=${groupPolicy}: sender ${senderId} in group ${chatId}${requireMention ? " mentioned the bot" : ""}`,
    requireMention,
  );
}

type GroupSettings = NonNullable<ChannelConfig["groups"]>[string];

function findGroup(
  groups: Readonly<Record<string, GroupSettings>>,
  chatId: string,
): GroupSettings | undefined {
  if (chatId !== "*" && Object.hasOwn(groups, chatId)) return groups[chatId];
  return undefined;
}
