// Messages per reply: within the limit every chunk goes; past it the first limit - 1 chunks and then the whole
// reply as reply.md (channels that upload) or one notice of what was left out. Property tests over random
// texts, limits and chunk sizes: never more than the limit, nothing lost.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitText } from "./chunking.ts";
import {
  attachedReplyLine,
  planReplyMessages,
  REPLY_FILE_NAME,
  resolveMaxMessagesPerReply,
  textMessageBudget,
  truncatedReplyNotice,
} from "./reply-limit.ts";

const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

describe("planReplyMessages", () => {
  it("sends every chunk when they fit, the limit itself included", () => {
    const chunks = ["a", "b", "c"];
    expect(planReplyMessages({ text: "a b c", chunks, maxMessages: 3, canAttachFiles: true })).toEqual({
      kind: "all",
      chunks,
    });
  });

  it("attaches the whole reply as reply.md after limit - 1 chunks, with one line saying so", () => {
    const text = "x".repeat(250_000);
    const chunks = splitText(text, 4000);
    expect(chunks).toHaveLength(63);
    const plan = planReplyMessages({ text, chunks, maxMessages: 10, canAttachFiles: true });
    if (plan.kind !== "attached") throw new Error(`expected attached, got ${plan.kind}`);
    expect(plan.chunks).toEqual(chunks.slice(0, 9));
    expect(plan.file).toMatchObject({
      kind: "document",
      fileName: REPLY_FILE_NAME,
      mimeType: "text/markdown",
    });
    expect(decode(plan.file.data)).toBe(text);
    expect(plan.file.caption).toBe(
      "⚠️ This reply was too long for 10 messages (it would have been 63); the whole reply is attached as reply.md.",
    );
    expect(plan.report).toEqual({
      limit: 10,
      wouldBe: 63,
      shownChunks: 9,
      omittedChars: 250_000 - 9 * 4000,
      handling: "attached",
    });
  });

  it("ends with a notice of the characters left out where the channel cannot upload", () => {
    const chunks = ["aaaa", "bbbb", "cccc", "dd"];
    const plan = planReplyMessages({ text: "aaaabbbbccccdd", chunks, maxMessages: 2, canAttachFiles: false });
    expect(plan).toEqual({
      kind: "truncated",
      chunks: ["aaaa"],
      notice: "… [reply truncated: 10 more characters not shown; limit 2 messages]",
      report: { limit: 2, wouldBe: 4, shownChunks: 1, omittedChars: 10, handling: "truncated" },
    });
    expect(truncatedReplyNotice(183_000, 1)).toBe(
      "… [reply truncated: 183,000 more characters not shown; limit 1 message]",
    );
    expect(attachedReplyLine(1, 2)).toContain("too long for 1 message (it would have been 2)");
  });

  it("measures chunks that are not strings with sizeOf, and asks for it when missing", () => {
    const chunks = [{ markdown: "aa" }, { markdown: "bbb" }, { markdown: "cccc" }];
    const plan = planReplyMessages({
      text: "aabbbcccc",
      chunks,
      maxMessages: 1,
      canAttachFiles: false,
      sizeOf: (chunk) => chunk.markdown.length,
    });
    expect(plan.kind === "truncated" && plan.report.omittedChars).toBe(9);
    expect(() => planReplyMessages({ text: "", chunks, maxMessages: 1, canAttachFiles: false })).toThrow(
      /need a sizeOf/,
    );
  });

  it("refuses a limit that is not a positive integer", () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() =>
        planReplyMessages({ text: "", chunks: [], maxMessages: bad, canAttachFiles: true }),
      ).toThrow(/maxMessages must be a positive integer/);
  });

  it("never plans more messages than the limit, and loses nothing (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 3000 }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        (text, chunkLimit, maxMessages, canAttachFiles) => {
          const chunks = splitText(text, chunkLimit);
          const plan = planReplyMessages({ text, chunks, maxMessages, canAttachFiles });
          const sent = plan.chunks.length + (plan.kind === "all" ? 0 : 1);
          expect(sent).toBeLessThanOrEqual(maxMessages);
          expect(plan.chunks).toEqual(chunks.slice(0, plan.chunks.length));
          if (plan.kind === "all") expect(plan.chunks).toEqual(chunks);
          else {
            expect(plan.chunks).toHaveLength(maxMessages - 1);
            // what the messages show plus what they leave out is every chunk
            const shownChars = plan.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
            const allChars = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
            expect(shownChars + plan.report.omittedChars).toBe(allChars);
          }
          if (plan.kind === "attached") expect(decode(plan.file.data)).toBe(text);
          if (plan.kind === "truncated") expect(canAttachFiles).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("resolveMaxMessagesPerReply and textMessageBudget", () => {
  it("takes the message's own budget over the channel's, default 10", () => {
    expect(resolveMaxMessagesPerReply(undefined)).toBe(10);
    expect(resolveMaxMessagesPerReply(4)).toBe(4);
    expect(resolveMaxMessagesPerReply(4, 2)).toBe(2);
    expect(() => resolveMaxMessagesPerReply(0)).toThrow(
      /maxMessagesPerReply must be a positive integer, got 0/,
    );
  });

  it("leaves the text what media did not take, at least one message", () => {
    expect(textMessageBudget(10, 0)).toBe(10);
    expect(textMessageBudget(10, 3)).toBe(7);
    expect(textMessageBudget(2, 5)).toBe(1);
  });
});
