import { parseMarkdownV2, parseTelegramHtml } from "@agent-kernel/fake-telegram";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  escapeMarkdownV2,
  markdownToTelegramHtml,
  markdownToTelegramV2,
  markdownToVisibleText,
} from "./format.ts";

/** Markdown-ish text: the characters that matter to both dialects, words, newlines and a few fences. */
const markdownish = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(..."_*[]()~`>#+-=|{}.!\\<&\"' \nab1é😀") },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          "**",
          "__",
          "~~",
          "```",
          "```ts\n",
          "\n```\n",
          "> ",
          "# ",
          "- ",
          "[a](https://x.test/p_(1))",
          "`x`",
          "&amp;",
          "<b>",
          "\r\n",
        ),
      },
      { weight: 2, arbitrary: fc.string({ maxLength: 6 }) },
      { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 4 }) },
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(""));

/** The visible text without Markdown syntax, to compare what a reader sees. */
function letters(text: string): string {
  return text.replace(/[^\p{L}\p{N}]/gu, "");
}

describe("Markdown → Telegram dialects", () => {
  it("escapes every MarkdownV2 reserved character and the backslash", () => {
    expect(escapeMarkdownV2("_*[]()~`>#+-=|{}.!\\ ok")).toBe(
      "\\_\\*\\[\\]\\(\\)\\~\\`\\>\\#\\+\\-\\=\\|\\{\\}\\.\\!\\\\ ok",
    );
  });

  it("renders the common Markdown constructs (channels-core's renderers)", () => {
    const markdown = [
      "# Release 1.2",
      "Use **bold**, *italic*, ~~gone~~ and `a_b.c` in snake_case_names.",
      "> quoted *x*",
      "See [docs](https://example.test/a_(b)).",
      "```ts",
      "const a = `x` + '\\\\';",
      "```",
    ].join("\n");
    expect(markdownToTelegramV2(markdown)).toBe(
      [
        "*Release 1\\.2*",
        "Use *bold*, _italic_, ~gone~ and `a_b.c` in snake\\_case\\_names\\.",
        "\\> quoted _x_",
        "See [docs](https://example.test/a_(b\\))\\.",
        "```ts",
        "const a = \\`x\\` + '\\\\\\\\';",
        "```",
      ].join("\n"),
    );
    expect(markdownToTelegramHtml(markdown)).toBe(
      [
        "<b>Release 1.2</b>",
        "Use <b>bold</b>, <i>italic</i>, <s>gone</s> and <code>a_b.c</code> in snake_case_names.",
        "&gt; quoted <i>x</i>",
        'See <a href="https://example.test/a_(b)">docs</a>.',
        "<pre><code class=\"language-ts\">const a = `x` + '\\\\';</code></pre>",
      ].join("\n"),
    );
    expect(parseMarkdownV2(markdownToTelegramV2(markdown)).entities.map((e) => e.type)).toEqual([
      "bold",
      "bold",
      "italic",
      "strikethrough",
      "code",
      "italic",
      "text_link",
      "pre",
    ]);
  });

  it("never puts two italics side by side or an entity inside its own type", () => {
    expect(parseMarkdownV2(markdownToTelegramV2("_a__b_"))).toEqual({
      text: "a__b",
      entities: [{ type: "italic", offset: 0, length: 4 }],
    });
    expect(markdownToTelegramV2("*a* *b* **c *d* e**")).toBe("_a_ _b_ *c _d_ e*");
    expect(parseMarkdownV2(markdownToTelegramV2("**a __b__ c**"))).toEqual({
      text: "a b c",
      entities: [{ type: "bold", offset: 0, length: 5 }],
    });
    expect(parseMarkdownV2(markdownToTelegramV2("# title with `code` and **bold**")).text).toBe(
      "title with code and bold",
    );
  });

  it("property: Telegram's strict parsers accept whatever we format, and keep every letter", () => {
    fc.assert(
      fc.property(markdownish, (markdown) => {
        const v2 = parseMarkdownV2(markdownToTelegramV2(markdown));
        const html = parseTelegramHtml(markdownToTelegramHtml(markdown));
        expect(letters(v2.text)).toBe(letters(html.text));
        // what Telegram shows is what we predict (emptiness decides whether a piece is sent at all)
        expect(v2.text.trim() === "").toBe(markdownToVisibleText(markdown).trim() === "");
        // only Markdown syntax is dropped: letters and digits survive (fence info strings and link URLs aside)
        const dropsWords = /```|~~~|\]\(/u.test(markdown);
        if (!dropsWords) expect(letters(v2.text)).toBe(letters(markdown));
      }),
      { numRuns: 2000 },
    );
  });
});
