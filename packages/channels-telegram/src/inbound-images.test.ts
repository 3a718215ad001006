// Inbound pictures through the fake Bot API: the largest photo size is fetched with getFile and the download
// path and lands in `InboundMessage.images`; a picture the fake has no bytes for, one over the size cap and
// bytes that are not an image are left out and reported, and the message is still delivered. The download
// happens when the gateway lets the message in (`loadImages`, run here by `withInboundImages`).
import { type InboundMessage, withInboundImages } from "@agent-kernel/channels-core";
import { type FakeTelegram, privateChat, startFakeTelegram, user } from "@agent-kernel/fake-telegram";
import { afterEach, expect, it } from "vitest";
import { createTelegramChannel } from "./channel.ts";
import { sniffImageType } from "./inbound-images.ts";

const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const alice = user(42, "Alice");
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(maxImageBytes?: number) {
  const fake: FakeTelegram = await startFakeTelegram();
  cleanups.push(() => fake.close());
  const received: InboundMessage[] = [];
  const errors: string[] = [];
  let wake = () => {};
  const channel = createTelegramChannel({
    token: fake.token,
    apiBaseUrl: fake.url,
    pollTimeoutSeconds: 5,
    ...(maxImageBytes === undefined ? {} : { maxImageBytes }),
    onError: (error) => errors.push(error.message),
  });
  await channel.start({
    onMessage: async (message) => {
      received.push(await withInboundImages(message));
      wake();
    },
  });
  cleanups.push(() => channel.stop());
  const until = (count: number) =>
    new Promise<InboundMessage[]>((resolve) => {
      const check = () => (received.length >= count ? resolve(received) : undefined);
      wake = check;
      check();
    });
  return { fake, errors, until };
}

it("downloads the largest photo size into InboundMessage.images", async () => {
  const { fake, errors, until } = await start();
  const update = fake.pushMessage({
    chat: privateChat(alice),
    from: alice,
    photo: PNG_1X1,
    caption: "what is it?",
  });
  const [message] = await until(1);
  expect(message?.text).toBe("what is it?");
  expect(message?.images).toEqual([
    { type: "image", mimeType: "image/png", data: PNG_1X1.toString("base64") },
  ]);
  const largest = update.message?.photo?.at(-1)?.file_id;
  expect(fake.calls.filter((call) => call.method === "getFile").map((call) => call.params.file_id)).toEqual([
    largest,
  ]);
  expect(fake.calls.filter((call) => call.method === "downloadFile").map((call) => call.served)).toEqual([
    "ok",
  ]);
  expect(errors).toEqual([]);
});

it("leaves out what it cannot fetch, what is too large and what is not an image, and says so", async () => {
  const { fake, errors, until } = await start(100_000);
  const chat = privateChat(alice);
  fake.pushMessage({ chat, from: alice, photo: true, caption: "no bytes" });
  fake.pushMessage({ chat, from: alice, photo: new Uint8Array(200_000).fill(0xff), caption: "too large" });
  fake.pushMessage({ chat, from: alice, photo: new TextEncoder().encode("<svg/>"), caption: "not an image" });
  const messages = await until(3);
  expect(messages.map((message) => [message.text, message.images])).toEqual([
    ["no bytes", undefined],
    ["too large", undefined],
    ["not an image", undefined],
  ]);
  expect(errors).toHaveLength(3);
  expect(errors[0]).toMatch(/^telegram: download files\/photo-file-\d+: HTTP 404/);
  expect(errors[1]).toMatch(/picture photo-file-\d+: 200000 bytes is over the 100000-byte limit/);
  expect(errors[2]).toMatch(/picture photo-file-\d+: not a PNG, JPEG, GIF or WebP image/);
  expect(errors.join("\n")).not.toContain(fake.token);
  // The too-large photo was refused on its announced size: never downloaded.
  expect(fake.calls.filter((call) => call.method === "downloadFile")).toHaveLength(2);
});

it("sniffImageType knows the four types by their first bytes", () => {
  const ascii = (text: string) => new Uint8Array([...text].map((char) => char.charCodeAt(0)));
  expect(sniffImageType(PNG_1X1)).toBe("image/png");
  expect(sniffImageType(new Uint8Array([0xff, 0xd8, 0xff, 0xdb]))).toBe("image/jpeg");
  expect(sniffImageType(ascii("GIF87a"))).toBe("image/gif");
  expect(sniffImageType(ascii("RIFF\u0000\u0000\u0000\u0000WEBP"))).toBe("image/webp");
  expect(sniffImageType(ascii("RIFF\u0000\u0000\u0000\u0000AVI "))).toBeUndefined();
  expect(sniffImageType(new Uint8Array())).toBeUndefined();
});
