// "Safe to expose": a session people other than the owner can reach (a non-owner sender, a group or channel,
// a channel whose DMs are open) gets no unsandboxed exec/write/edit unless `nonOwnerHostTools` grants it;
// CLI and cron turns stay the owner's. Through the kernel for real: prepareSession on a SQLite store in a
// temp dir, and one turn through the real executor with pi's faux provider.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { createKernelHarness, type KernelHarness } from "../test/harness.ts";
import type { MessageContext, PreparedSession, TurnOutcome } from "./types.ts";

let h: KernelHarness;
afterEach(async () => {
  await h?.close();
});

const HOST_TOOLS = ["exec", "write", "edit"];

function decision(prepared: PreparedSession, tool: string) {
  const found = prepared.toolDecisions.find((item) => item.tool === tool);
  if (found === undefined) throw new Error(`the executor offers no ${tool} tool`);
  return found;
}

function hostToolsAllowed(prepared: PreparedSession): boolean[] {
  return HOST_TOOLS.map((tool) => decision(prepared, tool).allowed);
}

const channels = {
  telegram: {
    dmPolicy: "pairing",
    allowFrom: ["42"],
    accounts: { public: { dmPolicy: "open", allowFrom: ["*"] } },
  },
  slack: { dmPolicy: "open", allowFrom: ["*"] },
};

async function prepare(sessionKey: string, messageContext?: MessageContext) {
  return h.kernel.prepareSession({ sessionKey, ...(messageContext ? { messageContext } : {}) });
}

describe("non-owner sessions and host tools, through prepareSession", () => {
  it("keeps host tools for owner turns: no message context (cron, the CLI) and the CLI's own context", async () => {
    h = await createKernelHarness({ config: { channels } });
    const cron = await prepare("cron:nightly");
    expect(cron.toolPolicyContext.reachableByNonOwners).toBe(false);
    expect(hostToolsAllowed(cron)).toEqual([true, true, true]);
    const cli = await prepare("cli", { channel: "cli", chatType: "direct", senderIsOwner: true });
    expect(cli.toolPolicyContext.reachableByNonOwners).toBe(false);
    expect(hostToolsAllowed(cli)).toEqual([true, true, true]);
    // The owner's DM on a pairing channel is the owner's too.
    const ownerDm = await prepare("telegram:direct:42", {
      channel: "telegram",
      accountId: "default",
      chatType: "direct",
      senderId: "42",
      senderIsOwner: true,
    });
    expect(hostToolsAllowed(ownerDm)).toEqual([true, true, true]);
  });

  it("removes them for a non-owner sender, a group, a channel and an open DM channel (an account's setting first)", async () => {
    h = await createKernelHarness({ config: { channels } });
    const cases: [string, MessageContext][] = [
      ["paired stranger", { channel: "telegram", chatType: "direct", senderId: "7", senderIsOwner: false }],
      [
        "owner in a group",
        { channel: "telegram", chatType: "group", groupId: "-100", senderId: "42", senderIsOwner: true },
      ],
      ["a channel post", { channel: "telegram", chatType: "channel", groupId: "@news", senderIsOwner: true }],
      [
        "owner on an open DM channel",
        { channel: "slack", chatType: "direct", senderId: "U1", senderIsOwner: true },
      ],
      [
        "owner on an open account",
        { channel: "telegram", accountId: "PUBLIC", chatType: "direct", senderId: "42", senderIsOwner: true },
      ],
    ];
    const prepared = new Map<string, PreparedSession>();
    for (const [name, context] of cases) {
      prepared.set(name, await prepare(`case:${name.replaceAll(" ", "-")}`, context));
    }
    for (const [name, session] of prepared) {
      expect([name, session.toolPolicyContext.reachableByNonOwners]).toEqual([name, true]);
      expect([name, ...hostToolsAllowed(session)]).toEqual([name, false, false, false]);
      expect([name, decision(session, "read").allowed]).toEqual([name, true]);
    }
    const stranger = prepared.get("paired stranger");
    if (stranger === undefined) throw new Error("not prepared");
    const exec = decision(stranger, "exec");
    expect(exec).toMatchObject({ allowed: false, kind: "non-owner-host", layer: "non-owner-host" });
    expect(exec.rule).toBe(
      'deny "exec": people who are not the owner can reach this session and it is not sandboxed; tools.nonOwnerHostTools: true lifts this rule',
    );
  });

  it("gives them back when the config grants it: the agent's value over the global one", async () => {
    h = await createKernelHarness({
      config: {
        channels,
        tools: { nonOwnerHostTools: true },
        agents: {
          list: [
            { id: "main", default: true },
            { id: "locked", tools: { nonOwnerHostTools: false } },
          ],
        },
      },
    });
    const stranger: MessageContext = {
      channel: "slack",
      chatType: "direct",
      senderId: "U9",
      senderIsOwner: false,
    };
    expect(hostToolsAllowed(await prepare("slack:direct:u9", stranger))).toEqual([true, true, true]);
    const locked = await h.kernel.prepareSession({
      agentId: "locked",
      sessionKey: "agent:locked:x",
      messageContext: stranger,
    });
    expect(hostToolsAllowed(locked)).toEqual([false, false, false]);
    expect(decision(locked, "write").rule).toContain(
      "agents.list[1].tools.nonOwnerHostTools: true lifts this rule",
    );
  });

  it("leaves a sandboxed session to the sandbox policy", async () => {
    h = await createKernelHarness({ config: { channels } });
    const prepared = await h.kernel.prepareSession({
      sessionKey: "telegram:group:-100",
      messageContext: { channel: "telegram", chatType: "group", groupId: "-100", senderIsOwner: false },
      runOptions: { sandboxRequired: true },
    });
    expect(prepared.toolPolicyContext).toMatchObject({ sandboxed: true, reachableByNonOwners: true });
    expect(prepared.toolPolicy.layers.map((layer) => layer.kind)).toContain("sandbox");
    expect(prepared.toolPolicy.layers.map((layer) => layer.kind)).not.toContain("non-owner-host");
    expect(hostToolsAllowed(prepared)).toEqual([true, true, true]);
  });
});

describe("a stranger's turn through the real executor", () => {
  it("cannot write a file on the host, and the run record says why", async () => {
    h = await createKernelHarness({ config: { channels } });
    h.model
      .on("save it", () =>
        fauxAssistantMessage([fauxToolCall("write", { path: "pwned.txt", content: "hi" })], {
          stopReason: "toolUse",
        }),
      )
      .on("save it", () => fauxAssistantMessage("I cannot."));
    const prepared = await prepare("slack:direct:u9", {
      channel: "slack",
      chatType: "direct",
      senderId: "U9",
      senderIsOwner: false,
    });
    const outcome = await h.kernel.executeTurn(prepared, { prompt: "save it" });
    expect(outcome.status).toBe("ok");
    expect(existsSync(join(h.workspaceDir, "pwned.txt"))).toBe(false);
    const stored = await h.store.runs.events(outcome.runId);
    const decisions = stored[0]?.data as TurnOutcome["decisions"];
    expect(decisions.toolPolicy).toContain(
      'write: blocked by non-owner-host — deny "write": people who are not the owner can reach this session and it is not sandboxed; tools.nonOwnerHostTools: true lifts this rule',
    );
  });
});
