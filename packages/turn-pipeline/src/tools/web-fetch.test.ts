// web_fetch against real HTTP servers on loopback: loopback is reachable only where a test's config says so,
// and every refusal (an internal literal, a name resolving to loopback, a redirect to an internal target) is
// made before a connection, the limits (bytes, time, redirects) and the content types.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { internalAddressReason, SsrfBlockedError } from "./ssrf-guard.ts";
import { fetchReadable, htmlToReadableText, webFetchTool } from "./web-fetch.ts";

const ARTICLE = `<!doctype html><html><head><title>The &amp; Title</title><style>body{}</style>
<script>var secret = "script text";</script></head>
<body><nav>Home | About</nav><main><h1>Kernel notes</h1><p>First paragraph with <a href="/x">a link</a>.</p>
<ul><li>one</li><li>two</li></ul></main><footer>footer text</footer></body></html>`;

let server: Server;
let port: number;
/** Requests the server saw, by path. */
const seen: string[] = [];

function route(request: IncomingMessage, response: ServerResponse): void {
  const path = request.url ?? "/";
  seen.push(path);
  const redirect = /^\/redirect\/(\d+)$/.exec(path);
  if (redirect) {
    const left = Number(redirect[1]);
    response.writeHead(302, { Location: left > 0 ? `/redirect/${left - 1}` : "/article" }).end();
    return;
  }
  switch (path) {
    case "/article":
      response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(ARTICLE);
      return;
    case "/json":
      response.writeHead(200, { "Content-Type": "application/json" }).end('{"ok":true}');
      return;
    case "/png":
      response.writeHead(200, { "Content-Type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0]));
      return;
    case "/missing":
      response.writeHead(404, { "Content-Type": "text/plain" }).end("no such page here");
      return;
    case "/big":
      response.writeHead(200, { "Content-Type": "text/plain" }).end("x".repeat(200_000));
      return;
    case "/gzip":
      response
        .writeHead(200, { "Content-Type": "text/plain", "Content-Encoding": "gzip" })
        .end(gzipSync("compressed hello"));
      return;
    case "/to-localhost":
      response.writeHead(301, { Location: `http://localhost:${port}/article` }).end();
      return;
    case "/to-private":
      response.writeHead(302, { Location: "http://10.0.0.1/secret" }).end();
      return;
    case "/to-metadata":
      response.writeHead(307, { Location: "http://169.254.169.254/latest/meta-data/" }).end();
      return;
    case "/to-file":
      response.writeHead(302, { Location: "file:///etc/passwd" }).end();
      return;
    case "/hang":
      // Never answers: the fetch's time limit ends it.
      return;
    default:
      response.writeHead(500).end();
  }
}

beforeAll(async () => {
  server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** The only config under which the tests' loopback server is reachable. */
const loopbackAllowed = { ssrfPolicy: { allowedHostnames: ["127.0.0.1"] } };

describe("the SSRF guard's address classes", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.200.0.9", "loopback"],
    ["0.0.0.0", "this-network"],
    ["10.1.2.3", "private"],
    ["172.31.255.1", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["169.254.169.254", "link-local"],
    ["224.0.0.251", "multicast"],
    ["255.255.255.255", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link-local"],
    ["fd12:3456::1", "unique local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback (IPv4 127.0.0.1 inside IPv6)"],
    ["::ffff:a00:1", "private (IPv4 10.0.0.1 inside IPv6)"],
    ["64:ff9b::c0a8:101", "private (IPv4 192.168.1.1 inside IPv6)"],
    ["2002:7f00:1::1", "loopback (IPv4 127.0.0.1 inside IPv6)"],
  ])("%s is %s", (address, reason) => {
    expect(internalAddressReason(address)).toBe(reason);
  });

  it.each(["8.8.8.8", "93.184.216.34", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])(
    "%s is public",
    (address) => {
      expect(internalAddressReason(address)).toBeUndefined();
    },
  );
});

describe("web_fetch's refusals (no connection is made)", () => {
  it("refuses loopback literals, localhost and IPv6 loopback by default", async () => {
    const before = seen.length;
    await expect(fetchReadable(`http://127.0.0.1:${port}/article`)).rejects.toThrow(
      /refused to fetch http:\/\/127\.0\.0\.1:\d+\/article: 127\.0\.0\.1 is a loopback address/,
    );
    await expect(fetchReadable(`http://localhost:${port}/article`)).rejects.toThrow(
      /localhost is a localhost name/,
    );
    await expect(fetchReadable(`http://[::1]:${port}/article`)).rejects.toThrow(/::1 is a loopback address/);
    await expect(fetchReadable(`http://[::ffff:127.0.0.1]:${port}/`)).rejects.toThrow(SsrfBlockedError);
    await expect(fetchReadable("http://169.254.169.254/latest/meta-data/")).rejects.toThrow(/link-local/);
    expect(seen.length).toBe(before);
  });

  it("refuses a DNS name that resolves to loopback, checking the addresses it will connect to", async () => {
    const before = seen.length;
    const resolve = async (host: string) =>
      host === "rebind.example" ? [{ address: "127.0.0.1", family: 4 }] : [];
    await expect(fetchReadable(`http://rebind.example:${port}/article`, { resolve })).rejects.toThrow(
      /rebind\.example resolves to 127\.0\.0\.1, a loopback address/,
    );
    // One internal address among public ones refuses the name.
    const mixed = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "10.0.0.7", family: 4 },
    ];
    await expect(fetchReadable("http://mixed.example/", { resolve: mixed })).rejects.toThrow(
      /resolves to 10\.0\.0\.7, a private address/,
    );
    expect(seen.length).toBe(before);
    // Allowed by name: the request goes to exactly the address the guard resolved (the name is in no DNS).
    const page = await fetchReadable(`http://rebind.example:${port}/article`, {
      resolve,
      settings: { ssrfPolicy: { allowedHostnames: ["rebind.example"] } },
    });
    expect(page.title).toBe("The & Title");
  });

  it("checks every redirect hop: to localhost, to a private address, to link-local metadata, to file:", async () => {
    await expect(
      fetchReadable(`http://127.0.0.1:${port}/to-localhost`, { settings: loopbackAllowed }),
    ).rejects.toThrow(/refused to fetch http:\/\/localhost:\d+\/article: localhost is a localhost name/);
    await expect(
      fetchReadable(`http://127.0.0.1:${port}/to-private`, { settings: loopbackAllowed }),
    ).rejects.toThrow(/refused to fetch http:\/\/10\.0\.0\.1\/secret: 10\.0\.0\.1 is a private address/);
    await expect(
      fetchReadable(`http://127.0.0.1:${port}/to-metadata`, { settings: loopbackAllowed }),
    ).rejects.toThrow(/169\.254\.169\.254 is a link-local address/);
    await expect(
      fetchReadable(`http://127.0.0.1:${port}/to-file`, { settings: loopbackAllowed }),
    ).rejects.toThrow(/only http and https URLs can be fetched, not file:/);
  });

  it("blocked names win over every allowance; other schemes and bad URLs are refused by name", async () => {
    await expect(
      fetchReadable(`http://127.0.0.1:${port}/article`, {
        settings: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true, blockedHostnames: ["127.0.0.1"] } },
      }),
    ).rejects.toThrow(/127\.0\.0\.1 is blocked by tools\.web\.fetch\.ssrfPolicy\.blockedHostnames/);
    await expect(
      fetchReadable("http://a.ads.example/", {
        settings: { ssrfPolicy: { blockedHostnames: ["*.ads.example"] } },
      }),
    ).rejects.toThrow(/a\.ads\.example is blocked/);
    await expect(fetchReadable("ftp://example.com/file")).rejects.toThrow(/only http and https/);
    await expect(fetchReadable("not a url")).rejects.toThrow(/"not a url" is not a valid absolute URL/);
  });
});

describe("web_fetch where the config allows the loopback server", () => {
  it("returns an HTML page's main text and title, without scripts, styles or navigation", async () => {
    const page = await fetchReadable(`http://127.0.0.1:${port}/article`, { settings: loopbackAllowed });
    expect(page).toMatchObject({
      status: 200,
      contentType: "text/html",
      title: "The & Title",
      bytesTruncated: false,
    });
    expect(page.text).toContain("Kernel notes");
    expect(page.text).toContain("First paragraph with a link.");
    expect(page.text).toMatch(/\* one\n\s*\* two/);
    expect(page.text).not.toMatch(/script text|Home \| About|body\{\}|footer text/);
    // The whole private network, when the operator says so.
    const open = await fetchReadable(`http://127.0.0.1:${port}/json`, {
      settings: { ssrfPolicy: { dangerouslyAllowPrivateNetwork: true } },
    });
    expect(open.text).toBe('{"ok":true}');
  });

  it("follows redirects up to maxRedirects, and says so past it", async () => {
    const page = await fetchReadable(`http://127.0.0.1:${port}/redirect/2`, { settings: loopbackAllowed });
    expect(page.finalUrl).toBe(`http://127.0.0.1:${port}/article`);
    await expect(
      fetchReadable(`http://127.0.0.1:${port}/redirect/2`, {
        settings: { ...loopbackAllowed, maxRedirects: 1 },
      }),
    ).rejects.toThrow(/stopped after 1 redirects \(tools\.web\.fetch\.maxRedirects\)/);
  });

  it("reads at most maxResponseBytes, decompresses, and stops at the time limit", async () => {
    const big = await fetchReadable(`http://127.0.0.1:${port}/big`, {
      settings: { ...loopbackAllowed, maxResponseBytes: 32_000 },
    });
    expect(big.text.length).toBe(32_000);
    expect(big.bytesTruncated).toBe(true);
    const gz = await fetchReadable(`http://127.0.0.1:${port}/gzip`, { settings: loopbackAllowed });
    expect(gz.text).toBe("compressed hello");
    await expect(
      fetchReadable(`http://127.0.0.1:${port}/hang`, { settings: { ...loopbackAllowed, timeoutSeconds: 1 } }),
    ).rejects.toThrow(/timed out after 1 s \(tools\.web\.fetch\.timeoutSeconds\)/);
  });

  it("refuses binary content by its type and reports an HTTP error with the page's start", async () => {
    await expect(
      fetchReadable(`http://127.0.0.1:${port}/png`, { settings: loopbackAllowed }),
    ).rejects.toThrow(/is image\/png, not text or HTML/);
    await expect(
      fetchReadable(`http://127.0.0.1:${port}/missing`, { settings: loopbackAllowed }),
    ).rejects.toThrow(/answered HTTP 404 Not Found:\nno such page here/);
  });

  it("the tool cuts the text at maxChars (clamped to maxCharsCap) and says so", async () => {
    const tool = webFetchTool({ ...loopbackAllowed, maxChars: 1000, maxCharsCap: 5000 });
    const run = async (params: Record<string, unknown>) => {
      const result = await tool.execute("c1", params as never, undefined, undefined, undefined as never);
      return result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    };
    const standard = await run({ url: `http://127.0.0.1:${port}/big` });
    expect(standard).toContain("[text cut: showing 1000 of 200000 characters]");
    const capped = await run({ url: `http://127.0.0.1:${port}/big`, maxChars: 50_000 });
    expect(capped).toContain("[text cut: showing 5000 of 200000 characters]");
    expect(await run({ url: `http://127.0.0.1:${port}/article` })).toMatch(
      /^URL: http:\/\/127\.0\.0\.1:\d+\/article\nStatus: 200\nContent-Type: text\/html\nTitle: The & Title\n\n/,
    );
  });

  it("htmlToReadableText falls back to the body when there is no main or article", () => {
    expect(htmlToReadableText("<p>just <b>this</b></p>")).toEqual({ text: "just this" });
  });
});
