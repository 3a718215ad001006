// Pictures shared in Slack reach the model: once the gateway lets the message in (`loadImages`), the adapter
// downloads a file share's images with the bot token from `url_private_download` (the fake serves it only to
// that token) into `InboundMessage.images`, typed by their bytes, under a size cap; what is too large, not a
// picture, or hosted where the token must not go is left out and reported, and the message still arrives.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { type InboundMessage, withInboundImages } from "@agent-kernel/channels-core";
import { type FakeSlack, startFakeSlack } from "@agent-kernel/fake-slack";
import { afterEach, describe, expect, it } from "vitest";
import { createSlackChannel, type SlackChannel } from "./index.ts";

let slack: FakeSlack | undefined;
let channel: SlackChannel | undefined;
afterEach(async () => {
  await channel?.stop();
  await slack?.close();
  channel = undefined;
  slack = undefined;
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 1, 2, 3, 4]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]);

async function setup(maxImageBytes?: number, letIn = true) {
  slack = await startFakeSlack({ signingSecret: "shh", botUserId: "UBOT", teamId: "T1" });
  const errors: string[] = [];
  channel = createSlackChannel({
    botToken: slack.botToken,
    signingSecret: "shh",
    apiBaseUrl: slack.apiBaseUrl,
    onError: (error) => errors.push(error.message),
    ...(maxImageBytes === undefined ? {} : { maxImageBytes }),
  });
  const received: InboundMessage[] = [];
  await channel.start({
    // A gateway that lets the message in fetches its pictures (withInboundImages); one that refuses it does not.
    onMessage: async (message) => {
      received.push(letIn ? await withInboundImages(message) : message);
    },
  });
  const url = channel.endpointUrl;
  if (!url) throw new Error("no endpoint url after start");
  return { fake: slack, received, errors, url };
}

const fileShare = (files: readonly Record<string, unknown>[], ts = "1700000001.000100") => ({
  type: "message",
  subtype: "file_share",
  channel: "D111",
  channel_type: "im",
  user: "U222",
  text: "what is in these?",
  ts,
  team: "T1",
  files,
});

describe("Slack inbound pictures (against the fake)", () => {
  it("downloads shared PNG and JPEG files with the bot token into images, once per message", async () => {
    const { fake, received, errors, url } = await setup();
    const png = fake.hostFile({ name: "cat.png", mimetype: "image/png", bytes: PNG });
    const jpeg = fake.hostFile({ name: "dog.jpg", mimetype: "image/jpeg", bytes: JPEG });
    const pdf = fake.hostFile({
      name: "notes.pdf",
      mimetype: "application/pdf",
      bytes: Buffer.from("%PDF-1.4"),
    });
    const event = fileShare([png, pdf, jpeg]);
    expect((await fake.deliverEvent(url, event, { eventId: "Ev1" })).status).toBe(200);
    expect(errors).toEqual([]);
    expect(received).toHaveLength(1);
    expect(received[0]?.media.map((item) => item.kind)).toEqual(["image", "document", "image"]);
    expect(received[0]?.images).toEqual([
      { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
      { type: "image", data: JPEG.toString("base64"), mimeType: "image/jpeg" },
    ]);
    expect(fake.fileDownloads.map((download) => download.token)).toEqual([fake.botToken, fake.botToken]);

    // Slack's retry of the same event: acknowledged, not handled or downloaded again.
    expect((await fake.deliverEvent(url, event, { eventId: "Ev1", retryNum: 1 })).status).toBe(200);
    expect(received).toHaveLength(1);
    expect(fake.fileDownloads).toHaveLength(2);
  });

  it("leaves out a picture over the cap, a file whose bytes are not a picture, and a file hosted elsewhere", async () => {
    const { fake, received, errors, url } = await setup(64);
    // A host that is neither Slack nor the Web API's origin: the token must never reach it.
    const seen: IncomingHttpHeaders[] = [];
    const elsewhere = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "image/png" }).end(PNG);
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    const port = (elsewhere.address() as AddressInfo).port;
    try {
      const big = fake.hostFile({
        name: "big.png",
        mimetype: "image/png",
        bytes: Buffer.concat([PNG, Buffer.alloc(100)]),
      });
      const pageAsPng = fake.hostFile({
        name: "page.png",
        mimetype: "image/png",
        bytes: Buffer.from("<!DOCTYPE html>"),
      });
      const small = fake.hostFile({ name: "ok.png", mimetype: "image/png", bytes: PNG });
      const foreign = {
        id: "F0FOREIGN",
        name: "x.png",
        mimetype: "image/png",
        size: PNG.length,
        url_private: `http://localhost:${port}/files-pri/T1-F0FOREIGN/x.png`,
      };
      // The size Slack reports is not trusted: a file claiming 10 bytes that streams more is cut off too.
      const liar = {
        ...fake.hostFile({
          name: "liar.png",
          mimetype: "image/png",
          bytes: Buffer.concat([PNG, Buffer.alloc(200)]),
        }),
        size: 10,
      };
      await fake.deliverEvent(url, fileShare([big, pageAsPng, foreign, liar, small]));
      expect(received).toHaveLength(1);
      expect(received[0]?.text).toBe("what is in these?");
      expect(received[0]?.media).toHaveLength(5);
      expect(received[0]?.images).toEqual([
        { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
      ]);
      expect(seen).toEqual([]);
      expect(errors).toEqual([
        expect.stringMatching(/picture F\d+: 116 bytes is over the 64-byte limit/),
        expect.stringMatching(/picture F\d+: not a PNG, JPEG, GIF or WebP image/),
        expect.stringContaining("is not a Slack file host; the bot token is not sent there"),
        expect.stringMatching(/picture F\d+: .*over the 64-byte limit/),
      ]);
    } finally {
      await new Promise<void>((resolve) => elsewhere.close(() => resolve()));
    }
  });

  it("downloads nothing for a message the gateway does not let in (the loader is never called)", async () => {
    const { fake, received, url } = await setup(undefined, false);
    expect(
      (
        await fake.deliverEvent(
          url,
          fileShare([fake.hostFile({ name: "cat.png", mimetype: "image/png", bytes: PNG })]),
        )
      ).status,
    ).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]?.images).toBeUndefined();
    expect(typeof received[0]?.loadImages).toBe("function");
    expect(fake.fileDownloads).toEqual([]);
  });

  it("downloads nothing with maxImageBytes 0 (the message keeps its media)", async () => {
    const { fake, received, url } = await setup(0);
    await fake.deliverEvent(
      url,
      fileShare([fake.hostFile({ name: "cat.png", mimetype: "image/png", bytes: PNG })]),
    );
    expect(received[0]?.media).toHaveLength(1);
    expect(received[0]?.images).toBeUndefined();
    expect(fake.fileDownloads).toEqual([]);
  });
});
