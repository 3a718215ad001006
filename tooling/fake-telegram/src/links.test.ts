import { describe, expect, it } from "vitest";
import { parseTelegramHtml } from "./html.ts";
import { checkLink, linkUserId } from "./links.ts";
import { parseMarkdownV2 } from "./markdown-v2.ts";

describe("checkLink (tdlib's LinkManager::check_link)", () => {
  it("keeps http(s), bare domains and tg:// links, normalised as Telegram stores them", () => {
    expect(checkLink("https://example.com")).toBe("https://example.com/");
    expect(checkLink("HTTPS://Example.COM/Path?Q=1#F")).toBe("https://example.com/Path?Q=1#F");
    expect(checkLink("example.com")).toBe("http://example.com/");
    expect(checkLink("example.com/a b ")).toBe("http://example.com/a%20b");
    expect(checkLink("http://user:pw@example.com:08080/x")).toBe("http://user:pw@example.com:8080/x");
    expect(checkLink("https://пример.рф/")).toBe("https://пример.рф/");
    expect(checkLink("http://[::1]/x")).toBe("http://[::1]/x");
    expect(checkLink("tg://resolve?domain=durov")).toBe("tg://resolve?domain=durov");
    expect(checkLink("TG:resolve?domain=x")).toBe("tg://resolve?domain=x");
    expect(checkLink("ton://wallet/x")).toBe("ton://wallet/x");
  });

  it("drops empty URLs, other schemes, bad hosts, ports and tg links", () => {
    for (const url of [
      "",
      "   ",
      "ftp://example.com",
      "javascript://example.com/%0Aalert(1)",
      "localhost",
      "http://localhost:3000/",
      "not a url",
      "https://exa mple.com/",
      "https://example.com:0/",
      "https://example.com:65536/",
      "https://example.com:8o/",
      "https://exa%2.com/",
      "https://ex<ample.com/",
      "https://./",
      "http://[zz::1]/",
      "tg://http://example.com",
      "tg://user@resolve",
      "tg://resolve:80",
      "tg://res.olve",
    ]) {
      expect({ url, checked: checkLink(url) }).toEqual({ url, checked: undefined });
    }
  });

  it("reads tg://user?id= as a mention of a canonical user id in 1 … 2^40 − 1", () => {
    expect(linkUserId("tg://user?id=42")).toBe(42);
    expect(linkUserId("TG:USER/?ID=42&x=1")).toBe(42);
    expect(linkUserId("tg://user?x=1&id=7#frag")).toBe(7);
    expect(linkUserId("tg://user?id=042")).toBeUndefined();
    expect(linkUserId("tg://user?id=0")).toBeUndefined();
    expect(linkUserId(`tg://user?id=${2 ** 40}`)).toBeUndefined();
    expect(linkUserId("tg://username?id=1")).toBeUndefined();
    expect(linkUserId("https://user?id=1")).toBeUndefined();
  });
});

describe("links in formatted text", () => {
  it("drops invalid links in HTML and MarkdownV2 but keeps their text (the old fake kept or refused them)", () => {
    expect(parseTelegramHtml('<a href="ftp://x.test/">a</a> <a href="not a url">b</a>')).toEqual({
      text: "a b",
      entities: [],
    });
    expect(parseMarkdownV2("[a](localhost) [b](ftp://x\\.test)")).toEqual({ text: "a b", entities: [] });
  });

  it("keeps bare domains, which the old fake dropped, normalised", () => {
    expect(parseMarkdownV2("[docs](example\\.com/docs)").entities).toEqual([
      { type: "text_link", offset: 0, length: 4, url: "http://example.com/docs" },
    ]);
    expect(parseTelegramHtml('<a href="Example.com">x</a>').entities).toEqual([
      { type: "text_link", offset: 0, length: 1, url: "http://example.com/" },
    ]);
  });

  it("accepts <a> without href: the text itself is the URL, if it is one (the old fake refused the tag)", () => {
    expect(parseTelegramHtml("<a>just text</a>")).toEqual({ text: "just text", entities: [] });
    expect(parseTelegramHtml('<a href="">example.com</a>')).toEqual({
      text: "example.com",
      entities: [{ type: "text_link", offset: 0, length: 11, url: "http://example.com/" }],
    });
    expect(parseMarkdownV2("[example\\.com]").entities).toEqual([
      { type: "text_link", offset: 0, length: 11, url: "http://example.com/" },
    ]);
  });

  it("makes tg://user?id= a text_mention carrying the id (the server fills in the user)", () => {
    expect(parseTelegramHtml('<a href="tg://user?id=42">Alice</a>').entities).toEqual([
      { type: "text_mention", offset: 0, length: 5, user: { id: 42, is_bot: false, first_name: "" } },
    ]);
  });
});
