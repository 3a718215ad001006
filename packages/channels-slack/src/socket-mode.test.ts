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

async function setup(fail: Set<string> = new Set()) {
  slack = await startFakeSlack({ botUserId: "UBOT" });
  channel = createSlackChannel({
    mode: "socket",
    botToken: slack.botToken,
    appToken: slack.appToken,
    apiBaseUrl: slack.apiBaseUrl,
    reconnectDelayMs: 10,
  });
  const received: InboundMessage[] = [];
  await channel.start({
    onMessage: async (message) => {
      if (fail.has(message.text)) throw new Error("store unavailable");
      received.push(message);
    },
  });
  return { fake: slack, adapter: channel, received };
}

const dm = (text: string, ts: string) => ({
  type: "message",
  channel: "D1",
  channel_type: "im",
  user: "U2",
  text,
  ts,
});

describe("Slack Socket Mode (against the fake)", () => {
  it("receives events over the socket, normalised, and acknowledges each once handled", async () => {
    const { fake, adapter, received } = await setup();
    expect(adapter.endpointUrl).toBeUndefined();
    const ack = await fake.deliverSocketEvent(dm("over the socket <@UBOT>", "1700000001.000001"), {
      eventId: "EvA",
    });
    expect(ack.eventId).toBe("EvA");
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      conversation: { chatType: "direct", chatId: "D1" },
      text: "over the socket @UBOT",
      mentionsBot: true,
    });
  });

  it("acknowledges a redelivered envelope without handling it twice, and leaves a failed one unacknowledged", async () => {
    const fail = new Set(["flaky"]);
    const { fake, received } = await setup(fail);
    await fake.deliverSocketEvent(dm("once", "1.1"), { eventId: "EvSame" });
    await fake.deliverSocketEvent(dm("once", "1.1"), { eventId: "EvSame", retryAttempt: 1 });
    expect(received.map((m) => m.text)).toEqual(["once"]);
    await expect(
      fake.deliverSocketEvent(dm("flaky", "2.2"), { eventId: "EvF", ackTimeoutMs: 300 }),
    ).rejects.toThrow(/not acknowledged/);
    fail.clear();
    await fake.deliverSocketEvent(dm("flaky", "2.2"), { eventId: "EvF", retryAttempt: 1 });
    expect(received.map((m) => m.text)).toEqual(["once", "flaky"]);
  });

  it("reconnects when Slack asks it to (disconnect) and keeps receiving", async () => {
    const { fake, received } = await setup();
    expect(fake.socketConnections).toBe(1);
    fake.disconnectSockets();
    await expect.poll(() => fake.socketConnections).toBe(2);
    await fake.waitForSocket();
    await fake.deliverSocketEvent(dm("after refresh", "3.3"));
    expect(received.map((m) => m.text)).toEqual(["after refresh"]);
    expect(fake.callsTo("apps.connections.open").map((c) => c.token)).toEqual([fake.appToken, fake.appToken]);
  });

  it("fails to start with a clear error on a bad app token, and stops cleanly", async () => {
    slack = await startFakeSlack();
    channel = createSlackChannel({
      mode: "socket",
      botToken: slack.botToken,
      appToken: "xapp-wrong",
      apiBaseUrl: slack.apiBaseUrl,
    });
    await expect(channel.start({ onMessage: async () => {} })).rejects.toThrow(
      /apps\.connections\.open: invalid_auth/,
    );
    expect(() => createSlackChannel({ mode: "socket", botToken: "xoxb-1" })).toThrow(/appToken/);
  });

  it("closes its socket on stop()", async () => {
    const { fake, adapter } = await setup();
    expect(fake.openSockets).toBe(1);
    await adapter.stop();
    await expect.poll(() => fake.openSockets).toBe(0);
    expect(fake.socketConnections).toBe(1);
  });
});
