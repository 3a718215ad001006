import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegram, startFakeTelegram } from "./server.ts";
import type { TgResponse } from "./types.ts";
import { groupChat, privateChat, supergroupChat, user } from "./updates.ts";

const alice = user(42, "Alice", { username: "alice" });
let fake: FakeTelegram | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function call(
  target: FakeTelegram,
  method: string,
  body: Record<string, unknown> | FormData | URLSearchParams = {},
  token = target.token,
): Promise<{ status: number; body: TgResponse<unknown> }> {
  const init: RequestInit =
    body instanceof FormData || body instanceof URLSearchParams
      ? { method: "POST", body }
      : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(`${target.url}/bot${token}/${method}`, init);
  return { status: response.status, body: (await response.json()) as TgResponse<unknown> };
}

describe("the fake Bot API over HTTP", () => {
  it("answers getMe and refuses a wrong token with 401 like Telegram", async () => {
    fake = await startFakeTelegram();
    expect((await call(fake, "getMe")).body).toMatchObject({
      ok: true,
      result: { id: 123456, is_bot: true },
    });
    expect(await call(fake, "getMe", {}, "1:wrong")).toEqual({
      status: 401,
      body: { ok: false, error_code: 401, description: "Unauthorized" },
    });
    expect((await call(fake, "noSuchMethod")).body).toEqual({
      ok: false,
      error_code: 404,
      description: "Not Found",
    });
    // GET with the parameters in the query string works too, and method names are case-insensitive
    fake.addChat(privateChat(alice));
    const viaGet = await fetch(`${fake.url}/bot${fake.token}/SENDMESSAGE?chat_id=42&text=hi`);
    expect(await viaGet.json()).toMatchObject({ ok: true, result: { text: "hi", chat: { id: 42 } } });
  });

  it("getUpdates: offset confirms earlier updates, limit caps, a long poll waits for the next update", async () => {
    fake = await startFakeTelegram({ firstUpdateId: 10 });
    fake.pushMessage({ chat: privateChat(alice), from: alice, text: "one" });
    fake.pushMessage({ chat: privateChat(alice), from: alice, text: "two" });
    const first = await call(fake, "getUpdates", { limit: 1 });
    expect(first.body).toMatchObject({ ok: true, result: [{ update_id: 10, message: { text: "one" } }] });
    // not confirmed yet: the same update comes again
    expect((await call(fake, "getUpdates", { limit: 1 })).body).toMatchObject({
      result: [{ update_id: 10 }],
    });
    expect((await call(fake, "getUpdates", { offset: 11 })).body).toMatchObject({
      result: [{ update_id: 11 }],
    });
    expect(fake.pendingUpdates().map((u) => u.update_id)).toEqual([11]);
    const polling = call(fake, "getUpdates", { offset: 12, timeout: 30 });
    await fake.waitForLongPoll();
    fake.pushMessage({ chat: privateChat(alice), from: alice, text: "three" });
    expect((await polling).body).toMatchObject({
      ok: true,
      result: [{ update_id: 12, message: { text: "three" } }],
    });
  });

  it("a second poller ends the first with 409, and an elapsed timeout answers []", async () => {
    fake = await startFakeTelegram();
    const first = call(fake, "getUpdates", { timeout: 30 });
    await fake.waitForLongPoll();
    const second = call(fake, "getUpdates", { timeout: 1 });
    expect((await first).body).toMatchObject({ ok: false, error_code: 409 });
    expect((await second).body).toEqual({ ok: true, result: [] });
  });

  it("sendMessage parses MarkdownV2 strictly, limits length and threads replies", async () => {
    fake = await startFakeTelegram();
    const update = fake.pushMessage({ chat: privateChat(alice), from: alice, text: "hi" });
    const inbound = update.message?.message_id;
    const ok = await call(fake, "sendMessage", {
      chat_id: 42,
      text: "*Done* 1\\.5",
      parse_mode: "MarkdownV2",
      reply_parameters: { message_id: inbound },
    });
    expect(ok.body).toMatchObject({
      ok: true,
      result: {
        text: "Done 1.5",
        entities: [{ type: "bold", offset: 0, length: 4 }],
        reply_to_message: { text: "hi" },
      },
    });
    expect(
      (await call(fake, "sendMessage", { chat_id: 42, text: "1.5", parse_mode: "MarkdownV2" })).body,
    ).toEqual({
      ok: false,
      error_code: 400,
      description:
        "Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\\'",
    });
    expect((await call(fake, "sendMessage", { chat_id: 42, text: "x".repeat(4097) })).body).toMatchObject({
      description: "Bad Request: message is too long",
    });
    expect(
      (await call(fake, "sendMessage", { chat_id: 42, text: "x", reply_parameters: { message_id: 999 } }))
        .body,
    ).toMatchObject({
      description: "Bad Request: message to be replied not found",
    });
    expect((await call(fake, "sendMessage", { chat_id: 7, text: "x" })).body).toMatchObject({
      description: "Bad Request: chat not found",
    });
  });

  it("accepts urlencoded and multipart bodies, uploads and URLs for media", async () => {
    fake = await startFakeTelegram();
    fake.addChat(groupChat(-5, "G"));
    const form = new URLSearchParams({ chat_id: "-5", text: "<b>x</b>", parse_mode: "HTML" });
    expect((await call(fake, "sendMessage", form)).body).toMatchObject({ ok: true, result: { text: "x" } });
    const upload = new FormData();
    upload.set("chat_id", "-5");
    upload.set("caption", "a caption");
    upload.set("document", new Blob([new Uint8Array([1, 2, 3])], { type: "text/plain" }), "notes.txt");
    expect((await call(fake, "sendDocument", upload)).body).toMatchObject({
      ok: true,
      result: {
        caption: "a caption",
        document: { file_name: "notes.txt", mime_type: "text/plain", file_size: 3 },
      },
    });
    expect(fake.sent.at(-1)?.files[0]?.bytes).toEqual(new Uint8Array([1, 2, 3]));
    expect(
      (await call(fake, "sendPhoto", { chat_id: -5, photo: "https://example.test/a.png" })).body,
    ).toMatchObject({
      ok: true,
      result: { photo: [{ width: 90 }, { width: 320 }, { width: 1280 }] },
    });
    expect((await call(fake, "sendPhoto", { chat_id: -5, photo: "not a url" })).body).toMatchObject({
      description: "Bad Request: wrong file identifier/HTTP URL specified",
    });
    expect(
      (
        await call(fake, "sendPhoto", {
          chat_id: -5,
          photo: "https://x.test/p.png",
          caption: "c".repeat(1025),
        })
      ).body,
    ).toMatchObject({
      description: "Bad Request: message caption is too long",
    });
  });

  it("topics: message_thread_id must name a topic of the forum", async () => {
    fake = await startFakeTelegram();
    const forum = supergroupChat(-1001234567890, "Forum", { forum: true });
    const update = fake.pushMessage({ chat: forum, from: alice, text: "in topic", threadId: 77 });
    expect(update.message).toMatchObject({
      message_thread_id: 77,
      is_topic_message: true,
      reply_to_message: { message_id: 77 },
    });
    expect(
      (await call(fake, "sendMessage", { chat_id: forum.id, text: "x", message_thread_id: 77 })).body,
    ).toMatchObject({
      ok: true,
      result: { message_thread_id: 77, is_topic_message: true },
    });
    expect(
      (await call(fake, "sendMessage", { chat_id: forum.id, text: "x", message_thread_id: 5 })).body,
    ).toMatchObject({
      description: "Bad Request: message thread not found",
    });
  });

  it("editMessageText and sendChatAction behave like Telegram", async () => {
    fake = await startFakeTelegram();
    fake.addChat(privateChat(alice));
    const sent = await call(fake, "sendMessage", { chat_id: 42, text: "draft" });
    const id = (sent.body as { result: { message_id: number } }).result.message_id;
    expect(
      (
        await call(fake, "editMessageText", {
          chat_id: 42,
          message_id: id,
          text: "*final*",
          parse_mode: "MarkdownV2",
        })
      ).body,
    ).toMatchObject({
      ok: true,
      result: { text: "final", entities: [{ type: "bold" }] },
    });
    expect(
      (
        await call(fake, "editMessageText", {
          chat_id: 42,
          message_id: id,
          text: "*final*",
          parse_mode: "MarkdownV2",
        })
      ).body,
    ).toMatchObject({
      description: expect.stringContaining("message is not modified"),
    });
    expect((await call(fake, "sendChatAction", { chat_id: 42, action: "typing" })).body).toEqual({
      ok: true,
      result: true,
    });
    expect((await call(fake, "sendChatAction", { chat_id: 42, action: "dancing" })).body).toMatchObject({
      error_code: 400,
    });
  });

  it("injects faults: 429 with retry_after, 500, a 502 HTML page, a reset, 401", async () => {
    fake = await startFakeTelegram();
    fake.addChat(privateChat(alice));
    fake.failNext({ kind: "rate_limit", method: "sendMessage", retryAfter: 3 });
    fake.failNext({ kind: "server_error", method: "sendMessage" });
    fake.failNext({ kind: "bad_gateway", method: "sendMessage" });
    fake.failNext({ kind: "reset", method: "sendMessage" });
    fake.failNext({ kind: "unauthorized", method: "getMe" });
    expect(await call(fake, "sendMessage", { chat_id: 42, text: "x" })).toEqual({
      status: 429,
      body: {
        ok: false,
        error_code: 429,
        description: "Too Many Requests: retry after 3",
        parameters: { retry_after: 3 },
      },
    });
    expect((await call(fake, "sendMessage", { chat_id: 42, text: "x" })).status).toBe(500);
    const gateway = await fetch(`${fake.url}/bot${fake.token}/sendMessage`, { method: "POST" });
    expect([gateway.status, (await gateway.text()).includes("502 Bad Gateway")]).toEqual([502, true]);
    await expect(call(fake, "sendMessage", { chat_id: 42, text: "x" })).rejects.toThrow();
    expect((await call(fake, "getMe")).status).toBe(401);
    expect((await call(fake, "sendMessage", { chat_id: 42, text: "x" })).body.ok).toBe(true);
    expect(fake.sent.map((c) => c.served)).toEqual(["error:429", "error:500", "error:502", "reset", "ok"]);
  });

  it("allowed_updates filters kinds, a negative offset keeps only the last updates, a webhook blocks polling", async () => {
    fake = await startFakeTelegram({ firstUpdateId: 1 });
    const chat = privateChat(alice);
    fake.pushMessage({ chat, from: alice, text: "a" });
    fake.pushMessage({ chat, from: alice, text: "edited", edited: true });
    fake.pushMessage({ chat, from: alice, text: "b" });
    const onlyMessages = await call(fake, "getUpdates", { allowed_updates: ["message"] });
    expect((onlyMessages.body as { result: { update_id: number }[] }).result.map((u) => u.update_id)).toEqual(
      [1, 3],
    );
    expect((await call(fake, "getUpdates", { offset: -1 })).body).toMatchObject({
      result: [{ update_id: 3 }],
    });
    expect(fake.pendingUpdates().map((u) => u.update_id)).toEqual([3]);
    fake.setWebhook("https://example.test/hook");
    expect((await call(fake, "getUpdates")).body).toMatchObject({ ok: false, error_code: 409 });
    expect((await call(fake, "deleteWebhook", { drop_pending_updates: true })).body).toEqual({
      ok: true,
      result: true,
    });
    expect((await call(fake, "getUpdates")).body).toEqual({ ok: true, result: [] });
  });
});
