import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChannelError } from "@agent-kernel/channels-core";
import {
  type FakeTelegram,
  groupChat,
  privateChat,
  startFakeTelegram,
  supergroupChat,
  user,
} from "@agent-kernel/fake-telegram";
import { scanFenceSpans } from "@agent-kernel/markdown";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTelegramChannel, type TelegramChannel, type TelegramChannelOptions } from "./channel.ts";

const alice = user(42, "Alice", { username: "alice" });
const dm = { accountId: "default", chatId: "42" };
let fake: FakeTelegram;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "channels-telegram-send-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

afterEach(async () => {
  await fake.close();
});

async function setup(options: Partial<TelegramChannelOptions> = {}): Promise<TelegramChannel> {
  fake = await startFakeTelegram();
  fake.addChat(privateChat(alice));
  return createTelegramChannel({
    token: fake.token,
    apiBaseUrl: fake.url,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    ...options,
  });
}

function sentTexts(): string[] {
  return fake.messages(42).flatMap((m) => (m.text === undefined ? [] : [m.text]));
}

describe("outbound text", () => {
  it("formats Markdown as MarkdownV2 that Telegram parses into the intended entities", async () => {
    const channel = await setup();
    const result = await channel.send({ target: dm, text: "**Done.** See `x.y` (v1.2)!" });
    expect(result.messages).toEqual([{ messageId: "1", chatId: "42" }]);
    expect(fake.sent[0]?.params).toMatchObject({
      parse_mode: "MarkdownV2",
      text: "*Done\\.* See `x.y` \\(v1\\.2\\)\\!",
    });
    expect(fake.messages(42)[0]).toMatchObject({
      text: "Done. See x.y (v1.2)!",
      entities: [
        { type: "bold", offset: 0, length: 5 },
        { type: "code", offset: 10, length: 3 },
      ],
    });
  });

  it("chunks a long reply under the limit measured on the formatted text, never inside a code fence", async () => {
    const channel = await setup({ textChunkLimit: 500 });
    const code = Array.from(
      { length: 30 },
      (_, i) => `const value${i} = compute(${i}) - 1.5; // line ${i}`,
    ).join("\n");
    const prose = Array.from(
      { length: 12 },
      (_, i) => `Paragraph ${i}: dots. dashes - and (parens) everywhere!`,
    ).join("\n\n");
    const text = `${prose}\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThe end.`;
    const result = await channel.send({ target: dm, text });
    expect(result.messages.length).toBeGreaterThan(3);
    for (const call of fake.sent) {
      const formatted = String(call.params.text);
      expect(formatted.length).toBeLessThanOrEqual(500);
      // a fence opened in a message is closed in the same message
      expect(scanFenceSpans(formatted).state.open).toBeUndefined();
      expect(call.served).toBe("ok");
    }
    const delivered = sentTexts().join("\n");
    for (let i = 0; i < 30; i++)
      expect(delivered).toContain(`const value${i} = compute(${i}) - 1.5; // line ${i}`);
    expect(delivered).toContain("The end.");
  });

  it("property: whatever the text, every chunk is accepted by the strict parser and within the limit", async () => {
    const channel = await setup({ textChunkLimit: 200 });
    const piece = fc.oneof(
      fc.constantFrom(
        "**",
        "_",
        "`",
        "```py\n",
        "\n```\n",
        "\n\n",
        "> ",
        "# ",
        ".",
        "-",
        "(",
        ")",
        "[a](https://e.test/x)",
        "\\",
      ),
      fc.string({ maxLength: 30 }),
      fc.string({ unit: "grapheme", maxLength: 10 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 40 }), async (parts) => {
        fake.clearCalls();
        const text = parts.join("");
        await channel.send({ target: dm, text });
        for (const call of fake.sent) {
          expect(call.served).toBe("ok");
          expect(call.params.parse_mode).toBe("MarkdownV2");
          expect(String(call.params.text).length).toBeLessThanOrEqual(200);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("threads the first message of a reply and posts into forum topics", async () => {
    const channel = await setup();
    const forum = supergroupChat(-1002222222222, "Forum", { forum: true });
    const inbound = fake.pushMessage({ chat: forum, from: alice, text: "question", threadId: 9 });
    const target = {
      accountId: "default",
      chatId: String(forum.id),
      threadId: "9",
      replyToMessageId: String(inbound.message?.message_id),
    };
    const result = await channel.send({ target, text: `${"a".repeat(3000)}\n\n${"b".repeat(3000)}` });
    expect(result.messages.map((m) => m.threadId)).toEqual(["9", "9"]);
    const [first, second] = fake.sent;
    expect(first?.params).toMatchObject({
      message_thread_id: 9,
      reply_parameters: { message_id: inbound.message?.message_id, allow_sending_without_reply: true },
    });
    expect(second?.params.reply_parameters).toBeUndefined();
    expect(fake.messages(forum.id).at(-2)).toMatchObject({
      reply_to_message: { text: "question" },
      message_thread_id: 9,
    });
  });

  it("falls back to HTML, then plain text, when Telegram cannot parse the entities", async () => {
    const channel = await setup();
    fake.failNext({ kind: "parse_entities", method: "sendMessage" });
    await channel.send({ target: dm, text: "**bold** 1.5" });
    expect(fake.sent.map((c) => [c.params.parse_mode, c.served])).toEqual([
      ["MarkdownV2", "error:400"],
      ["HTML", "ok"],
    ]);
    expect(fake.messages(42).at(-1)).toMatchObject({ text: "bold 1.5", entities: [{ type: "bold" }] });
    fake.clearCalls();
    fake.failNext({ kind: "parse_entities", method: "sendMessage", times: 2 });
    await channel.send({ target: dm, text: "**bold** 1.5" });
    expect(fake.sent.map((c) => c.params.parse_mode)).toEqual(["MarkdownV2", "HTML", undefined]);
    expect(fake.messages(42).at(-1)?.text).toBe("**bold** 1.5");
  });

  it("sends typing and edits (same text is not an error)", async () => {
    const channel = await setup();
    await channel.sendTyping(dm);
    const result = await channel.send({ target: dm, text: "draft" });
    const id = result.messages[0]?.messageId ?? "";
    await channel.edit(dm, id, "**final** answer.");
    await channel.edit(dm, id, "**final** answer.");
    expect(fake.sent.map((c) => [c.method, c.served])).toEqual([
      ["sendChatAction", "ok"],
      ["sendMessage", "ok"],
      ["editMessageText", "ok"],
      ["editMessageText", "error:400"],
    ]);
    expect(fake.sent[0]?.params).toEqual({ chat_id: "42", action: "typing" });
    expect(fake.messages(42)[0]).toMatchObject({ text: "final answer.", entities: [{ type: "bold" }] });
  });
});

describe("outbound media", () => {
  it("by URL, with the reply's text as the caption when it fits", async () => {
    const channel = await setup();
    const result = await channel.send({
      target: dm,
      text: "Here is the *chart*.",
      media: [{ kind: "image", url: "https://example.test/chart.png" }],
    });
    expect(result.messages).toHaveLength(1);
    expect(fake.sent[0]).toMatchObject({
      method: "sendPhoto",
      contentType: "application/json",
      params: {
        photo: "https://example.test/chart.png",
        caption: "Here is the _chart_\\.",
        parse_mode: "MarkdownV2",
      },
    });
    expect(fake.messages(42)[0]).toMatchObject({ caption: "Here is the chart.", photo: expect.any(Array) });
  });

  it("by upload from a path and from bytes (multipart), a long text following the media", async () => {
    const channel = await setup();
    const path = join(scratch, "report.txt");
    await writeFile(path, "report body");
    const long = `${"word ".repeat(300)}end`;
    const result = await channel.send({
      target: { ...dm, replyToMessageId: "999" },
      text: long,
      media: [
        { kind: "document", path, mimeType: "text/plain" },
        { kind: "voice", data: new Uint8Array([1, 2, 3, 4]), fileName: "note.ogg", mimeType: "audio/ogg" },
      ],
    });
    expect(result.messages).toHaveLength(3);
    const [document, voice, text] = fake.sent;
    expect(document).toMatchObject({ method: "sendDocument", params: { chat_id: "42" } });
    expect(document?.contentType).toMatch(/^multipart\/form-data/);
    expect(document?.params.reply_parameters).toEqual({ message_id: 999, allow_sending_without_reply: true });
    expect(document?.files[0]).toMatchObject({
      field: "document",
      fileName: "report.txt",
      mimeType: "text/plain",
    });
    expect(Buffer.from(document?.files[0]?.bytes ?? []).toString()).toBe("report body");
    expect(voice?.files[0]).toMatchObject({
      field: "voice",
      fileName: "note.ogg",
      bytes: new Uint8Array([1, 2, 3, 4]),
    });
    expect(voice?.params.reply_parameters).toBeUndefined();
    expect(document?.params.caption).toBeUndefined();
    expect(text).toMatchObject({ method: "sendMessage" });
    expect(String(text?.params.text)).toContain("end");
  });

  it("an item's own caption over 1024 characters follows as text; a sticker goes by file id", async () => {
    const channel = await setup();
    const inbound = fake.pushMessage({ chat: privateChat(alice), from: alice, sticker: { emoji: "👍" } });
    const stickerId = inbound.message?.sticker?.file_id ?? "";
    const longCaption = `${"caption words ".repeat(90)}tail`;
    const result = await channel.send({
      target: dm,
      media: [
        { kind: "image", url: "https://example.test/a.png", caption: longCaption },
        { kind: "sticker", fileId: stickerId },
      ],
    });
    expect(fake.sent.map((c) => c.method)).toEqual(["sendPhoto", "sendSticker", "sendMessage"]);
    expect(fake.sent[0]?.params.caption).toBeUndefined();
    expect(fake.sent[1]?.params.sticker).toBe(stickerId);
    expect(String(fake.sent[2]?.params.text)).toContain("tail");
    expect(result.messages).toHaveLength(3);
  });

  it("parseMode HTML sends Telegram HTML", async () => {
    const channel = await setup({ parseMode: "HTML" });
    expect(channel.capabilities.dialect).toBe("telegram-html");
    await channel.send({ target: dm, text: "**x** < y & z" });
    expect(fake.sent[0]?.params).toMatchObject({ parse_mode: "HTML", text: "<b>x</b> &lt; y &amp; z" });
    expect(fake.messages(42)[0]).toMatchObject({
      text: "x < y & z",
      entities: [{ type: "bold", offset: 0, length: 1 }],
    });
  });

  it("a missing file to upload is a clear, non-retryable error", async () => {
    const channel = await setup();
    const error = await channel
      .send({ target: dm, media: [{ kind: "document", path: join(scratch, "missing.bin") }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChannelError);
    expect((error as ChannelError).message).toMatch(/cannot read the file to upload .*missing\.bin/);
    expect(fake.sent).toHaveLength(0);
  });
});

describe("rate limits and failures", () => {
  it("honours 429 retry_after: the retry comes no earlier than Telegram asked", async () => {
    const channel = await setup();
    fake.failNext({ kind: "rate_limit", method: "sendMessage", retryAfter: 1 });
    await channel.send({ target: dm, text: "hello" });
    const [limited, retried] = fake.sent;
    expect([limited?.served, retried?.served]).toEqual(["error:429", "ok"]);
    expect((retried?.receivedAt ?? 0) - (limited?.receivedAt ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it("retries 500, a 502 HTML page and a connection reset; does not retry a 400", async () => {
    const channel = await setup();
    fake.failNext({ kind: "server_error", method: "sendMessage" });
    fake.failNext({ kind: "bad_gateway", method: "sendMessage" });
    fake.failNext({ kind: "reset", method: "sendMessage" });
    await channel.send({ target: dm, text: "eventually" });
    expect(fake.sent.map((c) => c.served)).toEqual(["error:500", "error:502", "reset", "ok"]);
    fake.clearCalls();
    const error = await channel
      .send({ target: { accountId: "default", chatId: "777" }, text: "x" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 400,
      retryable: false,
      message: "telegram: sendMessage: Bad Request: chat not found (400)",
    });
    expect(fake.sent).toHaveLength(1);
  });

  it("gives up after maxAttempts and reports the last failure", async () => {
    const channel = await setup({ retry: { maxAttempts: 2, baseDelayMs: 1 } });
    fake.failNext({ kind: "server_error", method: "sendMessage", times: 5 });
    const error = await channel.send({ target: dm, text: "x" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500, retryable: true });
    expect(fake.sent).toHaveLength(2);
  });

  it("a retry_after beyond the cap fails at once; a wait in progress is abortable", async () => {
    const channel = await setup({ retry: { maxRetryAfterMs: 2000 } });
    fake.failNext({ kind: "rate_limit", method: "sendMessage", retryAfter: 30 });
    const capped = await channel.send({ target: dm, text: "x" }).catch((e: unknown) => e);
    expect(capped).toMatchObject({ status: 429, retryAfterMs: 30_000 });
    fake.failNext({ kind: "rate_limit", method: "sendMessage", retryAfter: 2 });
    const controller = new AbortController();
    const pending = channel.send({ target: dm, text: "x" }, { signal: controller.signal });
    await fake.waitForCall("sendMessage");
    controller.abort(new Error("shutting down"));
    await expect(pending).rejects.toThrow("shutting down");
    expect(fake.sent.map((c) => c.served)).toEqual(["error:429", "error:429"]);
  });

  it("groups work the same way (a basic group target)", async () => {
    const channel = await setup();
    fake.addChat(groupChat(-5, "G"));
    const result = await channel.send({ target: { accountId: "default", chatId: "-5" }, text: "hi all" });
    expect(result.messages).toEqual([{ messageId: "1", chatId: "-5" }]);
  });
});
