// Keeps the fake honest against the official client: grammY (the library most Node bots use) drives the fake
// over real HTTP, so whatever grammY sends (its own multipart encoder, any parse_mode spelling) must be
// answered as Telegram's server answers it, and grammY's types must accept what the fake returns.
import { Api, Bot, GrammyError, InputFile } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegram, startFakeTelegram } from "./server.ts";
import { groupChat, privateChat, supergroupChat, user } from "./updates.ts";

const alice = user(42, "Alice", { username: "alice" });
let fake: FakeTelegram | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function apiFor(target: FakeTelegram): Api {
  return new Api(target.token, { apiRoot: target.url });
}

/** The keys a type requires (not the optional ones). */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

// Type-checked against the installed @grammyjs/types: a required field added to UserFromGetMe (or one listed
// here that is not required) fails `tsc`, so this list cannot silently fall behind the real getMe.
const USER_FROM_GET_ME_REQUIRED: Record<RequiredKeys<UserFromGetMe>, true> = {
  id: true,
  is_bot: true,
  first_name: true,
  username: true,
  can_join_groups: true,
  can_read_all_group_messages: true,
  supports_inline_queries: true,
  can_connect_to_business: true,
  has_main_web_app: true,
  has_topics_enabled: true,
  allows_users_to_create_topics: true,
  can_manage_bots: true,
  supports_join_request_queries: true,
};

async function telegramError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GrammyError) return `${error.error_code} ${error.description}`;
    throw error;
  }
  throw new Error("expected the call to fail");
}

describe("the fake Telegram driven by grammY", () => {
  it("getMe returns every required field of grammY's UserFromGetMe", async () => {
    fake = await startFakeTelegram();
    const bot = new Bot(fake.token, { client: { apiRoot: fake.url } });
    await bot.init();
    const me: UserFromGetMe = bot.botInfo;
    expect(me).toMatchObject({ id: fake.bot.id, is_bot: true, username: fake.bot.username });
    const missing = Object.keys(USER_FROM_GET_ME_REQUIRED).filter((key) => !(key in me));
    expect(missing).toEqual([]);
  });

  it("accepts parse_mode in any letter case, as the real server lower-cases it", async () => {
    fake = await startFakeTelegram();
    fake.addChat(privateChat(alice));
    const api = apiFor(fake);
    const cases: [string, string][] = [
      ["HTML", "<b>bold</b>"],
      ["html", "<b>bold</b>"],
      ["Html", "<b>bold</b>"],
      ["MarkdownV2", "*bold*"],
      ["markdownv2", "*bold*"],
      ["MARKDOWNV2", "*bold*"],
    ];
    for (const [mode, text] of cases) {
      // grammY types parse_mode as the canonical spellings; the wire accepts any case
      const sent = await api.sendMessage(alice.id, text, { parse_mode: mode as "HTML" });
      expect({ mode, text: sent.text, entities: sent.entities }).toEqual({
        mode,
        text: "bold",
        entities: [{ type: "bold", offset: 0, length: 4 }],
      });
    }
    expect(await telegramError(api.sendMessage(alice.id, "x", { parse_mode: "BBCode" as "HTML" }))).toBe(
      "400 Bad Request: unsupported parse_mode",
    );
  });

  it("takes grammY's multipart upload (unquoted filename, unspaced part headers) for sendDocument", async () => {
    fake = await startFakeTelegram();
    fake.addChat(privateChat(alice));
    const api = apiFor(fake);
    const bytes = new TextEncoder().encode("quarterly numbers\n");
    const sent = await api.sendDocument(alice.id, new InputFile(bytes, "report 1.txt"), {
      caption: "<b>Q3</b>",
      parse_mode: "HTML",
    });
    expect(sent.document).toMatchObject({ file_name: "report 1.txt", file_size: bytes.length });
    expect(sent).toMatchObject({ caption: "Q3", caption_entities: [{ type: "bold", offset: 0, length: 2 }] });
    const call = fake.sent.at(-1);
    expect(call?.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(call?.files.map((file) => [file.fileName, Buffer.from(file.bytes).toString("utf8")])).toEqual([
      ["report 1.txt", "quarterly numbers\n"],
    ]);
    // the uploaded file can be sent again by its file_id (now a JSON call)
    const again = await api.sendDocument(alice.id, sent.document.file_id);
    expect(again.document.file_id).toBe(sent.document.file_id);
  });

  it("refuses a forum's General topic and unknown threads with 'message thread not found'", async () => {
    fake = await startFakeTelegram();
    const forum = supergroupChat(-1001111111111, "Forum", { forum: true });
    fake.pushMessage({ chat: forum, from: alice, text: "in topic 5", threadId: 5 });
    const api = apiFor(fake);
    const notFound = "400 Bad Request: message thread not found";
    // the General topic (1) is not addressable by id: the real server answers 400
    expect(await telegramError(api.sendMessage(forum.id, "x", { message_thread_id: 1 }))).toBe(notFound);
    expect(await telegramError(api.sendMessage(forum.id, "x", { message_thread_id: 99 }))).toBe(notFound);
    expect(await api.sendMessage(forum.id, "ok", { message_thread_id: 5 })).toMatchObject({
      message_thread_id: 5,
      is_topic_message: true,
    });
    // outside forums: a private chat has no topics; a group only the reply threads seen in it
    fake.addChat(privateChat(alice));
    expect(await telegramError(api.sendMessage(alice.id, "x", { message_thread_id: 5 }))).toBe(notFound);
    const group = groupChat(-4001, "Group");
    fake.addChat(group);
    expect(await telegramError(api.sendMessage(group.id, "x", { message_thread_id: 5 }))).toBe(notFound);
    // 0 means "no thread" to the real server
    expect(await api.sendMessage(group.id, "plain", { message_thread_id: 0 })).not.toHaveProperty(
      "message_thread_id",
    );
  });

  it("mentions only users the fake has seen, with the user filled in", async () => {
    fake = await startFakeTelegram();
    fake.pushMessage({ chat: privateChat(alice), from: alice, text: "hi" });
    const api = apiFor(fake);
    const sent = await api.sendMessage(alice.id, '<a href="tg://user?id=42">Alice</a>', {
      parse_mode: "HTML",
    });
    expect(sent.entities).toEqual([{ type: "text_mention", offset: 0, length: 5, user: alice }]);
    expect(
      await telegramError(api.sendMessage(alice.id, "[Bob](tg://user?id=77)", { parse_mode: "MarkdownV2" })),
    ).toBe("400 Bad Request: user not found");
  });

  it("runs a grammY long-polling bot: an inbound message gets a reply", async () => {
    fake = await startFakeTelegram();
    const target = fake;
    const bot = new Bot(target.token, { client: { apiRoot: target.url } });
    bot.on("message:text", (ctx) => ctx.reply(`echo: ${ctx.message.text}`));
    const replied = target.waitForCall("sendMessage");
    const running = bot.start({ timeout: 1, drop_pending_updates: false });
    await target.waitForLongPoll();
    target.pushMessage({ chat: privateChat(alice), from: alice, text: "ping" });
    const call = await replied;
    expect(call.response).toMatchObject({ ok: true, result: { text: "echo: ping", chat: { id: alice.id } } });
    await bot.stop();
    await running;
  }, 30_000);
});
