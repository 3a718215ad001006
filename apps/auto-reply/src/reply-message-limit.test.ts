// Messages per reply end to end (issue 19.2: a 250 KB reply had become 60 Telegram messages): the gateway,
// real kernel turns against tooling/fake-llm, and the real Telegram and Slack adapters against
// tooling/fake-telegram and tooling/fake-slack. A reply too long for `channels.<id>.maxMessagesPerReply`
// becomes at most that many messages, the last of them the whole reply as reply.md with one line; the hit is
// logged, on the handled turn and in the run's events; the session answers the next message as usual.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSlackChannel, slackOptionsFromConfig } from "@agent-kernel/channels-slack";
import { createTelegramChannel, telegramOptionsFromConfig } from "@agent-kernel/channels-telegram";
import { reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { startFakeSlack } from "@agent-kernel/fake-slack";
import { privateChat, startFakeTelegram, user } from "@agent-kernel/fake-telegram";
import { openKernelStore } from "@agent-kernel/kernel";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { testConfig } from "../test/gateway-harness.ts";
import { createAutoReplyGateway, type HandledTurn } from "./index.ts";

/** About 1 000 characters of Markdown prose: a paragraph the reply repeats. */
const PARAGRAPH = `${"The plan needs one more careful step before it ships. ".repeat(18).trim()}\n\n`;

function scratch(onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const root = mkdtempSync(join(tmpdir(), "auto-reply-limit-"));
  const workspaceDir = join(root, "workspace");
  mkdirSync(workspaceDir, { recursive: true });
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  return { stateDir: join(root, "state"), workspaceDir };
}

/** Resolves with the next handled turn. */
function turnWaiter() {
  const turns: HandledTurn[] = [];
  const waiters: ((turn: HandledTurn) => void)[] = [];
  return {
    onTurnEnd(turn: HandledTurn) {
      const wake = waiters.shift();
      if (wake) wake(turn);
      else turns.push(turn);
    },
    next(): Promise<HandledTurn> {
      const ready = turns.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

/** The gateway with the real Telegram adapter against fake-telegram and a fake LLM, config defaults otherwise. */
async function telegramGateway(
  onTestFinished: (fn: OnTestFinishedHandler) => void,
  extraConfig: Record<string, unknown> = {},
) {
  const { stateDir, workspaceDir } = scratch(onTestFinished);
  const llm = await startFakeLlm();
  onTestFinished(() => llm.close());
  const telegram = await startFakeTelegram();
  onTestFinished(() => telegram.close());
  const config = testConfig(llm.baseUrlFor("openai"), workspaceDir, {
    ...extraConfig,
    channels: {
      telegram: {
        enabled: true,
        botToken: telegram.token,
        apiBaseUrl: telegram.url,
        pollTimeoutSeconds: 1,
        dmPolicy: "open",
        allowFrom: ["*"],
      },
    },
  });
  const telegramConfig = config.channels.telegram;
  if (telegramConfig === undefined) throw new Error("no channels.telegram");
  const adapter = createTelegramChannel(telegramOptionsFromConfig(telegramConfig, { onError: () => {} }));
  const turns = turnWaiter();
  const logs: string[] = [];
  const gateway = createAutoReplyGateway({
    config,
    stateDir,
    channels: [adapter],
    kernelOptions: { executorSettings: { transientRetryDelayMs: 1 } },
    log: (line) => logs.push(line),
    onTurnEnd: turns.onTurnEnd,
  });
  await gateway.start();
  onTestFinished(() => gateway.stop());
  return { llm, telegram, turns, logs, gateway, stateDir, telegramConfig };
}

describe("messages per reply, end to end", () => {
  it("Telegram: a 250 KB reply is at most 10 messages, the last one the whole reply as reply.md", async ({
    onTestFinished,
  }) => {
    // the whole 250 KB through the turn (replyMaxChars' own cut is the next test's)
    const { llm, telegram, turns, logs, gateway, stateDir, telegramConfig } = await telegramGateway(
      onTestFinished,
      { agents: { defaults: { replyMaxChars: 300_000 } } },
    );
    expect(telegramConfig.maxMessagesPerReply).toBe(10);

    // 260 paragraphs: about 250 KB, streamed
    llm.enqueue(reply(PARAGRAPH, { repeat: 260, chunkSize: 4096 }));
    const heapBefore = process.memoryUsage().heapUsed;
    const alice = user(42, "Alice");
    telegram.pushMessage({ chat: privateChat(alice), from: alice, text: "write it all down" });
    const turn = await turns.next();
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;

    expect(turn.outcome?.status).toBe("ok");
    const botMessages = telegram.messages(42).filter((message) => message.from?.id === telegram.bot.id);
    // without the limit: more than 60 messages
    expect(botMessages).toHaveLength(10);
    const sends = telegram.sent.filter((call) => call.method !== "sendChatAction");
    expect(sends.every((call) => call.served === "ok")).toBe(true);
    expect(sends.map((call) => call.method)).toEqual([
      ...Array<string>(9).fill("sendMessage"),
      "sendDocument",
    ]);
    const document = sends[9];
    const file = document?.files[0];
    expect(file?.fileName).toBe("reply.md");
    // the file holds the whole reply; the messages before it are its beginning
    const whole = turn.outcome?.result.payloads[0]?.text ?? "";
    expect(whole.length).toBeGreaterThan(250_000);
    expect(new TextDecoder().decode(file?.bytes)).toBe(whole);
    expect(whole.startsWith(botMessages[0]?.text ?? "-")).toBe(true);
    // as the chat shows it (the request carries it escaped for MarkdownV2)
    expect(botMessages.at(-1)?.caption).toBe(
      "⚠️ This reply was too long for 10 messages (it would have been 66); the whole reply is attached as reply.md.",
    );

    expect(turn.deliveryLimit).toMatchObject({ limit: 10, skippedSends: 0, heldBackBlocks: 0 });
    expect(turn.deliveryLimit?.sends).toEqual([
      expect.objectContaining({ limit: 10, wouldBe: 66, shownChunks: 9, handling: "attached" }),
    ]);
    expect(logs.some((line) => /hit maxMessagesPerReply 10/.test(line))).toBe(true);
    // held in memory: the reply a few times over, not a copy per message (a generous bound for a loaded box)
    expect(heapGrowth).toBeLessThan(256 * 1024 * 1024);

    // the session stays usable
    llm.enqueue(reply("Short answer."));
    telegram.pushMessage({ chat: privateChat(alice), from: alice, text: "and briefly?" });
    const next = await turns.next();
    expect(next.outcome?.status).toBe("ok");
    expect(next.deliveryLimit).toBeUndefined();
    expect(telegram.messages(42).at(-1)?.text).toBe("Short answer.");

    await gateway.stop();
    const store = await openKernelStore({ stateDir });
    try {
      const events = await store.runs.events(turn.outcome?.runId ?? "");
      expect(events.at(-1)).toMatchObject({
        stream: "delivery",
        data: { phase: "reply_message_limit", channel: "telegram", limit: 10 },
      });
    } finally {
      await store.close();
    }
  }, 120_000);

  it("Telegram, default limits: a 250 KB reply is cut at replyMaxChars, then at most 10 messages with the cut reply as reply.md", async ({
    onTestFinished,
  }) => {
    const { llm, telegram, turns } = await telegramGateway(onTestFinished);
    llm.enqueue(reply(PARAGRAPH, { repeat: 260, chunkSize: 4096 }));
    const alice = user(42, "Alice");
    telegram.pushMessage({ chat: privateChat(alice), from: alice, text: "write it all down" });
    const turn = await turns.next();
    expect(turn.outcome?.result.reason).toBe("reply_size_limit");
    const botMessages = telegram.messages(42).filter((message) => message.from?.id === telegram.bot.id);
    expect(botMessages.length).toBeLessThanOrEqual(10);
    const document = telegram.sent.find((call) => call.method === "sendDocument");
    const attached = new TextDecoder().decode(document?.files[0]?.bytes);
    expect(attached.length).toBe(
      200_000 + "\n\n⚠️ Cut: the reply reached its limit of 200000 characters.".length,
    );
    expect(attached.endsWith("⚠️ Cut: the reply reached its limit of 200000 characters.")).toBe(true);
    llm.enqueue(reply("Short answer."));
    telegram.pushMessage({ chat: privateChat(alice), from: alice, text: "and briefly?" });
    expect((await turns.next()).outcome?.status).toBe("ok");
    expect(telegram.messages(42).at(-1)?.text).toBe("Short answer.");
  }, 120_000);

  it("Slack: past maxMessagesPerReply the whole reply is uploaded as reply.md with its line", async ({
    onTestFinished,
  }) => {
    const { stateDir, workspaceDir } = scratch(onTestFinished);
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const slack = await startFakeSlack({ signingSecret: "shh", botUserId: "UBOT", teamId: "T1" });
    onTestFinished(() => slack.close());
    const config = testConfig(llm.baseUrlFor("openai"), workspaceDir, {
      channels: {
        slack: {
          enabled: true,
          botToken: slack.botToken,
          signingSecret: "shh",
          apiBaseUrl: slack.apiBaseUrl,
          dmPolicy: "open",
          allowFrom: ["*"],
          maxMessagesPerReply: 3,
        },
      },
    });
    const slackConfig = config.channels.slack;
    if (slackConfig === undefined) throw new Error("no channels.slack");
    const adapter = createSlackChannel(slackOptionsFromConfig(slackConfig));
    const turns = turnWaiter();
    const gateway = createAutoReplyGateway({
      config,
      stateDir,
      channels: [adapter],
      kernelOptions: { executorSettings: { transientRetryDelayMs: 1 } },
      log: () => {},
      onTurnEnd: turns.onTurnEnd,
    });
    await gateway.start();
    onTestFinished(() => gateway.stop());

    // 30 paragraphs, about 30 000 characters: 8 messages of 4 000 without the limit
    llm.enqueue(reply(PARAGRAPH, { repeat: 30, chunkSize: 4096 }));
    const event = {
      type: "message",
      channel: "D111",
      channel_type: "im",
      user: "U222",
      text: "go",
      ts: "1.1",
    };
    expect((await slack.deliverEvent(adapter.endpointUrl ?? "", event)).status).toBe(200);
    const turn = await turns.next();

    expect(turn.outcome?.status).toBe("ok");
    const posted = slack.messages.filter((message) => message.channel === "D111");
    const uploaded = slack.files.filter((file) => file.channel === "D111");
    expect(posted.length + uploaded.length).toBe(3);
    expect(posted).toHaveLength(2);
    expect(uploaded).toHaveLength(1);
    expect(uploaded[0]).toMatchObject({ filename: "reply.md", completed: true });
    expect(uploaded[0]?.initialComment).toMatch(/too long for 3 messages .*attached as reply\.md/);
    const whole = turn.outcome?.result.payloads[0]?.text ?? "";
    expect(whole.length).toBeGreaterThan(29_000);
    expect(new TextDecoder().decode(uploaded[0]?.bytes)).toBe(whole);
    expect(turn.deliveryLimit?.sends).toEqual([
      expect.objectContaining({ limit: 3, shownChunks: 2, handling: "attached" }),
    ]);
  }, 120_000);
});
