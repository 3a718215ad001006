// The gateway's access and routing hooks over channels-core, and the session-key builder pinned against the
// kernel's own keys (the CLI's `--to` goes through runtime-resolver's builder), so the two cannot drift.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestChannel } from "@agent-kernel/channels-core/testing";
import { parseConfig } from "@agent-kernel/config";
import { openKernelStore, resolveCommandSession } from "@agent-kernel/kernel";
import { describe, expect, it } from "vitest";
import { defaultAccess, defaultRoute, peerSessionKey } from "./routing.ts";

const channel = new TestChannel({ id: "telegram" });

describe("peerSessionKey", () => {
  it("makes the keys the kernel makes for a direct peer under every dmScope", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "auto-reply-keys-"));
    const store = await openKernelStore({ stateDir });
    try {
      for (const dmScope of ["main", "per-peer", "per-channel-peer", "per-account-channel-peer"] as const) {
        for (const mainKey of ["main", "Home"]) {
          const config = parseConfig({ session: { dmScope, mainKey }, agents: { list: [{ id: "ops" }] } });
          const kernelKey = (await resolveCommandSession({ config, store }, { agentId: "ops", to: "Bob" }))
            .sessionKey;
          expect(
            peerSessionKey({
              agentId: "ops",
              channel: "cli",
              peerKind: "direct",
              peerId: "Bob",
              dmScope,
              mainKey,
            }),
            `${dmScope}/${mainKey}`,
          ).toBe(kernelKey);
        }
      }
    } finally {
      await store.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

describe("defaultRoute", () => {
  it("routes groups per group, threads with a suffix, and bindings to their agent", () => {
    const config = parseConfig({
      agents: { list: [{ id: "main", default: true }, { id: "ops" }] },
      bindings: [{ agentId: "ops", match: { channel: "telegram", peer: { kind: "group", id: "-100" } } }],
      session: { dmScope: "per-channel-peer" },
    });
    expect(defaultRoute(channel.inbound({ text: "x", sender: { id: "42" } }), config)).toEqual({
      agentId: "main",
      sessionKey: "agent:main:telegram:direct:42",
      chatType: "direct",
    });
    expect(
      defaultRoute(
        channel.inbound({ text: "x", conversation: { chatType: "group", chatId: "-100" } }),
        config,
      ),
    ).toEqual({ agentId: "ops", sessionKey: "agent:ops:telegram:group:-100", chatType: "group" });
    const slack = new TestChannel({ id: "slack" });
    expect(
      defaultRoute(
        slack.inbound({ text: "x", conversation: { chatType: "channel", chatId: "C1", threadId: "171.5" } }),
        config,
      ).sessionKey,
    ).toBe("agent:main:slack:channel:c1:thread:171.5");
  });
});

describe("defaultAccess", () => {
  it("follows the channel's settings and makes only named allowFrom senders the owner", () => {
    const config = parseConfig({
      channels: {
        telegram: { dmPolicy: "allowlist", allowFrom: ["42", "@ada"] },
        webchat: { dmPolicy: "open", allowFrom: ["*"] },
      },
    });
    expect(defaultAccess(channel.inbound({ text: "x", sender: { id: "42" } }), config, {})).toMatchObject({
      allowed: true,
      senderIsOwner: true,
    });
    expect(defaultAccess(channel.inbound({ text: "x", sender: { id: "7" } }), config, {})).toMatchObject({
      allowed: false,
    });
    const webchat = new TestChannel({ id: "webchat" });
    expect(defaultAccess(webchat.inbound({ text: "x" }), config, {})).toMatchObject({
      allowed: true,
      senderIsOwner: false,
    });
    const slack = new TestChannel({ id: "slack" });
    expect(defaultAccess(slack.inbound({ text: "x" }), config, {})).toMatchObject({
      allowed: false,
      explanation: expect.stringContaining("not configured"),
    });
  });

  it("asks for pairing under dmPolicy pairing, and admits a paired sender", () => {
    const config = parseConfig({ channels: { telegram: { dmPolicy: "pairing" } } });
    const message = channel.inbound({ text: "x", sender: { id: "9" } });
    expect(defaultAccess(message, config, {})).toMatchObject({ allowed: false, pairing: true });
    expect(defaultAccess(message, config, { pairedSenders: new Set(["9"]) })).toMatchObject({
      allowed: true,
    });
  });
});
