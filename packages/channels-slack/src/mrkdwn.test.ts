import { scanFenceSpans } from "@agent-kernel/markdown";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeSlackText, formatSlackChunks, markdownToSlackMrkdwn } from "./mrkdwn.ts";

describe("markdownToSlackMrkdwn", () => {
  it.each([
    ["**bold** and __bold__", "*bold* and *bold*"],
    ["*it* and _it_", "_it_ and _it_"],
    ["~~gone~~", "~gone~"],
    ["# Title", "*Title*"],
    ["- one\n* two\n+ three", "• one\n• two\n• three"],
    ["> quoted **x**", "> quoted *x*"],
    ["[docs](https://x.dev/a?b=1&c=2)", "<https://x.dev/a?b=1&amp;c=2|docs>"],
    ["![chart](https://x.dev/c.png)", "<https://x.dev/c.png|chart>"],
    ["2 * 3 * 4 = 24 and snake_case", "2 * 3 * 4 = 24 and snake_case"],
  ])("%j → %j", (markdown, mrkdwn) => {
    expect(markdownToSlackMrkdwn(markdown)).toBe(mrkdwn);
  });

  it("escapes Slack's control characters everywhere, code included", () => {
    expect(markdownToSlackMrkdwn("a < b && c > d")).toBe("a &lt; b &amp;&amp; c &gt; d");
    expect(markdownToSlackMrkdwn("`x<y`")).toBe("`x&lt;y`");
    expect(markdownToSlackMrkdwn("```ts\nif (a < b && c) {}\n```")).toBe(
      "```\nif (a &lt; b &amp;&amp; c) {}\n```",
    );
  });

  it("keeps Slack's own tokens and does not format inside code", () => {
    expect(markdownToSlackMrkdwn("hi <@U123> <#C1|general> <!here> <https://y.dev|y>")).toBe(
      "hi <@U123> <#C1|general> <!here> <https://y.dev|y>",
    );
    expect(markdownToSlackMrkdwn("`**not bold**`")).toBe("`**not bold**`");
    expect(markdownToSlackMrkdwn("```\n**not bold** # no\n```")).toBe("```\n**not bold** # no\n```");
  });

  it("cannot be tricked into emitting an unescaped angle bracket or a forged placeholder", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const out = markdownToSlackMrkdwn(text);
        expect(out).not.toMatch(/[\uE000-\uE003]/);
        // every `<` left opens a Slack token that the input spelled out or a converted link
        for (const match of out.matchAll(/</g)) {
          expect(out.slice(match.index)).toMatch(/^<(?:[@#!]|https?:\/\/|mailto:)[^<>]*>/);
        }
      }),
    );
  });

  it("escapes plain text", () => {
    expect(escapeSlackText("<&>")).toBe("&lt;&amp;&gt;");
  });
});

describe("formatSlackChunks", () => {
  it("keeps short text whole and splits long text at paragraph breaks", () => {
    expect(formatSlackChunks("short", 100)).toEqual(["short"]);
    const paragraphs = ["a".repeat(30), "b".repeat(30), "c".repeat(30)].join("\n\n");
    expect(formatSlackChunks(paragraphs, 70)).toEqual([
      `${"a".repeat(30)}\n\n${"b".repeat(30)}`,
      "c".repeat(30),
    ]);
  });

  it("measures after escaping, so text that grows still fits and no entity is cut", () => {
    const chunks = formatSlackChunks("a & b < c ".repeat(30), 50);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(50);
      expect(chunk).not.toMatch(/&(?!amp;|lt;|gt;)/);
    }
  });

  it("honours chunkMode newline (paragraphs first)", () => {
    const text = `${"one ".repeat(5)}\n\n${"two ".repeat(5)}`;
    expect(formatSlackChunks(text, 200, "newline")).toHaveLength(1);
    expect(formatSlackChunks(text, 30, "newline")).toEqual(["one one one one one", "two two two two two"]);
  });

  it("never exceeds the limit and never leaves a code fence open in a chunk", () => {
    const line = fc.oneof(
      fc.constant("```"),
      fc.constant(""),
      fc.string({ minLength: 1, maxLength: 60 }).map((s) => s.replace(/[`\n]/g, "x")),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), fc.integer({ min: 40, max: 200 }), (lines, limit) => {
        // an input that leaves a fence open is closed first: the property is about the cuts
        const fences = lines.filter((l) => l === "```").length;
        const text = [...lines, ...(fences % 2 === 1 ? ["```"] : [])].join("\n");
        for (const chunk of formatSlackChunks(text, limit)) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(scanFenceSpans(chunk).state.open).toBeUndefined();
        }
      }),
      { numRuns: 300 },
    );
  });
});
