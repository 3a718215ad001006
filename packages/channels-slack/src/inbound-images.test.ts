// downloadSlackImages on its own, against loopback servers: a redirect to another host is not followed with the
// token, a download that stalls is given up, and which URLs may carry the token at all.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { downloadSlackImages, mayCarryBotToken } from "./inbound-images.ts";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const picture = (url: string) => [{ kind: "image" as const, url, fileId: "F1", mimeType: "image/png" }];

describe("downloadSlackImages", () => {
  it("does not follow a redirect off Slack's hosts with the token", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const foreign = await serve((req, res) => {
      seen.push(req.headers);
      res.end("x");
    });
    const api = await serve((_req, res) => {
      res.writeHead(302, { location: `${foreign.replace("127.0.0.1", "localhost")}/steal` }).end();
    });
    const errors: string[] = [];
    const images = await downloadSlackImages(picture(`${api}/files-pri/T-F1/a.png`), {
      botToken: "xoxb-secret",
      apiBaseUrl: `${api}/api/`,
      maxBytes: 1024,
      onError: (error) => errors.push(error.message),
    });
    expect(images).toEqual([]);
    expect(errors).toEqual([
      expect.stringContaining("is not a Slack file host; the bot token is not sent there"),
    ]);
    expect(seen).toEqual([]);
  });

  it("gives up a download that stalls, and says so", async () => {
    const api = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "image/png" });
      res.write(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      // never ends
    });
    const errors: string[] = [];
    const images = await downloadSlackImages(picture(`${api}/files-pri/T-F1/a.png`), {
      botToken: "xoxb-secret",
      apiBaseUrl: `${api}/api/`,
      maxBytes: 1024,
      timeoutMs: 300,
      onError: (error) => errors.push(error.message),
    });
    expect(images).toEqual([]);
    expect(errors).toEqual(["slack: picture F1: the download took too long"]);
  });

  it("sends the token only to https Slack hosts or the Web API's origin", () => {
    const api = "http://127.0.0.1:9000/api/";
    expect(mayCarryBotToken(new URL("https://files.slack.com/files-pri/T-F/x.png"), api)).toBe(true);
    expect(mayCarryBotToken(new URL("https://slack.com/x"), api)).toBe(true);
    expect(mayCarryBotToken(new URL("http://files.slack.com/x"), api)).toBe(false);
    expect(mayCarryBotToken(new URL("https://files.slack.com.evil.dev/x"), api)).toBe(false);
    expect(mayCarryBotToken(new URL("https://evilslack.com/x"), api)).toBe(false);
    expect(mayCarryBotToken(new URL("http://127.0.0.1:9000/files-pri/x"), api)).toBe(true);
    expect(mayCarryBotToken(new URL("http://127.0.0.1:9001/files-pri/x"), api)).toBe(false);
  });
});
