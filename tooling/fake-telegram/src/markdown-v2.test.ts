import { describe, expect, it } from "vitest";
import { EntityParseError, parseMarkdownV2 } from "./markdown-v2.ts";

function parseError(text: string): string {
  try {
    parseMarkdownV2(text);
  } catch (error) {
    if (error instanceof EntityParseError) return error.message;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe("parseMarkdownV2 (Telegram's grammar)", () => {
  it("turns entities into plain text and UTF-16 offsets", () => {
    expect(parseMarkdownV2("*bold* _it_ __u__ ~s~ ||sp|| `c` [link](https://x.test/a\\)b)")).toEqual({
      text: "bold it u s sp c link",
      entities: [
        { type: "bold", offset: 0, length: 4 },
        { type: "italic", offset: 5, length: 2 },
        { type: "underline", offset: 8, length: 1 },
        { type: "strikethrough", offset: 10, length: 1 },
        { type: "spoiler", offset: 12, length: 2 },
        { type: "code", offset: 15, length: 1 },
        { type: "text_link", offset: 17, length: 4, url: "https://x.test/a)b" },
      ],
    });
  });

  it("parses pre blocks with a language, nested entities and blockquotes", () => {
    expect(parseMarkdownV2("```ts\nconst a = 1.5;\n```")).toEqual({
      text: "const a = 1.5;\n",
      entities: [{ type: "pre", offset: 0, length: 15, language: "ts" }],
    });
    expect(parseMarkdownV2("*a _b_ c*").entities).toEqual([
      { type: "bold", offset: 0, length: 5 },
      { type: "italic", offset: 2, length: 1 },
    ]);
    expect(parseMarkdownV2(">quoted *x*\n>more\nafter")).toEqual({
      text: "quoted x\nmore\nafter",
      entities: [
        { type: "blockquote", offset: 0, length: 14 },
        { type: "bold", offset: 7, length: 1 },
      ],
    });
  });

  it("keeps escaped reserved characters and a lone backslash before non-ASCII", () => {
    expect(parseMarkdownV2("1\\.5 \\- \\(a\\) \\\\ é\\é").text).toBe("1.5 - (a) \\ é\\é");
  });

  it("rejects unescaped reserved characters with Telegram's wording", () => {
    expect(parseError("Hello.")).toBe(
      "Character '.' is reserved and must be escaped with the preceding '\\'",
    );
    expect(parseError("a-b")).toBe("Character '-' is reserved and must be escaped with the preceding '\\'");
    expect(parseError("x > y")).toBe("Character '>' is reserved and must be escaped with the preceding '\\'");
    expect(parseError("(")).toBe("Character '(' is reserved and must be escaped with the preceding '\\'");
  });

  it("rejects unclosed and same-type nested entities with the byte offset", () => {
    expect(parseError("é *bold")).toBe("Can't find end of Bold entity at byte offset 3");
    expect(parseError("`code")).toBe("Can't find end of Code entity at byte offset 0");
    expect(parseError("*a _b *c* d_ e*")).toBe("Can't find end of Bold entity at byte offset 0");
    expect(parseError("[x](https://a")).toBe("Can't find end of a URL at byte offset 4");
    expect(parseError("_a__")).toBe("Can't find end of Underline entity at byte offset 2");
    expect(parseError(">*a\nb*")).toBe("Can't find end of Bold entity at byte offset 1");
  });

  it("inside code only ` and \\ are special", () => {
    expect(parseMarkdownV2("`a.b-c(d) \\` \\\\`")).toEqual({
      text: "a.b-c(d) ` \\",
      entities: [{ type: "code", offset: 0, length: 12 }],
    });
  });
});
