// The gateway end to end: a TestChannel in, real kernel turns against tooling/fake-llm over HTTP, the channel's
// recorded sends out. Covers replies, block streaming, threading, silent and media directives, the message
// tool's duplicate filter, access control, one user-facing message per error, arrival order on one session,
// and a graceful shutdown that keeps accepted messages.
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fault, reply, toolCall } from "@agent-kernel/fake-llm";
import { openKernelStore, showRun } from "@agent-kernel/kernel";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { createGatewayHarness, type GatewayHarness } from "../test/gateway-harness.ts";

async function harness(
  onTestFinished: (fn: OnTestFinishedHandler) => void,
  ...args: Parameters<typeof createGatewayHarness>
): Promise<GatewayHarness> {
  const h = await createGatewayHarness(...args);
  onTestFinished(() => h.close());
  return h;
}

const LONG_PARAGRAPHS = Array.from(
  { length: 4 },
  (_, i) => `Paragraph ${i + 1} says something worth reading about the plan, in enough words to stand alone.`,
).join("\n\n");

describe.concurrent("auto-reply gateway", () => {
  it("answers a direct message in its conversation, with typing first, and stores the run as auto-reply", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply("Hello there."));
    await h.channel.receive({ text: "hi" });
    await h.gateway.idle();
    expect(h.channel.sent).toEqual([
      {
        messageId: "out-2",
        chatId: "u1",
        accountId: "default",
        text: "Hello there.",
        media: undefined,
        isBlock: false,
      },
    ]);
    expect(h.channel.typing.length).toBeGreaterThan(0);
    const turn = h.turns[0];
    expect(turn?.outcome?.status).toBe("ok");
    expect(turn?.route.sessionKey).toBe("agent:main:main");
    expect(turn?.outcome?.decisions.entryPoint).toBe("auto-reply");
    expect(h.llm.requests[0]?.body).toMatchObject({
      messages: expect.arrayContaining([{ role: "user", content: [{ type: "text", text: "hi" }] }]),
    });
    const store = await openKernelStore({ stateDir: h.stateDir });
    try {
      const run = await showRun(store, turn?.outcome?.runId ?? "");
      expect(run?.run).toMatchObject({ entryPoint: "auto-reply", status: "succeeded" });
    } finally {
      await store.close();
    }
    // Handled messages leave the inbox.
    expect(readdirSync(join(h.stateDir, "auto-reply", "inbox"))).toEqual([]);
  });

  it("streams block replies and does not send the final text again", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished, {
      agents: {
        defaults: {
          blockStreamingDefault: "on",
          blockStreamingChunk: { minChars: 20, maxChars: 120 },
          blockStreamingCoalesce: { idleMs: 0, minChars: 1 },
        },
      },
    });
    h.llm.enqueue(reply(LONG_PARAGRAPHS));
    await h.channel.receive({ text: "write" });
    await h.gateway.idle();
    expect(h.channel.sent.length).toBeGreaterThan(1);
    expect(h.channel.sent.every((message) => message.isBlock === true)).toBe(true);
    expect(h.channel.texts().join("\n\n")).toBe(LONG_PARAGRAPHS);
  });

  it("threads [[reply_to_current]] to the inbound message, sends MEDIA: lines as media, and stays silent on NO_REPLY", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { session: { dmScope: "per-channel-peer" } });
    h.llm.enqueue(
      reply("[[reply_to_current]] Threaded answer."),
      reply("Here is the chart.\nMEDIA: https://example.com/chart.png"),
      reply("NO_REPLY"),
    );
    const first = await h.channel.receive({ text: "one" });
    await h.gateway.idle();
    await h.channel.receive({ text: "two" });
    await h.gateway.idle();
    await h.channel.receive({ text: "three" });
    await h.gateway.idle();
    expect(
      h.channel.sent.map(({ text, media, replyToMessageId }) => ({ text, media, replyToMessageId })),
    ).toEqual([
      { text: "Threaded answer.", media: undefined, replyToMessageId: first.messageId },
      {
        text: "Here is the chart.",
        media: [{ kind: "image", url: "https://example.com/chart.png" }],
        replyToMessageId: undefined,
      },
    ]);
    expect(h.turns.map((turn) => turn.outcome?.status)).toEqual(["ok", "ok", "ok"]);
    expect(h.turns[0]?.route.sessionKey).toBe("agent:main:test:direct:u1");
  });

  it("sends what the message tool sent once, not again as the reply", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(
      toolCall("message", { text: "The deployment finished without errors." }),
      reply("The deployment finished without errors."),
    );
    await h.channel.receive({ text: "status?" });
    await h.gateway.idle();
    expect(h.channel.texts()).toEqual(["The deployment finished without errors."]);
    expect(h.turns[0]?.messageToolSends).toHaveLength(1);
    expect(h.turns[0]?.outcome?.result.messagingToolTexts).toEqual([
      "The deployment finished without errors.",
    ]);
  });

  it("tells the user in one short line when the provider refuses, without the raw error", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(fault("auth", { times: "always" }));
    await h.channel.receive({ text: "hi" });
    await h.gateway.idle();
    expect(h.channel.texts()).toEqual([
      "⚠️ The model provider rejected the credentials. The operator needs to check the API key.",
    ]);
    expect(h.turns[0]?.outcome?.status).toBe("error");
    expect(h.logs.join("\n")).toMatch(/ended error \(auth/);
  });

  it("refuses senders and groups the channel settings exclude, before any model call", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, {
      channels: { test: { dmPolicy: "allowlist", allowFrom: ["owner-1"], groupPolicy: "open" } },
    });
    h.llm.enqueue(reply("for the owner"), reply("for the group"));
    await h.channel.receive({ text: "let me in", sender: { id: "stranger" } });
    await h.channel.receive({ text: "no mention", conversation: { chatType: "group", chatId: "g1" } });
    await h.channel.receive({ text: "owner here", sender: { id: "owner-1" } });
    await h.gateway.idle();
    await h.channel.receive({
      text: "@bot hi",
      conversation: { chatType: "group", chatId: "g1" },
      mentionsBot: true,
    });
    await h.gateway.idle();
    expect(h.llm.requests).toHaveLength(2);
    expect(h.channel.texts()).toEqual(["for the owner", "for the group"]);
    expect(h.turns.map((turn) => turn.route.sessionKey)).toEqual([
      "agent:main:main",
      "agent:main:test:group:g1",
    ]);
    expect(h.logs.filter((line) => line.includes("refused"))).toHaveLength(2);
  });

  it("runs messages of one session one after another, in arrival order", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply("first answer", { delayMs: 20 }), reply("second answer"));
    await Promise.all([h.channel.receive({ text: "first" }), h.channel.receive({ text: "second" })]);
    await h.gateway.idle();
    expect(h.channel.texts()).toEqual(["first answer", "second answer"]);
    // The second turn saw the first one's exchange in its context.
    const secondRequest = JSON.stringify(h.llm.requests[1]?.body);
    expect(secondRequest).toContain("first answer");
  });

  it("on stop, lets a running turn finish within the grace period", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply("finished before shutdown", { delayMs: 30 }));
    await h.channel.receive({ text: "slow" });
    await h.gateway.stop();
    expect(h.channel.texts()).toEqual(["finished before shutdown"]);
    expect(h.turns[0]?.interrupted).toBe(false);
  });

  it("on stop after the grace period, records the running turn as interrupted and keeps the queued message for the next start", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, {}, { shutdownGraceMs: 50 });
    h.llm.enqueue({ type: "stall", afterDeltas: 1 }, reply("answer after restart"));
    await h.channel.receive({ text: "stalls" });
    await h.channel.receive({ text: "queued behind it" });
    while (h.llm.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await h.gateway.stop();
    expect(h.turns).toHaveLength(1);
    expect(h.turns[0]?.interrupted).toBe(true);
    expect(h.turns[0]?.outcome?.status).toBe("aborted");
    const inbox = join(h.stateDir, "auto-reply", "inbox");
    expect(readdirSync(inbox)).toHaveLength(1);

    await h.restart();
    await h.gateway.idle();
    expect(h.turns).toHaveLength(2);
    expect(h.turns[1]?.inbound.text).toBe("queued behind it");
    expect(h.channel.texts().at(-1)).toBe("answer after restart");
    expect(readdirSync(inbox)).toEqual([]);
    const store = await openKernelStore({ stateDir: h.stateDir });
    try {
      const interrupted = await showRun(store, h.turns[0]?.outcome?.runId ?? "");
      expect(interrupted?.run.status).toBe("aborted");
    } finally {
      await store.close();
    }
  });

  it("sets aside an inbox file it cannot read instead of deleting it", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    await h.gateway.stop();
    const inbox = join(h.stateDir, "auto-reply", "inbox");
    writeFileSync(join(inbox, "000000000000001-000000001-broken.json"), "{ not json");
    await h.restart();
    await h.gateway.idle();
    expect(existsSync(join(inbox, "000000000000001-000000001-broken.json.bad"))).toBe(true);
    expect(h.logs.some((line) => line.includes("set aside"))).toBe(true);
  });

  it("an unknown model in the agent's config becomes a short message, not a crash", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { agents: { defaults: { model: "nowhere/none" } } });
    await h.channel.receive({ text: "hi" });
    await h.gateway.idle();
    expect(h.channel.texts()).toHaveLength(1);
    expect(h.channel.texts()[0]).toMatch(/^⚠️ Agent failed before reply: /);
    expect(h.channel.texts()[0]).not.toMatch(/\n\s+at /);
    expect(h.llm.requests).toHaveLength(0);
  });
});

describe.concurrent("auto-reply gateway: pairing and redelivery", () => {
  it("answers an unknown sender under dmPolicy pairing with a pairing code, and runs no turn", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { channels: { test: { dmPolicy: "pairing" } } });
    await h.channel.receive({ text: "hello?", sender: { id: "newcomer" } });
    await h.channel.receive({ text: "hello again", sender: { id: "newcomer" } });
    await h.gateway.idle();
    expect(h.llm.requests).toHaveLength(0);
    expect(h.turns).toHaveLength(0);
    const texts = h.channel.texts();
    expect(texts).toHaveLength(2);
    const code = texts[0]?.match(/Pairing code: (\S+)/)?.[1];
    expect(code).toMatch(/^[A-Z2-9]{8}$/);
    // The same sender gets the same pending code, not a new one.
    expect(texts[1]).toContain(`Pairing code: ${code}`);
  });

  it("sends a media-only message to the model as media placeholders", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply("Nice photo."));
    await h.channel.receive({ text: "", media: [{ kind: "image", fileId: "f1" }] });
    await h.gateway.idle();
    expect(h.channel.texts()).toEqual(["Nice photo."]);
    expect(JSON.stringify(h.llm.requests[0]?.body)).toContain("<media:image>");
  });

  it("accepts a redelivered message once", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.llm.enqueue(reply("only once"));
    const message = h.channel.inbound({ text: "hi", messageId: "tg-42" });
    await h.channel.receive(message);
    await h.channel.receive(message);
    await h.gateway.idle();
    expect(h.channel.texts()).toEqual(["only once"]);
    expect(h.llm.requests).toHaveLength(1);
  });
});
