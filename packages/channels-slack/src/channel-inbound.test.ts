import type { InboundMessage } from "@agent-kernel/channels-core";
import { type FakeSlack, startFakeSlack } from "@agent-kernel/fake-slack";
import { afterEach, describe, expect, it } from "vitest";
import { createSlackChannel, type SlackChannel } from "./index.ts";

let slack: FakeSlack | undefined;
let channel: SlackChannel | undefined;

afterEach(async () => {
  await channel?.stop();
  await slack?.close();
  channel = undefined;
  slack = undefined;
});

/** A started adapter against the fake; `fail` makes the handler throw for the listed texts. */
async function setup(fail: Set<string> = new Set()): Promise<{
  fake: FakeSlack;
  adapter: SlackChannel;
  received: InboundMessage[];
  url: string;
}> {
  slack = await startFakeSlack({ signingSecret: "shh", botUserId: "UBOT", teamId: "T1" });
  channel = createSlackChannel({
    botToken: slack.botToken,
    signingSecret: "shh",
    apiBaseUrl: slack.apiBaseUrl,
  });
  const received: InboundMessage[] = [];
  await channel.start({
    onMessage: async (message) => {
      if (fail.has(message.text)) throw new Error("store unavailable");
      received.push(message);
    },
  });
  const url = channel.endpointUrl;
  if (!url) throw new Error("no endpoint url after start");
  return { fake: slack, adapter: channel, received, url };
}

const dm = (text: string, ts = "1700000001.000100") => ({
  type: "message",
  channel: "D111",
  channel_type: "im",
  user: "U222",
  text,
  ts,
  team: "T1",
});

describe("Slack inbound (Events API against the fake)", () => {
  it("normalises a DM, a channel mention in a thread, a group message and files", async () => {
    const { fake, received, url, adapter } = await setup();
    expect(adapter.identity).toMatchObject({ botUserId: "UBOT", teamId: "T1" });
    expect((await fake.deliverEvent(url, dm("hi &amp; &lt;hello&gt;"))).status).toBe(200);
    await fake.deliverEvent(url, {
      type: "app_mention",
      channel: "C333",
      user: "U222",
      text: "<@UBOT> look at <@U444|ann> and <https://x.dev|this>",
      ts: "1700000002.000200",
      thread_ts: "1700000000.000001",
    });
    await fake.deliverEvent(url, {
      type: "message",
      channel: "G555",
      channel_type: "mpim",
      user: "U222",
      text: "",
      ts: "1700000003.000300",
      subtype: "file_share",
      files: [
        {
          id: "F1",
          name: "cat.png",
          mimetype: "image/png",
          url_private: "https://files.slack.com/cat.png",
          size: 42,
        },
        {
          id: "F2",
          name: "notes.pdf",
          mimetype: "application/pdf",
          url_private_download: "https://files.slack.com/n",
        },
      ],
    });
    expect(received).toHaveLength(3);
    const [direct, mention, group] = received;
    expect(direct).toMatchObject({
      channel: "slack",
      accountId: "default",
      messageId: "1700000001.000100",
      conversation: { chatType: "direct", chatId: "D111", teamId: "T1" },
      sender: { id: "U222" },
      text: "hi & <hello>",
      media: [],
      mentions: [],
      mentionsBot: false,
      timestamp: 1_700_000_001_000,
    });
    expect(direct?.conversation.threadId).toBeUndefined();
    expect(mention).toMatchObject({
      conversation: { chatType: "channel", chatId: "C333", threadId: "1700000000.000001" },
      replyToMessageId: "1700000000.000001",
      text: "@UBOT look at @ann and this (https://x.dev)",
      mentions: [{ userId: "UBOT" }, { userId: "U444", username: "ann" }],
      mentionsBot: true,
    });
    expect(group).toMatchObject({
      conversation: { chatType: "group", chatId: "G555" },
      media: [
        {
          kind: "image",
          fileId: "F1",
          fileName: "cat.png",
          mimeType: "image/png",
          sizeBytes: 42,
          url: "https://files.slack.com/cat.png",
        },
        { kind: "document", fileId: "F2", url: "https://files.slack.com/n" },
      ],
    });
  });

  it("ignores the bot's own messages, other bots and non-message subtypes", async () => {
    const { fake, received, url } = await setup();
    const ignored = [
      { ...dm("echo"), user: "UBOT" },
      { ...dm("other bot", "1700000005.000001"), bot_id: "B999" },
      { ...dm("edited", "1700000006.000001"), subtype: "message_changed" },
      { ...dm("joined", "1700000007.000001"), subtype: "channel_join" },
      { type: "reaction_added", user: "U222", reaction: "eyes" },
    ];
    for (const event of ignored) expect((await fake.deliverEvent(url, event)).status).toBe(200);
    await fake.deliverEvent(url, dm("real", "1700000008.000001"));
    expect(received.map((m) => m.text)).toEqual(["real"]);
  });

  it("handles a mention once although Slack sends both message and app_mention", async () => {
    const { fake, received, url } = await setup();
    const base = {
      channel: "C1",
      channel_type: "channel",
      user: "U2",
      text: "<@UBOT> hi",
      ts: "1700000010.000001",
    };
    await fake.deliverEvent(url, { type: "message", ...base });
    await fake.deliverEvent(url, { type: "app_mention", ...base });
    expect(received).toHaveLength(1);
    expect(received[0]?.mentionsBot).toBe(true);
  });

  it("answers url_verification with the challenge", async () => {
    const { fake, url } = await setup();
    const result = await fake.sendUrlVerification(url, "chal-123");
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body)).toEqual({ challenge: "chal-123" });
  });
});

describe("Slack request verification", () => {
  it("rejects forged signatures, stale timestamps and missing headers without calling the handler", async () => {
    const { fake, received, url } = await setup();
    const forged = await fake.deliverEvent(url, dm("forged"), { forgeWithSecret: "guess" });
    const stale = await fake.deliverEvent(url, dm("stale"), {
      timestampSeconds: Math.floor(Date.now() / 1000) - 301,
    });
    const future = await fake.deliverEvent(url, dm("future"), {
      timestampSeconds: Math.floor(Date.now() / 1000) + 301,
    });
    const garbage = await fake.deliverEvent(url, dm("garbage"), { signature: "v0=deadbeef" });
    const unsigned = await fetch(url, {
      method: "POST",
      body: JSON.stringify({ type: "event_callback", event: dm("x") }),
    });
    const challenge = await fake.sendUrlVerification(url, "c", { forgeWithSecret: "guess" });
    expect([
      forged.status,
      stale.status,
      future.status,
      garbage.status,
      unsigned.status,
      challenge.status,
    ]).toEqual([401, 401, 401, 401, 401, 401]);
    expect(challenge.body).toBe("");
    expect(received).toEqual([]);
    // a body changed after signing fails too
    const valid = await fake.deliverEvent(url, dm("valid"));
    const tampered = await fake.replay(url, {
      ...valid.request,
      body: valid.request.body.replace("valid", "evil!"),
    });
    expect([valid.status, tampered.status]).toEqual([200, 401]);
    expect(received.map((m) => m.text)).toEqual(["valid"]);
  });

  it("refuses a byte-identical replay of an accepted request", async () => {
    const { fake, received, url } = await setup();
    const first = await fake.deliverEvent(url, dm("once"));
    const replayed = await fake.replay(url, first.request);
    expect([first.status, replayed.status]).toEqual([200, 401]);
    expect(received).toHaveLength(1);
  });

  it("acknowledges Slack's retries of an accepted event without handling them twice", async () => {
    const { fake, received, url } = await setup();
    const first = await fake.deliverEvent(url, dm("retried"), { eventId: "EvSAME" });
    // a retry signed in the same second is byte-identical; a later one carries a new timestamp and signature
    const sameSecond = await fake.replay(url, {
      ...first.request,
      headers: { ...first.request.headers, "x-slack-retry-num": "1" },
    });
    const later = await fake.deliverEvent(url, dm("retried"), {
      eventId: "EvSAME",
      retryNum: 2,
      timestampSeconds: Math.floor(Date.now() / 1000) + 2,
    });
    expect([first.status, sameSecond.status, later.status]).toEqual([200, 200, 200]);
    expect(received).toHaveLength(1);
  });

  it("answers 500 when the handler fails, so Slack's retry is handled", async () => {
    const fail = new Set(["flaky"]);
    const { fake, received, url } = await setup(fail);
    const first = await fake.deliverEvent(url, dm("flaky"), { eventId: "EvFLAKY" });
    expect(first.status).toBe(500);
    fail.clear();
    const retry = await fake.deliverEvent(url, dm("flaky"), { eventId: "EvFLAKY", retryNum: 1 });
    expect(retry.status).toBe(200);
    expect(received.map((m) => m.text)).toEqual(["flaky"]);
  });

  it("serves only POST on its path", async () => {
    const { url } = await setup();
    expect((await fetch(url)).status).toBe(405);
    expect((await fetch(new URL("/other", url), { method: "POST" })).status).toBe(404);
  });
});

describe("Slack adapter lifecycle", () => {
  it("fails to start with a clear error on a bad token", async () => {
    slack = await startFakeSlack();
    channel = createSlackChannel({
      botToken: "xoxb-wrong",
      signingSecret: "s",
      apiBaseUrl: slack.apiBaseUrl,
    });
    await expect(channel.start({ onMessage: async () => {} })).rejects.toThrow(/auth\.test: invalid_auth/);
  });

  it("stops receiving on stop() and is idempotent", async () => {
    const { adapter, url } = await setup();
    await adapter.stop();
    await adapter.stop();
    await expect(fetch(url, { method: "POST" })).rejects.toThrow();
  });
});
