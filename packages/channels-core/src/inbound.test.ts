// Inbound helpers: validation errors name the field, mention detection and stripping, dedupe windows.
import { describe, expect, it } from "vitest";
import type { InboundMessage } from "./contract.ts";
import {
  InboundDeduper,
  InboundMessageError,
  mentionListIncludesBot,
  mentionsBot,
  stripBotMention,
  validateInboundMessage,
} from "./inbound.ts";

const valid: InboundMessage = {
  channel: "telegram",
  accountId: "default",
  messageId: "10",
  conversation: { chatType: "group", chatId: "-100", threadId: "3" },
  sender: { id: "42", username: "alice", isBot: false },
  text: "hello",
  media: [{ kind: "image", fileId: "F1" }],
  mentions: [{ username: "bot" }],
  mentionsBot: true,
  timestamp: 1_700_000_000_000,
};

function fieldOf(value: unknown): string {
  try {
    validateInboundMessage(value);
  } catch (error) {
    if (error instanceof InboundMessageError) return error.field;
    throw error;
  }
  return "(valid)";
}

describe("validateInboundMessage", () => {
  it("accepts a well-formed message and returns it", () => {
    expect(validateInboundMessage(valid)).toBe(valid);
    expect(fieldOf({ ...valid, text: "", media: [{ kind: "voice", url: "https://x" }] })).toBe("(valid)");
  });

  it("names the first bad field", () => {
    expect(fieldOf(null)).toBe("message");
    expect(fieldOf({ ...valid, channel: "" })).toBe("channel");
    expect(fieldOf({ ...valid, accountId: 5 })).toBe("accountId");
    expect(fieldOf({ ...valid, conversation: { chatType: "dm", chatId: "1" } })).toBe(
      "conversation.chatType",
    );
    expect(fieldOf({ ...valid, conversation: { chatType: "direct", chatId: " " } })).toBe(
      "conversation.chatId",
    );
    expect(fieldOf({ ...valid, sender: { id: 42 } })).toBe("sender.id");
    expect(fieldOf({ ...valid, media: [{ kind: "image" }] })).toBe("media[0]");
    expect(fieldOf({ ...valid, media: [{ kind: "gif", url: "x" }] })).toBe("media[0].kind");
    expect(fieldOf({ ...valid, images: {} })).toBe("images");
    expect(fieldOf({ ...valid, images: [{ data: "AAAA", mimeType: "image/png" }] })).toBe("images[0]");
    expect(fieldOf({ ...valid, images: [{ type: "image", data: "", mimeType: "image/png" }] })).toBe(
      "images[0].data",
    );
    expect(fieldOf({ ...valid, images: [{ type: "image", data: "AAAA", mimeType: "text/html" }] })).toBe(
      "images[0].mimeType",
    );
    expect(fieldOf({ ...valid, images: [{ type: "image", data: "AAAA", mimeType: "image/jpeg" }] })).toBe(
      "(valid)",
    );
    expect(fieldOf({ ...valid, mentions: [{}] })).toBe("mentions[0]");
    expect(fieldOf({ ...valid, mentionsBot: "yes" })).toBe("mentionsBot");
    expect(fieldOf({ ...valid, timestamp: Number.NaN })).toBe("timestamp");
    expect(fieldOf({ ...valid, text: "", media: [] })).toBe("text");
    expect(() => validateInboundMessage({ ...valid, sender: { id: "" } })).toThrow(
      "invalid inbound message: sender.id must not be empty",
    );
  });
});

describe("mentions", () => {
  const bot = { username: "helper_bot", userId: "U0BOT" };

  it("detects @username at word boundaries (any case) and <@id> patterns", () => {
    expect(mentionsBot("hey @Helper_Bot!", bot)).toBe(true);
    expect(mentionsBot("<@U0BOT> hi", bot)).toBe(true);
    expect(mentionsBot("<@U0BOT|helper> hi", bot)).toBe(true);
    expect(mentionsBot("mail x@helper_bot.com", bot)).toBe(false);
    expect(mentionsBot("@helper_bot2 hi", bot)).toBe(false);
    expect(mentionsBot("no mention", bot)).toBe(false);
    expect(mentionsBot("ping BOT please", { patterns: [/\bbot\b/i] })).toBe(true);
    expect(mentionListIncludesBot([{ username: "@HELPER_BOT" }], bot)).toBe(true);
    expect(mentionListIncludesBot([{ userId: "U1" }], bot)).toBe(false);
  });

  it("strips the bot's mentions and tidies the gaps, keeping other mentions", () => {
    expect(stripBotMention("@helper_bot what time is it?", bot)).toBe("what time is it?");
    expect(stripBotMention("@helper_bot, what time is it?", bot)).toBe("what time is it?");
    expect(stripBotMention("<@U0BOT>: summarise", bot)).toBe("summarise");
    expect(stripBotMention("hey @helper_bot!", bot)).toBe("hey!");
    expect(stripBotMention("ask @helper_bot about @alice", bot)).toBe("ask about @alice");
    expect(stripBotMention("line one @helper_bot\nline two", bot)).toBe("line one\nline two");
    expect(stripBotMention("nothing here", bot)).toBe("nothing here");
  });
});

describe("InboundDeduper", () => {
  it("drops the same (channel, account, chat, message) inside the window and forgets it after", () => {
    let now = 0;
    const dedupe = new InboundDeduper({ windowMs: 1000, now: () => now });
    expect(dedupe.isDuplicate(valid)).toBe(false);
    expect(dedupe.isDuplicate(valid)).toBe(true);
    expect(dedupe.isDuplicate({ ...valid, accountId: "other" })).toBe(false);
    expect(dedupe.isDuplicate({ ...valid, conversation: { ...valid.conversation, chatId: "-200" } })).toBe(
      false,
    );
    expect(dedupe.isDuplicate({ ...valid, channel: "slack" })).toBe(false);
    now = 999;
    expect(dedupe.isDuplicate(valid)).toBe(true);
    now = 1000;
    expect(dedupe.isDuplicate(valid)).toBe(false);
    dedupe.forget(valid);
    expect(dedupe.isDuplicate(valid)).toBe(false);
  });

  it("stays bounded", () => {
    const dedupe = new InboundDeduper({ maxEntries: 3, now: () => 0 });
    for (const id of ["1", "2", "3", "4"]) dedupe.isDuplicate({ ...valid, messageId: id });
    expect(dedupe.size).toBe(3);
    expect(dedupe.isDuplicate({ ...valid, messageId: "1" })).toBe(false);
    expect(dedupe.isDuplicate({ ...valid, messageId: "4" })).toBe(true);
  });
});
