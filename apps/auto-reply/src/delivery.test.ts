// The gateway's delivery rules as pure functions: threading, media, what the final list still sends after
// blocks, and one short user-facing message per error class.

import { TestChannel } from "@agent-kernel/channels-core/testing";
import { describe, expect, it } from "vitest";
import {
  finalPayloadsToSend,
  maxMessagesPerReplyFor,
  outboundFor,
  ReplyMessageBudget,
  userFacingError,
  userFacingErrorClasses,
} from "./delivery.ts";

const inbound = new TestChannel().inbound({
  text: "hi",
  messageId: "m-7",
  conversation: { chatType: "group", chatId: "g-1", threadId: "t-9" },
});

function failed(reason: string | undefined, errorMessage: string, status: "error" | "timeout" = "error") {
  return {
    status,
    result: { ...(reason === undefined ? {} : { reason }), errorMessage } as never,
  };
}

describe("outboundFor", () => {
  it("threads an explicit id, else the current message, and keeps the conversation's thread", () => {
    expect(
      outboundFor({ text: "a", replyToId: "x-1" }, inbound, { isBlock: false, channelHasMedia: true }),
    ).toEqual({
      target: { accountId: "default", chatId: "g-1", threadId: "t-9", replyToMessageId: "x-1" },
      text: "a",
    });
    expect(
      outboundFor({ text: "b", replyToCurrent: true }, inbound, { isBlock: true, channelHasMedia: true }),
    ).toEqual({
      target: { accountId: "default", chatId: "g-1", threadId: "t-9", replyToMessageId: "m-7" },
      text: "b",
      isBlock: true,
    });
  });

  it("sends media as items, voice when asked, and as links on a channel without media", () => {
    const payload = {
      text: "listen",
      mediaUrls: ["https://cdn.example.com/a.ogg", "./out/report.pdf"],
      audioAsVoice: true,
    };
    expect(outboundFor(payload, inbound, { isBlock: false, channelHasMedia: true })?.media).toEqual([
      { kind: "voice", url: "https://cdn.example.com/a.ogg" },
      { kind: "document", path: "./out/report.pdf" },
    ]);
    expect(outboundFor(payload, inbound, { isBlock: false, channelHasMedia: false })?.text).toBe(
      "listen\nhttps://cdn.example.com/a.ogg\n./out/report.pdf",
    );
    expect(outboundFor({ text: "  " }, inbound, { isBlock: false, channelHasMedia: true })).toBeUndefined();
  });
});

describe("finalPayloadsToSend", () => {
  it("sends every non-error payload when nothing streamed, and none the blocks already carried", () => {
    const finals = [{ text: "One.\n\nTwo." }, { text: "boom", isError: true }];
    expect(finalPayloadsToSend(finals, [])).toEqual([{ text: "One.\n\nTwo." }]);
    expect(finalPayloadsToSend(finals, [{ text: "One." }, { text: "Two." }])).toEqual([]);
    expect(finalPayloadsToSend([{ text: "Three." }], [{ text: "One." }])).toEqual([{ text: "Three." }]);
    expect(
      finalPayloadsToSend([{ text: "One.", mediaUrls: ["https://x.example.com/a.png"] }], [{ text: "One." }]),
    ).toHaveLength(1);
  });

  it("never sends the final text again when the blocks carried it, for every way of splitting it", () => {
    const words = ["Alpha", "beta.", "Gamma!", "delta", "epsilon?", "zeta"];
    // Every subset of the 5 gaps between words is a split into blocks (32 splits).
    for (let cuts = 0; cuts < 2 ** (words.length - 1); cuts++) {
      const blocks: { text: string }[] = [];
      let current: string[] = [];
      words.forEach((word, index) => {
        current.push(word);
        if (index === words.length - 1 || (cuts & (1 << index)) !== 0) {
          blocks.push({ text: current.join(" ") });
          current = [];
        }
      });
      const whole = { text: blocks.map((block) => block.text).join("\n\n") };
      expect(finalPayloadsToSend([whole], blocks), `cuts ${cuts}`).toEqual([]);
    }
  });
});

describe("userFacingError", () => {
  it("has one short message per error class, never the raw provider body or a stack", () => {
    const cases: [string, string][] = [
      ["rate_limit", "busy"],
      ["overloaded", "overloaded"],
      ["auth", "credentials"],
      ["auth_permanent", "credentials"],
      ["billing", "billing"],
      ["context_overflow", "reset our conversation"],
      ["server_error", "temporary error"],
      ["timeout", "timed out"],
      ["model_not_found", "not available"],
      ["internal", "on our side"],
    ];
    for (const [reason, words] of cases) {
      const message = userFacingError(
        failed(reason, '429: {"error":{"message":"x"}}\n    at fn (file.js:1:1)'),
      );
      expect(message, reason).toContain(words);
      expect(message, reason).toMatch(/^⚠️ /);
      expect(message, reason).not.toMatch(/[{}]|\n/);
    }
    expect(userFacingErrorClasses().length).toBe(9);
  });

  it("says nothing for a success or an abort; a timeout status is a timeout whatever the reason", () => {
    expect(userFacingError({ status: "ok", result: {} as never })).toBeUndefined();
    // a turn limit's line is the turn's own last payload
    for (const reason of ["tool_call_limit", "model_call_limit", "stream_time_limit", "reply_size_limit"])
      expect(userFacingError(failed(reason, "limit"))).toBeUndefined();
    expect(userFacingError({ status: "aborted", result: { reason: "aborted" } as never })).toBeUndefined();
    expect(userFacingError(failed("stalled", "x", "timeout"))).toContain("timed out");
  });

  it("an unclassified failure shows the first line of the message without its JSON body", () => {
    expect(userFacingError(failed("format", '400 {"error":"bad tool schema"}\nstack'))).toBe(
      "⚠️ Agent failed before reply: 400.",
    );
    expect(userFacingError(failed(undefined, "roles must alternate"))).toBe(
      "⚠️ Agent failed before reply: roles must alternate.",
    );
    expect(userFacingError(failed("format", "x".repeat(500)))?.length).toBeLessThan(240);
  });
});

describe("ReplyMessageBudget", () => {
  const sent = (count: number) => ({
    messages: Array.from({ length: count }, (_, index) => ({ messageId: `m${index}`, chatId: "c" })),
  });

  it("gives each send what is left minus what later sends need, and counts what sends became", () => {
    const budget = new ReplyMessageBudget(10);
    expect(budget.allowance(1)).toBe(9);
    budget.spend(sent(9));
    expect(budget.allowance(1)).toBeUndefined();
    budget.holdBackBlock();
    expect(budget.allowance(0)).toBe(1);
    budget.spend(undefined);
    expect(budget.remaining).toBe(1);
    budget.spend({
      ...sent(1),
      limited: { limit: 1, wouldBe: 4, shownChunks: 0, omittedChars: 9000, handling: "attached" },
    });
    expect(budget.allowance(0)).toBeUndefined();
    budget.skipSend();
    expect(budget.report()).toEqual({
      limit: 10,
      sends: [{ limit: 1, wouldBe: 4, shownChunks: 0, omittedChars: 9000, handling: "attached" }],
      heldBackBlocks: 1,
      skippedSends: 1,
    });
  });

  it("reports nothing for a reply within the limit, refuses a bad limit, reads the channel's", () => {
    const budget = new ReplyMessageBudget(3);
    budget.spend(sent(3));
    expect(budget.report()).toBeUndefined();
    expect(() => new ReplyMessageBudget(0)).toThrow(/maxMessagesPerReply must be a positive integer, got 0/);
    expect(maxMessagesPerReplyFor({ channels: {} }, "telegram")).toBe(10);
  });
});
