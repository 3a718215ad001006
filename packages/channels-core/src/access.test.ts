// Access control: every DM policy, every group policy, group and sender allowlists, mention gating and
// per-account overrides, with configs parsed by the real config schema (defaults filled as in production).
import { type ChannelConfig, parseConfig } from "@agent-kernel/config";
import { describe, expect, it } from "vitest";
import { type AccessDecision, decideAccess } from "./access.ts";
import type { ChatType, InboundMessage } from "./contract.ts";

function channel(settings: Record<string, unknown>): ChannelConfig {
  const config = parseConfig({ channels: { telegram: settings } }).channels.telegram;
  if (config === undefined) throw new Error("no telegram config");
  return config;
}

function message(
  options: {
    chatType?: ChatType;
    chatId?: string;
    senderId?: string;
    username?: string;
    mentionsBot?: boolean;
    accountId?: string;
  } = {},
): InboundMessage {
  const chatType = options.chatType ?? "direct";
  const senderId = options.senderId ?? "42";
  return {
    channel: "telegram",
    accountId: options.accountId ?? "default",
    messageId: "1",
    conversation: { chatType, chatId: options.chatId ?? (chatType === "direct" ? senderId : "-100") },
    sender: { id: senderId, ...(options.username === undefined ? {} : { username: options.username }) },
    text: "hi",
    media: [],
    mentions: [],
    mentionsBot: options.mentionsBot ?? false,
    timestamp: 1,
  };
}

function outcome(decision: AccessDecision): [string, string] {
  return [decision.outcome, decision.reason];
}

describe("DM policies", () => {
  it("pairing (the default): allowFrom and paired senders pass, anyone else gets a pairing challenge", () => {
    const config = channel({ allowFrom: ["7", "@Alice"] });
    expect(config.dmPolicy).toBe("pairing");
    expect(outcome(decideAccess(config, message({ senderId: "7" })))).toEqual([
      "allow",
      "dm_policy_allowlisted",
    ]);
    expect(outcome(decideAccess(config, message({ senderId: "8", username: "alice" })))).toEqual([
      "allow",
      "dm_policy_allowlisted",
    ]);
    expect(
      outcome(decideAccess(config, message({ senderId: "9" }), { pairedSenders: new Set(["9"]) })),
    ).toEqual(["allow", "dm_policy_paired"]);
    const stranger = decideAccess(config, message({ senderId: "10" }), { pairedSenders: new Set(["9"]) });
    expect(outcome(stranger)).toEqual(["pairing-challenge", "dm_policy_pairing_required"]);
    expect(stranger.explanation).toContain("dmPolicy=pairing");
    expect(stranger.explanation).toContain("10");
  });

  it("allowlist: only allowFrom passes; paired senders do not count", () => {
    const config = channel({ dmPolicy: "allowlist", allowFrom: ["telegram:7"] });
    expect(outcome(decideAccess(config, message({ senderId: "7" })))).toEqual([
      "allow",
      "dm_policy_allowlisted",
    ]);
    const denied = decideAccess(config, message({ senderId: "9" }), { pairedSenders: new Set(["9"]) });
    expect(outcome(denied)).toEqual(["deny", "dm_policy_not_allowlisted"]);
    expect(denied.explanation).toBe("dmPolicy=allowlist: sender 9 is not in allowFrom");
    expect(outcome(decideAccess(channel({ dmPolicy: "allowlist" }), message()))).toEqual([
      "deny",
      "dm_policy_not_allowlisted",
    ]);
  });

  it('open: everyone with "*" in allowFrom; the config refuses "open" without it', () => {
    const open = decideAccess(channel({ dmPolicy: "open", allowFrom: ["*"] }), message());
    expect(outcome(open)).toEqual(["allow", "dm_policy_open"]);
    expect(open.explanation).toBe('dmPolicy=open with allowFrom "*": anyone may send direct messages');
    expect(outcome(decideAccess(channel({ dmPolicy: "open", allowFrom: [" * ", "1"] }), message()))).toEqual([
      "allow",
      "dm_policy_open",
    ]);
    expect(() => channel({ dmPolicy: "open" })).toThrow('add allowFrom: ["*"]');
    expect(() => channel({ dmPolicy: "open", allowFrom: ["1"] })).toThrow("channels.telegram.allowFrom");
  });

  it('open without "*" (a config that skipped validation) admits only the listed senders, as OpenClaw', () => {
    const unchecked = (allowFrom?: string[]) => ({
      ...channel({ dmPolicy: "pairing", ...(allowFrom ? { allowFrom } : {}) }),
      dmPolicy: "open" as const,
    });
    const nobody = decideAccess(unchecked(), message());
    expect(outcome(nobody)).toEqual(["deny", "dm_policy_not_allowlisted"]);
    expect(nobody.explanation).toBe(
      'dmPolicy=open without "*" in allowFrom: nobody may send direct messages (add allowFrom: ["*"])',
    );
    expect(outcome(decideAccess(unchecked([]), message()))).toEqual(["deny", "dm_policy_not_allowlisted"]);
    const restricted = unchecked(["1"]);
    expect(outcome(decideAccess(restricted, message({ senderId: "1" })))).toEqual([
      "allow",
      "dm_policy_allowlisted",
    ]);
    const denied = decideAccess(restricted, message({ senderId: "2" }));
    expect(outcome(denied)).toEqual(["deny", "dm_policy_not_allowlisted"]);
    expect(denied.explanation).toBe('dmPolicy=open without "*" in allowFrom: sender 2 is not in allowFrom');
  });

  it("disabled: every DM is denied, even from allowFrom", () => {
    const config = channel({ dmPolicy: "disabled", allowFrom: ["42"] });
    expect(outcome(decideAccess(config, message()))).toEqual(["deny", "dm_policy_disabled"]);
  });

  it("a disabled channel or account denies everything", () => {
    expect(
      outcome(decideAccess(channel({ enabled: false, dmPolicy: "open", allowFrom: ["*"] }), message())),
    ).toEqual(["deny", "channel_disabled"]);
    const config = channel({ dmPolicy: "open", allowFrom: ["*"], accounts: { work: { enabled: false } } });
    expect(outcome(decideAccess(config, message({ accountId: "work" })))).toEqual([
      "deny",
      "account_disabled",
    ]);
    expect(outcome(decideAccess(config, message({ accountId: "default" })))).toEqual([
      "allow",
      "dm_policy_open",
    ]);
  });
});

describe("group policies", () => {
  const group = (options: Parameters<typeof message>[0] = {}) =>
    message({ chatType: "group", chatId: "-100", mentionsBot: true, ...options });

  it("disabled: every group message is denied", () => {
    const config = channel({ groupPolicy: "disabled", groups: { "-100": {} }, groupAllowFrom: ["42"] });
    expect(outcome(decideAccess(config, group()))).toEqual(["deny", "group_policy_disabled"]);
  });

  it("allowlist (the default): with no groups and no sender list nothing passes", () => {
    const config = channel({});
    expect(config.groupPolicy).toBe("allowlist");
    expect(outcome(decideAccess(config, group()))).toEqual(["deny", "group_not_allowlisted"]);
  });

  it("allowlist: a listed group passes for senders in groupAllowFrom, falling back to allowFrom", () => {
    const config = channel({ groups: { "-100": {} }, groupAllowFrom: ["42"] });
    expect(outcome(decideAccess(config, group()))).toEqual(["allow", "group_allowed"]);
    expect(outcome(decideAccess(config, group({ senderId: "43" })))).toEqual([
      "deny",
      "group_sender_not_allowlisted",
    ]);
    expect(outcome(decideAccess(config, group({ chatId: "-200" })))).toEqual([
      "deny",
      "group_not_allowlisted",
    ]);
    const fallback = channel({ groups: { "-100": {} }, allowFrom: ["42"] });
    expect(outcome(decideAccess(fallback, group()))).toEqual(["allow", "group_allowed"]);
    const empty = channel({ groups: { "-100": {} } });
    expect(outcome(decideAccess(empty, group()))).toEqual(["deny", "group_sender_empty_allowlist"]);
  });

  it('allowlist: "*" lists every group; groupAllowFrom alone filters by sender in any group', () => {
    const wildcard = channel({ groups: { "*": {} }, groupAllowFrom: ["42"] });
    expect(outcome(decideAccess(wildcard, group({ chatId: "-999" })))).toEqual(["allow", "group_allowed"]);
    const sendersOnly = channel({ groupAllowFrom: ["42"] });
    expect(outcome(decideAccess(sendersOnly, group({ chatId: "-999" })))).toEqual(["allow", "group_allowed"]);
    expect(outcome(decideAccess(sendersOnly, group({ chatId: "-999", senderId: "1" })))).toEqual([
      "deny",
      "group_sender_not_allowlisted",
    ]);
  });

  it("per-group allowFrom overrides the channel's sender lists, under any policy", () => {
    const config = channel({
      groupPolicy: "open",
      groups: { "-100": { allowFrom: ["5"] }, "*": {} },
      groupAllowFrom: ["42"],
    });
    expect(outcome(decideAccess(config, group({ senderId: "5" })))).toEqual(["allow", "group_allowed"]);
    const denied = decideAccess(config, group({ senderId: "42" }));
    expect(outcome(denied)).toEqual(["deny", "group_sender_not_allowlisted"]);
    expect(denied.explanation).toContain("groups.-100.allowFrom");
    expect(outcome(decideAccess(config, group({ chatId: "-300", senderId: "1" })))).toEqual([
      "allow",
      "group_allowed",
    ]);
  });

  it("open: any group and sender; listing groups still restricts which groups", () => {
    expect(outcome(decideAccess(channel({ groupPolicy: "open" }), group({ senderId: "1" })))).toEqual([
      "allow",
      "group_allowed",
    ]);
    const listed = channel({ groupPolicy: "open", groups: { "-100": {} } });
    expect(outcome(decideAccess(listed, group({ chatId: "-5" })))).toEqual(["deny", "group_not_allowlisted"]);
    const off = channel({ groupPolicy: "open", groups: { "-100": { enabled: false } } });
    expect(outcome(decideAccess(off, group()))).toEqual(["deny", "group_disabled"]);
  });

  it("mention gating: required by default, per group or via *; a reply to the bot counts as a mention", () => {
    const config = channel({
      groupPolicy: "open",
      groups: { "-100": { requireMention: false }, "*": { requireMention: true } },
    });
    expect(decideAccess(config, group({ mentionsBot: false }))).toMatchObject({
      outcome: "allow",
      policy: { requireMention: false },
    });
    const ignored = decideAccess(config, group({ chatId: "-2", mentionsBot: false }));
    expect(outcome(ignored)).toEqual(["ignore-no-mention", "group_mention_required"]);
    expect(ignored.policy.requireMention).toBe(true);
    expect(outcome(decideAccess(channel({ groupPolicy: "open" }), group({ mentionsBot: false })))).toEqual([
      "ignore-no-mention",
      "group_mention_required",
    ]);
    expect(outcome(decideAccess(channel({ groupPolicy: "open" }), group({ mentionsBot: true })))).toEqual([
      "allow",
      "group_allowed",
    ]);
  });

  it("channels (broadcast) follow the group rules", () => {
    const config = channel({ groupPolicy: "open" });
    expect(outcome(decideAccess(config, group({ chatType: "channel", mentionsBot: false })))).toEqual([
      "ignore-no-mention",
      "group_mention_required",
    ]);
  });
});

describe("per-account overrides", () => {
  it("accounts.<id> replaces the channel's policies and lists for that account only", () => {
    const config = channel({
      dmPolicy: "pairing",
      groupPolicy: "disabled",
      accounts: {
        Work: { dmPolicy: "allowlist", allowFrom: ["1"], groupPolicy: "open" },
      },
    });
    expect(outcome(decideAccess(config, message({ accountId: "work", senderId: "1" })))).toEqual([
      "allow",
      "dm_policy_allowlisted",
    ]);
    expect(outcome(decideAccess(config, message({ accountId: "work", senderId: "2" })))).toEqual([
      "deny",
      "dm_policy_not_allowlisted",
    ]);
    expect(outcome(decideAccess(config, message({ senderId: "2" })))).toEqual([
      "pairing-challenge",
      "dm_policy_pairing_required",
    ]);
    const inGroup = message({ accountId: "work", chatType: "group", mentionsBot: true });
    expect(decideAccess(config, inGroup).policy).toEqual({
      dmPolicy: "allowlist",
      groupPolicy: "open",
      requireMention: true,
    });
    expect(outcome(decideAccess(config, { ...inGroup, accountId: "default" }))).toEqual([
      "deny",
      "group_policy_disabled",
    ]);
  });
});
