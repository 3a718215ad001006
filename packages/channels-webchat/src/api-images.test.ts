// Pictures attached to a web chat message over the API: checked (count, size, type by bytes, base64) before the
// handler sees anything, then handed over as `images` (for the model) and `media` (what was attached).
import type { InboundMessage } from "@agent-kernel/channels-core";
import { afterEach, describe, expect, it } from "vitest";
import { createWebchatChannel, type WebchatChannel, type WebchatChannelOptions } from "./index.ts";

let channel: WebchatChannel | undefined;
afterEach(async () => {
  await channel?.stop();
  channel = undefined;
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 1, 2, 3, 4]);
const GIF = Buffer.from("GIF89a\x01\x00\x01\x00", "latin1");

async function setup(options: WebchatChannelOptions = {}) {
  const received: InboundMessage[] = [];
  channel = createWebchatChannel({ port: 0, ...options });
  await channel.start({
    onMessage: async (message) => {
      received.push(message);
    },
  });
  const adapter = channel;
  const post = async (body: unknown) => {
    const response = await fetch(`${adapter.url}/api/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${adapter.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  return { received, post };
}

describe("webchat: images attached to a message", () => {
  it("hands the pictures to the handler as images and media, with or without text", async () => {
    const { received, post } = await setup();
    const sent = await post({
      conversationId: "c1",
      text: "what is this?",
      images: [{ data: PNG.toString("base64"), fileName: "cat.png" }, { data: GIF.toString("base64") }],
    });
    expect(sent.status).toBe(202);
    expect(received[0]?.images).toEqual([
      { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
      { type: "image", data: GIF.toString("base64"), mimeType: "image/gif" },
    ]);
    expect(received[0]?.media).toEqual([
      { kind: "image", mimeType: "image/png", sizeBytes: PNG.length, fileName: "cat.png" },
      { kind: "image", mimeType: "image/gif", sizeBytes: GIF.length },
    ]);
    // A picture alone is a message; nothing at all is not.
    expect(
      (await post({ conversationId: "c1", text: "", images: [{ data: PNG.toString("base64") }] })).status,
    ).toBe(202);
    expect(received[1]?.text).toBe("");
    expect(received[1]?.images).toHaveLength(1);
    expect(await post({ conversationId: "c1", text: " ", images: [] })).toEqual({
      status: 400,
      json: { error: "text must be a non-empty string (or attach an image)" },
    });
    // A message without images carries none.
    await post({ conversationId: "c1", text: "plain" });
    expect(received[2]?.images).toBeUndefined();
  });

  it("refuses the whole message, naming the picture, when one is too large, not a picture, not base64, or too many", async () => {
    const { received, post } = await setup({ maxImageBytes: 32, maxImagesPerMessage: 2 });
    const png = { data: PNG.toString("base64") };
    const cases: [unknown, string][] = [
      [
        [png, { data: Buffer.concat([PNG, Buffer.alloc(40)]).toString("base64") }],
        "images[1]: 56 bytes is over the 32-byte limit",
      ],
      [
        [{ data: Buffer.from("<svg onload=alert(1)>").toString("base64") }],
        "images[0]: not a PNG, JPEG, GIF or WebP image",
      ],
      [[{ data: "not base64!" }], "images[0].data must be standard base64"],
      [[png, png, png], "images: at most 2 per message, got 3"],
      [png, "images must be an array"],
      [[{ data: png.data, fileName: 7 }], "images[0].fileName must be a string of at most 200 characters"],
    ];
    for (const [images, error] of cases) {
      expect(await post({ conversationId: "c1", text: "look", images })).toEqual({
        status: 400,
        json: { error },
      });
    }
    expect(received).toEqual([]);
  });

  it("takes no pictures when maxImagesPerMessage is 0, and the body cap stays small then", async () => {
    const { received, post } = await setup({ maxImagesPerMessage: 0 });
    expect(
      await post({ conversationId: "c1", text: "x", images: [{ data: PNG.toString("base64") }] }),
    ).toEqual({
      status: 400,
      json: { error: "this chat does not take images" },
    });
    const big = await post({ conversationId: "c1", text: "x".repeat(70 * 1024) });
    expect(big.status).toBe(413);
    expect(received).toEqual([]);
  });
});
