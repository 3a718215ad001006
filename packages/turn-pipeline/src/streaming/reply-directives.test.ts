import { describe, expect, it } from "vitest";
import { splitMediaFromOutput } from "./media-output.ts";
import { isMessagingToolDuplicate } from "./messaging-dedupe.ts";
import { loadFixtureCases } from "./parity-fixtures.test-helpers.ts";
import { parseReplyDirectives, StreamingDirectiveAccumulator } from "./reply-directives.ts";

// fixtures are JSON: undefined fields are absent there, so compare through a JSON round trip
const plain = (value: unknown): unknown =>
  value === undefined || value === null ? null : JSON.parse(JSON.stringify(value));

describe("parseReplyDirectives parity with OpenClaw", () => {
  const cases = loadFixtureCases<{
    text: string;
    options: { currentMessageId?: string; silentToken?: string };
    expected: unknown;
  }>("reply-directives.json");
  it("has hand-written and generated cases", () => expect(cases.length).toBeGreaterThan(300));
  cases.forEach((c, index) => {
    it(`#${index} ${JSON.stringify(c.text).slice(0, 70)}`, () => {
      expect(plain(parseReplyDirectives(c.text, c.options))).toEqual(c.expected);
    });
  });
});

describe("splitMediaFromOutput parity with OpenClaw", () => {
  const cases = loadFixtureCases<{ text: string; expected: unknown }>("split-media.json");
  cases.forEach((c, index) => {
    it(`#${index} ${JSON.stringify(c.text).slice(0, 70)}`, () => {
      expect(plain(splitMediaFromOutput(c.text))).toEqual(c.expected);
    });
  });
});

describe("StreamingDirectiveAccumulator parity with OpenClaw", () => {
  const cases = loadFixtureCases<{ chunks: string[]; expected: unknown[] }>("streaming-directives.json");
  cases.forEach((c, index) => {
    it(`#${index} ${JSON.stringify(c.chunks).slice(0, 70)}`, () => {
      const acc = new StreamingDirectiveAccumulator();
      const results = c.chunks.map((chunk, i) =>
        plain(acc.consume(chunk, { final: i === c.chunks.length - 1 })),
      );
      expect(results).toEqual(c.expected);
    });
  });
});

describe("messaging-tool duplicate filter", () => {
  it("drops a reply the message tool already sent, ignoring case, emoji and spacing", () => {
    expect(isMessagingToolDuplicate("Hello   there, friend! 😀", ["hello there, friend!"])).toBe(true);
    expect(isMessagingToolDuplicate("short", ["short"])).toBe(false);
    expect(isMessagingToolDuplicate("A completely different reply", ["hello there, friend!"])).toBe(false);
  });
});
