import type { InboundMessage } from "@agent-kernel/channels-core";
import { configSchema } from "@agent-kernel/config";
import { afterEach, describe, expect, it } from "vitest";
import {
  CONTENT_SECURITY_POLICY,
  createWebchatChannel,
  isLoopbackHost,
  type WebchatChannel,
  type WebchatChannelOptions,
  webchatOptionsFromConfig,
} from "./index.ts";

let channel: WebchatChannel | undefined;
const openStreams: AbortController[] = [];

afterEach(async () => {
  for (const controller of openStreams.splice(0)) controller.abort();
  await channel?.stop();
  channel = undefined;
});

async function setup(
  options: WebchatChannelOptions = {},
  onMessage: (message: InboundMessage) => Promise<void> = async () => {},
): Promise<{ adapter: WebchatChannel; base: string; received: InboundMessage[] }> {
  const received: InboundMessage[] = [];
  channel = createWebchatChannel({ port: 0, ...options });
  await channel.start({
    onMessage: async (message) => {
      await onMessage(message);
      received.push(message);
    },
  });
  const base = channel.url;
  if (!base) throw new Error("no url after start");
  return { adapter: channel, base, received };
}

type Frame = { id?: string; event?: string; data?: Record<string, unknown>; comment?: string };

/** Reads an SSE response frame by frame. */
async function openEvents(
  base: string,
  token: string,
  conversationId: string,
  lastEventId?: string,
): Promise<{ status: number; next: () => Promise<Frame> }> {
  const controller = new AbortController();
  openStreams.push(controller);
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
  const response = await fetch(`${base}/api/events?conversationId=${conversationId}`, {
    headers,
    signal: controller.signal,
  });
  const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const next = async (): Promise<Frame> => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end !== -1) {
        const raw = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: Frame = {};
        for (const line of raw.split("\n")) {
          if (line.startsWith(":")) frame.comment = line.slice(1).trim();
          else if (line.startsWith("id: ")) frame.id = line.slice(4);
          else if (line.startsWith("event: ")) frame.event = line.slice(7);
          else if (line.startsWith("data: "))
            frame.data = JSON.parse(line.slice(6)) as Record<string, unknown>;
        }
        return frame;
      }
      if (!reader) throw new Error("no body");
      const chunk = await reader.read();
      if (chunk.done) throw new Error("stream ended");
      buffer += chunk.value;
    }
  };
  return { status: response.status, next };
}

/** The next frame that is an event (heartbeats and the connect comment skipped). */
async function nextEvent(next: () => Promise<Frame>): Promise<Frame> {
  for (;;) {
    const frame = await next();
    if (frame.event) return frame;
  }
}

function post(base: string, token: string | undefined, body: unknown): Promise<Response> {
  return fetch(`${base}/api/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

describe("webchat API over real HTTP", () => {
  it("requires the token: missing or wrong → 401 with no body detail", async () => {
    const { adapter, base, received } = await setup({ token: "right-token" });
    const missing = await post(base, undefined, { conversationId: "c1", text: "hi" });
    const wrong = await post(base, "wrong-token", { conversationId: "c1", text: "hi" });
    const longer = await post(base, "right-token-and-more", { conversationId: "c1", text: "hi" });
    const events = await fetch(`${base}/api/events?conversationId=c1`, {
      headers: { authorization: "Bearer nope" },
    });
    for (const response of [missing, wrong, longer, events]) {
      expect(response.status).toBe(401);
      expect(await response.text()).toBe("");
    }
    expect(received).toEqual([]);
    const ok = await post(base, adapter.token, { conversationId: "c1", text: "hi" });
    expect(ok.status).toBe(202);
  });

  it("accepts a message: 202 with its id, normalised for the handler", async () => {
    const { adapter, base, received } = await setup();
    const response = await post(base, adapter.token, {
      conversationId: "conv-1",
      text: "hello",
      senderName: "Ann",
    });
    expect(response.status).toBe(202);
    const { messageId } = (await response.json()) as { messageId: string };
    expect(received).toEqual([
      {
        channel: "webchat",
        accountId: "default",
        messageId,
        conversation: { chatType: "direct", chatId: "conv-1" },
        sender: { id: "conv-1", displayName: "Ann" },
        text: "hello",
        media: [],
        mentions: [],
        mentionsBot: true,
        timestamp: expect.any(Number),
      },
    ]);
  });

  it("answers bad input with a clear error and a failed handler with 503", async () => {
    const { adapter, base } = await setup({}, async (message) => {
      if (message.text === "fail") throw new Error("store down");
    });
    const cases: [unknown, RegExp][] = [
      [{ conversationId: "bad id!", text: "x" }, /conversationId/],
      [{ conversationId: "c1", text: "   " }, /text must be/],
      [{ conversationId: "c1", text: "x".repeat(20_001) }, /longer than/],
    ];
    for (const [body, error] of cases) {
      const response = await post(base, adapter.token, body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(error);
    }
    expect((await post(base, adapter.token, { conversationId: "c1", text: "fail" })).status).toBe(503);
  });

  it("generates a random token when none is configured, and serves the page with a strict CSP", async () => {
    const { adapter, base } = await setup();
    const other = createWebchatChannel({ port: 0 });
    expect(adapter.token.length).toBeGreaterThanOrEqual(32);
    expect(other.token).not.toBe(adapter.token);
    expect(adapter.pageUrl).toBe(`${base}/#token=${encodeURIComponent(adapter.token)}`);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toBe(CONTENT_SECURITY_POLICY);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const html = await page.text();
    expect(html).not.toMatch(/<script>|https?:\/\/|style=/);
    expect((await fetch(`${base}/app.js`)).headers.get("content-type")).toMatch(/javascript/);
  });

  it("binds loopback by default and refuses a non-loopback host unless allowRemote is passed", async () => {
    const { base } = await setup();
    expect(new URL(base).hostname).toBe("127.0.0.1");
    expect(() => createWebchatChannel({ host: "0.0.0.0" })).toThrow(
      /not a loopback address.*allowRemote: true/,
    );
    expect(() => createWebchatChannel({ host: "192.168.1.10" })).toThrow(/allowRemote/);
    expect(() => createWebchatChannel({ host: "0.0.0.0", allowRemote: true })).not.toThrow();
    expect(
      ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"].every(isLoopbackHost),
    ).toBe(true);
    expect(["0.0.0.0", "::", "10.0.0.1", "example.com", "127.0.0.1.nip.io"].some(isLoopbackHost)).toBe(false);
  });

  it("reads host, port, token and the messages per reply from channels.webchat", () => {
    const config = configSchema.parse({ channels: { webchat: { token: "t0k" } } }).channels.webchat;
    if (!config) throw new Error("no webchat config");
    expect(webchatOptionsFromConfig(config)).toEqual({
      host: "127.0.0.1",
      port: 18_790,
      token: "t0k",
      maxMessagesPerReply: 10,
    });
  });
});

describe("webchat event stream", () => {
  it("streams typing, blocks, the final message and edits, in order, per conversation", async () => {
    const { adapter, base } = await setup();
    const mine = await openEvents(base, adapter.token, "conv-a");
    const theirs = await openEvents(base, adapter.token, "conv-b");
    expect(mine.status).toBe(200);
    expect(await mine.next()).toEqual({ comment: "connected" });
    const target = { accountId: "default", chatId: "conv-a" };
    await adapter.sendTyping(target);
    await adapter.send({ target, text: "**part** one", isBlock: true });
    await adapter.send({ target, text: "part two", isBlock: true });
    const final = await adapter.send({
      target,
      text: "all done",
      media: [{ kind: "image", url: "https://x.dev/a.png" }],
    });
    await adapter.edit?.(target, final.messages[0]?.messageId ?? "", "all done (edited)");
    await adapter.send({ target: { ...target, chatId: "conv-b" }, text: "other conversation" });
    const frames = [];
    for (let i = 0; i < 5; i++) frames.push(await nextEvent(mine.next));
    expect(frames.map((f) => [f.id, f.event, f.data?.text ?? f.data?.active])).toEqual([
      ["1", "typing", true],
      ["2", "block", "part one"],
      ["3", "block", "part two"],
      ["4", "message", "all done"],
      ["5", "edit", "all done (edited)"],
    ]);
    expect(frames[3]?.data?.media).toEqual([{ kind: "image", url: "https://x.dev/a.png" }]);
    expect(frames[4]?.data?.messageId).toBe(final.messages[0]?.messageId);
    expect(await nextEvent(theirs.next)).toMatchObject({
      id: "1",
      event: "message",
      data: { text: "other conversation" },
    });
  });

  it("resumes after Last-Event-ID from the bounded backlog", async () => {
    const { adapter, base } = await setup({ backlogSize: 3 });
    const target = { accountId: "default", chatId: "conv-r" };
    for (const text of ["one", "two", "three", "four", "five"])
      await adapter.send({ target, text, isBlock: true });
    const resumed = await openEvents(base, adapter.token, "conv-r", "3");
    expect(
      [await nextEvent(resumed.next), await nextEvent(resumed.next)].map((f) => [f.id, f.data?.text]),
    ).toEqual([
      ["4", "four"],
      ["5", "five"],
    ]);
    // further back than the backlog: only what is kept (three events) comes back
    const old = await openEvents(base, adapter.token, "conv-r", "0");
    const replayed = [await nextEvent(old.next), await nextEvent(old.next), await nextEvent(old.next)];
    expect(replayed.map((f) => f.data?.text)).toEqual(["three", "four", "five"]);
    // live events follow the replay
    await adapter.send({ target, text: "six" });
    expect((await nextEvent(resumed.next)).data?.text).toBe("six");
  });

  it("sends heartbeat comments", async () => {
    const { adapter, base } = await setup({ heartbeatMs: 20 });
    const stream = await openEvents(base, adapter.token, "conv-h");
    expect(await stream.next()).toEqual({ comment: "connected" });
    expect(await stream.next()).toEqual({ comment: "heartbeat" });
  });

  it("refuses media it cannot show (no URL) with a clear error", async () => {
    const { adapter } = await setup();
    await expect(
      adapter.send({
        target: { accountId: "default", chatId: "c" },
        media: [{ kind: "image", data: new Uint8Array([1]) }],
      }),
    ).rejects.toThrow(/media needs a url/);
  });
});
