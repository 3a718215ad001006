import { describe, expect, it } from "vitest";
import { parseTelegramHtml } from "./html.ts";
import { EntityParseError } from "./markdown-v2.ts";

function parseError(text: string): string {
  try {
    parseTelegramHtml(text);
  } catch (error) {
    if (error instanceof EntityParseError) return error.message;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe("parseTelegramHtml (Telegram's HTML subset)", () => {
  it("parses the documented tags and references", () => {
    expect(
      parseTelegramHtml(
        '<b>b</b> <i>i</i> <a href="https://x.test/?a=1&amp;b=2">l</a> 1 &lt; 2 &amp;&#33; & <tg-spoiler>s</tg-spoiler>',
      ),
    ).toEqual({
      text: "b i l 1 < 2 &! & s",
      entities: [
        { type: "bold", offset: 0, length: 1 },
        { type: "italic", offset: 2, length: 1 },
        { type: "text_link", offset: 4, length: 1, url: "https://x.test/?a=1&b=2" },
        { type: "spoiler", offset: 17, length: 1 },
      ],
    });
    expect(parseTelegramHtml('<pre><code class="language-py">x &lt; 1</code></pre>')).toEqual({
      text: "x < 1",
      entities: [{ type: "pre", offset: 0, length: 5, language: "py" }],
    });
  });

  it("rejects what Telegram rejects", () => {
    expect(parseError("a <div>x</div>")).toBe('Unsupported start tag "div" at byte offset 2');
    expect(parseError("1 <2")).toBe('Unsupported start tag "2" at byte offset 2');
    expect(parseError("<b>x")).toBe('Can\'t find end tag corresponding to start tag "b"');
    expect(parseError("<b>x</i>")).toBe('Unmatched end tag at byte offset 4, expected "</b>", found "</i>"');
    expect(parseError("x</b>")).toBe("Unexpected end tag at byte offset 1");
    // tdlib reads an unquoted value as a name token (letters, digits, '.', '-'): a bare URL is refused
    expect(parseError("<a href=https://x.test>x</a>")).toBe("Unexpected end of name token at byte offset 8");
    expect(parseError('<a ="x">y</a>')).toBe('Empty attribute name in the tag "a" at byte offset 0');
    expect(parseError("<span>x</span>")).toBe('Tag "span" must have class "tg-spoiler" at byte offset 0');
  });
});
