// The in-memory TestChannel: lifecycle, inbound validation, outbound formatting and splitting, failures.
import { describe, expect, it } from "vitest";
import { ChannelError, type InboundMessage } from "../contract.ts";
import { withChannelRetry } from "../retry.ts";
import { TestChannel } from "./test-channel.ts";

describe("TestChannel", () => {
  it("delivers inbound messages to the handler after start, validated and filled with defaults", async () => {
    const channel = new TestChannel({ id: "telegram" });
    const received: InboundMessage[] = [];
    await expect(channel.receive({ text: "early" })).rejects.toThrow(/before start/);
    await channel.start({ onMessage: async (m) => void received.push(m) });
    const message = await channel.receive({ text: "hi", sender: { id: "7", username: "bob" } });
    expect(message).toMatchObject({
      channel: "telegram",
      accountId: "default",
      conversation: { chatType: "direct", chatId: "7" },
      sender: { id: "7", username: "bob" },
    });
    expect(received).toEqual([message]);
    await expect(
      channel.receive({ text: "x", sender: { id: "" }, conversation: { chatId: "c" } }),
    ).rejects.toThrow(/sender.id must not be empty/);
    await channel.stop();
    expect(channel.started).toBe(false);
  });

  it("formats and splits outbound text for its dialect and limit, and records typing and edits", async () => {
    const channel = new TestChannel({ capabilities: { dialect: "telegram-html", maxTextLength: 20 } });
    const result = await channel.send({
      target: { accountId: "default", chatId: "c1", replyToMessageId: "in-1" },
      text: "**one** two three four five six",
    });
    expect(result.messages.length).toBeGreaterThan(1);
    expect(channel.texts()[0]).toBe("<b>one</b> two three");
    expect(channel.sent.every((m) => m.text.length <= 20)).toBe(true);
    expect(channel.sent[0]?.replyToMessageId).toBe("in-1");
    expect(channel.sent[1]?.replyToMessageId).toBeUndefined();
    await channel.sendTyping({ accountId: "default", chatId: "c1" });
    expect(channel.typing).toHaveLength(1);
    const id = result.messages[0]?.messageId ?? "";
    await channel.edit({ accountId: "default", chatId: "c1" }, id, "edited");
    expect(channel.sent[0]?.text).toBe("edited");
  });

  it("throws scripted failures, which withChannelRetry rides out", async () => {
    const channel = new TestChannel();
    channel.failNextSends(
      new ChannelError("test", "slow down", { status: 429, retryAfterMs: 5, retryable: true }),
    );
    const waits: number[] = [];
    const result = await withChannelRetry(
      () => channel.send({ target: { accountId: "default", chatId: "c" }, text: "x" }),
      {
        sleep: async (ms) => void waits.push(ms),
      },
    );
    expect(waits).toEqual([5]);
    expect(result.messages).toHaveLength(1);
  });
});
