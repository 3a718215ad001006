import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChannelError } from "@agent-kernel/channels-core";
import { configSchema } from "@agent-kernel/config";
import { type FakeSlack, startFakeSlack } from "@agent-kernel/fake-slack";
import { afterEach, describe, expect, it } from "vitest";
import {
  createSlackChannel,
  type SlackChannel,
  type SlackChannelOptions,
  slackOptionsFromConfig,
} from "./index.ts";

let slack: FakeSlack | undefined;
let channel: SlackChannel | undefined;

afterEach(async () => {
  await channel?.stop();
  await slack?.close();
  channel = undefined;
  slack = undefined;
});

async function setup(
  extra: Partial<SlackChannelOptions> = {},
): Promise<{ fake: FakeSlack; adapter: SlackChannel }> {
  slack = await startFakeSlack();
  channel = createSlackChannel({
    botToken: slack.botToken,
    signingSecret: "s",
    apiBaseUrl: slack.apiBaseUrl,
    ...extra,
  });
  await channel.start({ onMessage: async () => {} });
  return { fake: slack, adapter: channel };
}

const target = { accountId: "default", chatId: "C1" };

describe("Slack outbound (Web API against the fake)", () => {
  it("formats Markdown as mrkdwn with Slack's escaping", async () => {
    const { fake, adapter } = await setup();
    const result = await adapter.send({
      target,
      text: "**Done** <script> & [link](https://x.dev), cc <@U777>",
    });
    expect(fake.messages.map((m) => m.text)).toEqual([
      "*Done* &lt;script&gt; &amp; <https://x.dev|link>, cc <@U777>",
    ]);
    expect(fake.callsTo("chat.postMessage")[0]?.params).toMatchObject({ channel: "C1", mrkdwn: true });
    expect(fake.callsTo("chat.postMessage")[0]?.token).toBe(fake.botToken);
    expect(result.messages).toEqual([{ messageId: fake.messages[0]?.ts, chatId: "C1" }]);
  });

  it("chunks at textChunkLimit without breaking a code fence", async () => {
    const { fake, adapter } = await setup({ textChunkLimit: 200 });
    const code = Array.from({ length: 12 }, (_, i) => `const value${i} = ${i};`).join("\n");
    const text = `Intro paragraph.\n\n\`\`\`ts\n${code}\n\`\`\`\n\n${"Closing words. ".repeat(10)}`;
    const result = await adapter.send({ target, text });
    expect(result.messages.length).toBeGreaterThan(1);
    expect(fake.messages).toHaveLength(result.messages.length);
    for (const message of fake.messages) {
      expect(message.text.length).toBeLessThanOrEqual(200);
      expect((message.text.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
    expect(fake.messages.map((m) => m.text).join("\n")).toContain("const value11 = 11;");
  });

  it("reports the 4000-character default limit and no typing support in its capabilities", async () => {
    const { fake, adapter } = await setup();
    expect(adapter.capabilities).toMatchObject({
      maxTextLength: 4000,
      typing: false,
      threads: true,
      edits: true,
      dialect: "slack-mrkdwn",
    });
    await adapter.sendTyping(target);
    expect(fake.calls.map((c) => c.method)).toEqual(["auth.test"]);
  });

  it("threads replies: threadId and replyToMessageId map to thread_ts", async () => {
    const { fake, adapter } = await setup();
    await adapter.send({ target: { ...target, threadId: "111.1" }, text: "in thread" });
    await adapter.send({ target: { ...target, replyToMessageId: "222.2" }, text: "reply" });
    const sent = await adapter.send({ target, text: "top level" });
    expect(fake.messages.map((m) => [m.text, m.threadTs])).toEqual([
      ["in thread", "111.1"],
      ["reply", "222.2"],
      ["top level", undefined],
    ]);
    expect(sent.messages[0]?.threadId).toBeUndefined();
  });

  it("sends media by URL as a link and uploads bytes and files through the external upload flow", async () => {
    const { fake, adapter } = await setup();
    const dir = await mkdtemp(join(tmpdir(), "slack-media-"));
    try {
      const path = join(dir, "report.txt");
      await writeFile(path, "quarterly numbers");
      const result = await adapter.send({
        target: { ...target, threadId: "9.9" },
        media: [
          {
            kind: "image",
            url: "https://cdn.example/a.png?x=1&y=2",
            fileName: "a.png",
            caption: "**chart**",
          },
          {
            kind: "document",
            data: new TextEncoder().encode("hello"),
            fileName: "hello.txt",
            mimeType: "text/plain",
          },
          { kind: "document", path },
        ],
      });
      expect(fake.messages.map((m) => [m.text, m.threadTs])).toEqual([
        ["*chart*\n<https://cdn.example/a.png?x=1&amp;y=2|a.png>", "9.9"],
      ]);
      expect(
        fake.files.map((f) => [
          f.filename,
          new TextDecoder().decode(f.bytes),
          f.channel,
          f.threadTs,
          f.completed,
        ]),
      ).toEqual([
        ["hello.txt", "hello", "C1", "9.9", true],
        ["report.txt", "quarterly numbers", "C1", "9.9", true],
      ]);
      expect(result.messages.map((m) => m.messageId)).toEqual([
        fake.messages[0]?.ts,
        fake.files[0]?.id,
        fake.files[1]?.id,
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("edits a sent message with chat.update", async () => {
    const { fake, adapter } = await setup();
    const sent = await adapter.send({ target, text: "draft" });
    const ts = sent.messages[0]?.messageId ?? "";
    await adapter.edit?.(target, ts, "**final** & done");
    expect(fake.messages[0]?.edits).toEqual(["*final* &amp; done"]);
  });
});

describe("Slack rate limits and errors", () => {
  it("waits out a 429's Retry-After and then succeeds", async () => {
    const { fake, adapter } = await setup();
    fake.failNext("chat.postMessage", { kind: "rate-limited", retryAfterSeconds: 1 });
    const result = await adapter.send({ target, text: "eventually" });
    expect(fake.callsTo("chat.postMessage").map((c) => c.status)).toEqual([429, 200]);
    expect(result.messages).toHaveLength(1);
    expect(fake.messages.map((m) => m.text)).toEqual(["eventually"]);
  });

  it("gives up after the retry budget with a retryable ChannelError carrying retryAfterMs", async () => {
    const { fake, adapter } = await setup({ maxRateLimitRetries: 0 });
    fake.failNext("chat.postMessage", { kind: "rate-limited", retryAfterSeconds: 30 });
    const error = await adapter.send({ target, text: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChannelError);
    expect(error).toMatchObject({ channel: "slack", status: 429, retryAfterMs: 30_000, retryable: true });
  });

  it("does not wait out a Retry-After longer than maxRetryAfterMs", async () => {
    const { fake, adapter } = await setup({ maxRetryAfterMs: 5_000 });
    fake.failNext("chat.postMessage", { kind: "rate-limited", retryAfterSeconds: 120 });
    await expect(adapter.send({ target, text: "x" })).rejects.toMatchObject({ retryAfterMs: 120_000 });
    expect(fake.callsTo("chat.postMessage")).toHaveLength(1);
  });

  it("stop() ends a rate-limit wait at once with a retryable error", async () => {
    const { fake, adapter } = await setup();
    fake.failNext("chat.postMessage", { kind: "rate-limited", retryAfterSeconds: 50 });
    const sending = adapter.send({ target, text: "x" }).catch((e: unknown) => e);
    await expect.poll(() => fake.callsTo("chat.postMessage").length).toBe(1);
    await adapter.stop();
    expect(await sending).toMatchObject({
      message: expect.stringContaining("stopped while waiting"),
      retryable: true,
    });
  });

  it("does not replay a server error (a second post could duplicate the message)", async () => {
    const { fake, adapter } = await setup();
    fake.failNext("chat.postMessage", { kind: "server-error" });
    await expect(adapter.send({ target, text: "x" })).rejects.toMatchObject({ status: 500, retryable: true });
    expect(fake.callsTo("chat.postMessage")).toHaveLength(1);
  });

  it("surfaces Slack errors such as invalid_auth as non-retryable", async () => {
    const { fake, adapter } = await setup();
    fake.failNext("chat.postMessage", { kind: "error", error: "invalid_auth" });
    await expect(adapter.send({ target, text: "x" })).rejects.toMatchObject({
      message: expect.stringContaining("chat.postMessage: invalid_auth"),
      retryable: false,
    });
  });
});

describe("slackOptionsFromConfig", () => {
  it("reads channels.slack and names a missing token or secret", () => {
    const parse = (slackConfig: Record<string, unknown>) => {
      const slackChannel = configSchema.parse({ channels: { slack: slackConfig } }).channels.slack;
      if (!slackChannel) throw new Error("no slack config");
      return slackChannel;
    };
    expect(
      slackOptionsFromConfig(parse({ botToken: "xoxb-1", signingSecret: "s", textChunkLimit: 3000 })),
    ).toMatchObject({
      botToken: "xoxb-1",
      signingSecret: "s",
      textChunkLimit: 3000,
    });
    expect(slackOptionsFromConfig(parse({ mode: "socket", botToken: "x", appToken: "xapp" }))).toMatchObject({
      mode: "socket",
      appToken: "xapp",
    });
    expect(() => slackOptionsFromConfig(parse({ mode: "socket", botToken: "x" }))).toThrow(
      /appToken is required/,
    );
    expect(() => slackOptionsFromConfig(parse({ botToken: "x" }))).toThrow(/signingSecret is required/);
  });
});
