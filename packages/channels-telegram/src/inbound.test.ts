import { type InboundMessage, validateInboundMessage, withInboundImages } from "@agent-kernel/channels-core";
import {
  channelChat,
  type FakeTelegram,
  groupChat,
  privateChat,
  startFakeTelegram,
  supergroupChat,
  user,
} from "@agent-kernel/fake-telegram";
import { afterEach, describe, expect, it } from "vitest";
import { createTelegramChannel, type TelegramChannel } from "./channel.ts";
import { normalizeUpdate } from "./inbound.ts";

/** The first bytes of a JPEG: enough for the adapter's type check (the model is not involved here). */
const JPEG_BYTES = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]);
const alice = user(42, "Alice", { username: "alice", lastName: "Liddell" });
const bob = user(43, "Bob", { username: "bob_b" });
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Receiver {
  channel: TelegramChannel;
  received: InboundMessage[];
  /** Resolves once `count` messages have been received in total. */
  until(count: number): Promise<InboundMessage[]>;
}

async function receiver(fake: FakeTelegram): Promise<Receiver> {
  const received: InboundMessage[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const channel = createTelegramChannel({
    token: fake.token,
    apiBaseUrl: fake.url,
    pollTimeoutSeconds: 5,
    onError: (error) => {
      throw error;
    },
  });
  await channel.start({
    // a gateway that lets every message in (its pictures fetched: withInboundImages)
    onMessage: async (message) => {
      received.push(await withInboundImages(message));
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
    },
  });
  cleanups.push(() => channel.stop());
  return {
    channel,
    received,
    until: (count) =>
      new Promise((resolve) => {
        if (received.length >= count) return resolve(received);
        waiters.push({ count, resolve: () => resolve(received) });
      }),
  };
}

async function fakeServer(): Promise<FakeTelegram> {
  const fake = await startFakeTelegram();
  cleanups.push(() => fake.close());
  return fake;
}

describe("inbound: Telegram updates → InboundMessage over real HTTP long polling", () => {
  it("a private chat is a direct conversation with the sender's names", async () => {
    const fake = await fakeServer();
    const { until } = await receiver(fake);
    fake.pushMessage({ chat: privateChat(alice), from: alice, text: "hello there", date: 1_700_000_000 });
    const [message] = await until(1);
    expect(message).toEqual({
      channel: "telegram",
      accountId: "default",
      messageId: "1",
      conversation: { chatType: "direct", chatId: "42" },
      sender: { id: "42", username: "alice", displayName: "Alice Liddell", isBot: false },
      text: "hello there",
      media: [],
      mentions: [],
      mentionsBot: false,
      timestamp: 1_700_000_000_000,
      raw: expect.objectContaining({ update_id: 1000 }),
    });
  });

  it("groups and supergroups are groups; mentions come from entities, the bot's own included", async () => {
    const fake = await fakeServer();
    const { until } = await receiver(fake);
    fake.pushMessage({ chat: groupChat(-5, "Family"), from: alice, text: "hi @bob_b and @kernel_test_bot" });
    fake.pushMessage({
      chat: supergroupChat(-1001234567890, "Work"),
      from: bob,
      text: "ask Alice",
      entities: [{ type: "text_mention", offset: 4, length: 5, user: alice }],
    });
    fake.pushMessage({ chat: groupChat(-5, "Family"), from: alice, text: "/status@kernel_test_bot" });
    const [group, supergroup, command] = await until(3);
    expect(group).toMatchObject({
      conversation: { chatType: "group", chatId: "-5", title: "Family" },
      mentions: [{ username: "bob_b" }, { username: "kernel_test_bot", userId: "123456" }],
      mentionsBot: true,
    });
    expect(supergroup).toMatchObject({
      conversation: { chatType: "group", chatId: "-1001234567890", title: "Work" },
      mentions: [{ userId: "42", username: "alice" }],
      mentionsBot: false,
    });
    expect(command?.mentionsBot).toBe(true);
  });

  it("a reply to the bot's message counts as mentioning it; a reply to someone else does not", async () => {
    const fake = await fakeServer();
    const { channel, until } = await receiver(fake);
    const family = groupChat(-5, "Family");
    fake.addChat(family);
    const sent = await channel.send({ target: { accountId: "default", chatId: "-5" }, text: "I am the bot" });
    const botMessageId = Number(sent.messages[0]?.messageId);
    const first = fake.pushMessage({ chat: family, from: alice, text: "first" });
    fake.pushMessage({ chat: family, from: bob, text: "answering the bot", replyTo: botMessageId });
    fake.pushMessage({
      chat: family,
      from: bob,
      text: "answering alice",
      replyTo: first.message?.message_id ?? 0,
    });
    const [, toBot, toAlice] = await until(3);
    expect(toBot).toMatchObject({ mentionsBot: true, replyToMessageId: String(botMessageId) });
    expect(toAlice).toMatchObject({
      mentionsBot: false,
      replyToMessageId: String(first.message?.message_id),
    });
  });

  it("forum topics: threadId is the topic, and the topic root is not a reply", async () => {
    const fake = await fakeServer();
    const { until } = await receiver(fake);
    const forum = supergroupChat(-1009876543210, "Forum", { forum: true });
    fake.pushMessage({ chat: forum, from: alice, text: "in the topic", threadId: 77 });
    const [message] = await until(1);
    expect(message?.conversation).toEqual({
      chatType: "group",
      chatId: "-1009876543210",
      threadId: "77",
      title: "Forum",
    });
    expect(message?.replyToMessageId).toBeUndefined();
  });

  it("channel posts are channel conversations spoken by the channel", async () => {
    const fake = await fakeServer();
    const { until } = await receiver(fake);
    fake.pushMessage({ chat: channelChat(-1001111111111, "News", "news_channel"), text: "breaking" });
    const [post] = await until(1);
    expect(post).toMatchObject({
      conversation: { chatType: "channel", chatId: "-1001111111111", title: "News" },
      sender: { id: "-1001111111111", username: "news_channel", displayName: "News", isBot: false },
      text: "breaking",
    });
  });

  it("media: the largest photo size, documents, audio, voice, video and stickers with file ids", async () => {
    const fake = await fakeServer();
    const { until } = await receiver(fake);
    const chat = privateChat(alice);
    const photo = fake.pushMessage({
      chat,
      from: alice,
      photo: JPEG_BYTES,
      caption: "look @kernel_test_bot",
    });
    fake.pushMessage({
      chat,
      from: alice,
      document: { file_name: "a.pdf", mime_type: "application/pdf", file_size: 9 },
    });
    fake.pushMessage({ chat, from: alice, audio: { mime_type: "audio/mpeg" } });
    fake.pushMessage({ chat, from: alice, voice: { mime_type: "audio/ogg" } });
    fake.pushMessage({ chat, from: alice, video: { mime_type: "video/mp4" } });
    fake.pushMessage({ chat, from: alice, sticker: { emoji: "👍" } });
    const messages = await until(6);
    const largest = photo.message?.photo?.at(-1)?.file_id;
    expect(messages[0]).toMatchObject({
      text: "look @kernel_test_bot",
      mentionsBot: true,
      media: [{ kind: "image", fileId: largest, caption: "look @kernel_test_bot" }],
      images: [{ type: "image", mimeType: "image/jpeg", data: Buffer.from(JPEG_BYTES).toString("base64") }],
    });
    expect(messages.slice(1).every((m) => m.images === undefined)).toBe(true);
    expect(messages.slice(1).map((m) => [m.text, m.media.map((item) => item.kind)])).toEqual([
      ["", ["document"]],
      ["", ["audio"]],
      ["", ["voice"]],
      ["", ["video"]],
      ["", ["sticker"]],
    ]);
    expect(messages[1]?.media[0]).toMatchObject({
      fileName: "a.pdf",
      mimeType: "application/pdf",
      sizeBytes: 9,
    });
    expect(messages.every((m) => m.media[0]?.fileId?.includes("-file-"))).toBe(true);
  });

  it("edits and service messages are confirmed but not delivered", async () => {
    const fake = await fakeServer();
    const { until, received } = await receiver(fake);
    const chat = privateChat(alice);
    fake.pushMessage({ chat, from: alice, text: "edited", edited: true });
    fake.pushMessage({ chat, from: alice });
    fake.pushMessage({ chat, from: alice, text: "real" });
    await until(1);
    expect(received.map((m) => m.text)).toEqual(["real"]);
  });
});

describe("normalizeUpdate: blank names and titles", () => {
  it("leaves out a blank username, name or title instead of making an invalid message", () => {
    const bot = { id: 42, username: "reliability_bot" };
    const fromChat = normalizeUpdate(
      {
        update_id: 1,
        channel_post: {
          message_id: 1,
          date: 0,
          chat: { id: 7, type: "channel", username: " ", title: "  " },
          caption: "@reliability_bot hi",
        },
      } as never,
      bot,
      "default",
    );
    const fromUser = normalizeUpdate(
      {
        update_id: 2,
        message: {
          message_id: 2,
          date: 0,
          chat: { id: 8, type: "private" },
          from: { id: 8, is_bot: false, first_name: " ", username: "" },
          text: "hi",
        },
      } as never,
      bot,
      "default",
    );
    for (const message of [fromChat, fromUser]) {
      expect(message).toBeDefined();
      if (message === undefined) continue;
      expect(() => validateInboundMessage(message)).not.toThrow();
      expect(message.sender).not.toHaveProperty("username");
      expect(message.sender).not.toHaveProperty("displayName");
      expect(message.conversation).not.toHaveProperty("title");
    }
  });
});
