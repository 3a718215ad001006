// Routing: binding tiers (peer > guild > team > account > channel > default), account matching, peers of
// DMs, groups and Telegram topics, and the session-key seam.
import { parseConfig } from "@agent-kernel/config";
import { describe, expect, it } from "vitest";
import type { InboundMessage } from "./contract.ts";
import {
  type PeerSessionKeyInput,
  resolveRoute,
  routeInbound,
  routingInputFor,
  sessionKeyFor,
} from "./routing.ts";

const config = parseConfig({
  agents: {
    list: [
      { id: "main", default: true },
      { id: "ops" },
      { id: "alice" },
      { id: "team" },
      { id: "bot2" },
      { id: "any" },
    ],
  },
  bindings: [
    { agentId: "any", match: { channel: "slack", accountId: "*" } },
    { agentId: "bot2", match: { channel: "telegram", accountId: "second" } },
    { agentId: "team", match: { channel: "slack", accountId: "*", teamId: "T1" } },
    { agentId: "alice", match: { channel: "telegram", peer: { kind: "direct", id: "42" } } },
    { agentId: "ops", match: { channel: "telegram", accountId: "*", peer: { kind: "group", id: "-100" } } },
  ],
});

const dm = (senderId: string, accountId = "default") => ({
  channel: "telegram",
  accountId,
  peer: { kind: "direct" as const, id: senderId },
});

describe("resolveRoute", () => {
  it("picks the most specific tier: peer over account over channel over the default agent", () => {
    expect(resolveRoute(config, dm("42"))).toMatchObject({
      agentId: "alice",
      matchedBy: "binding.peer",
      bindingIndex: 3,
    });
    expect(resolveRoute(config, dm("7"))).toMatchObject({ agentId: "main", matchedBy: "default" });
    expect(resolveRoute(config, dm("7", "second"))).toMatchObject({
      agentId: "bot2",
      matchedBy: "binding.account",
    });
    // a peer binding without accountId is for the default account only
    expect(resolveRoute(config, dm("42", "second"))).toMatchObject({
      agentId: "bot2",
      matchedBy: "binding.account",
    });
    // group and channel peers match each other; accountId "*" matches any account
    expect(
      resolveRoute(config, {
        channel: "telegram",
        accountId: "second",
        peer: { kind: "channel", id: "-100" },
      }),
    ).toMatchObject({ agentId: "ops", matchedBy: "binding.peer" });
  });

  it("team bindings beat channel-wide ones", () => {
    const slack = { channel: "slack", accountId: "A", peer: { kind: "group" as const, id: "C1" } };
    expect(resolveRoute(config, { ...slack, teamId: "T1" })).toMatchObject({
      agentId: "team",
      matchedBy: "binding.team",
    });
    expect(resolveRoute(config, { ...slack, teamId: "T2" })).toMatchObject({
      agentId: "any",
      matchedBy: "binding.channel",
    });
  });

  it("without bindings or agents, routes to main", () => {
    expect(resolveRoute({}, dm("1"))).toMatchObject({ agentId: "main", matchedBy: "default" });
  });
});

function inbound(
  overrides: Partial<InboundMessage> & { conversation: InboundMessage["conversation"] },
): InboundMessage {
  return {
    channel: "telegram",
    accountId: "default",
    messageId: "1",
    sender: { id: "42" },
    text: "hi",
    media: [],
    mentions: [],
    mentionsBot: true,
    timestamp: 1,
    ...overrides,
  };
}

describe("routingInputFor", () => {
  it("uses the sender in DMs, the chat in groups, and keeps Telegram forum topics in the peer id", () => {
    expect(routingInputFor(inbound({ conversation: { chatType: "direct", chatId: "D9" } })).peer).toEqual({
      kind: "direct",
      id: "42",
    });
    const topic = routingInputFor(
      inbound({ conversation: { chatType: "group", chatId: "-100", threadId: "7" } }),
    );
    expect(topic).toMatchObject({ peer: { kind: "group", id: "-100:topic:7" } });
    expect(topic.threadId).toBeUndefined();
    const slackThread = routingInputFor(
      inbound({
        channel: "slack",
        conversation: { chatType: "channel", chatId: "C1", threadId: "1700.1", teamId: "T1" },
      }),
    );
    expect(slackThread).toMatchObject({
      peer: { kind: "channel", id: "C1" },
      threadId: "1700.1",
      teamId: "T1",
    });
  });
});

describe("sessionKeyFor", () => {
  it("hands the kernel's builders the route, the session settings and the thread", () => {
    const calls: PeerSessionKeyInput[] = [];
    const peerKey = (params: PeerSessionKeyInput) => {
      calls.push(params);
      return `agent:${params.agentId}:${params.channel}:${params.peerKind}:${params.peerId}`;
    };
    const threadKey = (params: { baseSessionKey: string; threadId?: string | undefined }) => ({
      sessionKey: `${params.baseSessionKey}:thread:${(params.threadId ?? "").toLowerCase()}`,
    });
    const route = routeInbound(
      config,
      inbound({
        channel: "slack",
        accountId: "A",
        conversation: { chatType: "channel", chatId: "C1", threadId: "AB.1" },
      }),
    );
    expect(sessionKeyFor(route, { peerKey, threadKey }, { dmScope: "per-peer", mainKey: "home" })).toBe(
      "agent:any:slack:channel:C1:thread:ab.1",
    );
    expect(calls[0]).toEqual({
      agentId: "any",
      channel: "slack",
      accountId: "A",
      peerKind: "channel",
      peerId: "C1",
      dmScope: "per-peer",
      mainKey: "home",
    });
    expect(sessionKeyFor(route, { peerKey })).toBe("agent:any:slack:channel:C1");
  });
});
