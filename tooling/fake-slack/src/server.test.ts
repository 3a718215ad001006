import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeSlack, SLACK_MAX_TEXT, signSlackRequest, startFakeSlack } from "./index.ts";

let slack: FakeSlack | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

async function call(
  fake: FakeSlack,
  method: string,
  body: Record<string, unknown>,
  init: { token?: string; form?: boolean } = {},
): Promise<{ status: number; json: Record<string, unknown>; retryAfter: string | null }> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${init.token ?? fake.botToken}`,
    "content-type": init.form ? "application/x-www-form-urlencoded" : "application/json; charset=utf-8",
  };
  const payload = init.form
    ? new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)])).toString()
    : JSON.stringify(body);
  const response = await fetch(`${fake.apiBaseUrl}${method}`, { method: "POST", headers, body: payload });
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown>,
    retryAfter: response.headers.get("retry-after"),
  };
}

describe("fake Slack Web API", () => {
  it("answers auth.test and rejects a wrong token with invalid_auth", async () => {
    slack = await startFakeSlack({ botUserId: "UME" });
    expect((await call(slack, "auth.test", {})).json).toMatchObject({ ok: true, user_id: "UME" });
    expect((await call(slack, "auth.test", {}, { token: "xoxb-wrong" })).json).toEqual({
      ok: false,
      error: "invalid_auth",
    });
  });

  it("posts messages from JSON and form bodies, enforces the 40000-char limit, records every call", async () => {
    slack = await startFakeSlack();
    const posted = await call(slack, "chat.postMessage", { channel: "C1", text: "hi", thread_ts: "1.2" });
    expect(posted.json).toMatchObject({ ok: true, channel: "C1" });
    await call(slack, "chat.postMessage", { channel: "C1", text: "form" }, { form: true });
    const tooLong = await call(slack, "chat.postMessage", {
      channel: "C1",
      text: "x".repeat(SLACK_MAX_TEXT + 1),
    });
    expect(tooLong.json).toEqual({ ok: false, error: "msg_too_long" });
    expect(slack.messages.map((m) => [m.text, m.threadTs])).toEqual([
      ["hi", "1.2"],
      ["form", undefined],
    ]);
    expect(slack.callsTo("chat.postMessage")).toHaveLength(3);
  });

  it("injects 429 with Retry-After, 500 and error faults", async () => {
    slack = await startFakeSlack();
    slack.failNext("chat.postMessage", { kind: "rate-limited", retryAfterSeconds: 7 });
    slack.failNext("chat.update", { kind: "server-error" });
    slack.failNext("auth.test", { kind: "error", error: "account_inactive" });
    const limited = await call(slack, "chat.postMessage", { channel: "C1", text: "a" });
    expect([limited.status, limited.retryAfter, limited.json.error]).toEqual([429, "7", "ratelimited"]);
    expect((await call(slack, "chat.update", { channel: "C1", ts: "1", text: "a" })).status).toBe(500);
    expect((await call(slack, "auth.test", {})).json.error).toBe("account_inactive");
    expect((await call(slack, "chat.postMessage", { channel: "C1", text: "a" })).json.ok).toBe(true);
  });

  it("runs the external upload flow", async () => {
    slack = await startFakeSlack();
    const url = await call(
      slack,
      "files.getUploadURLExternal",
      { filename: "a.txt", length: 3 },
      { form: true },
    );
    const uploadUrl = String(url.json.upload_url);
    expect((await fetch(uploadUrl, { method: "POST", body: "abc" })).status).toBe(200);
    const done = await call(
      slack,
      "files.completeUploadExternal",
      {
        files: JSON.stringify([{ id: url.json.file_id, title: "A" }]),
        channel_id: "C1",
      },
      { form: true },
    );
    expect(done.json).toMatchObject({ ok: true, files: [{ id: url.json.file_id, title: "A" }] });
    expect(slack.files[0]).toMatchObject({ filename: "a.txt", channel: "C1", completed: true });
  });
});

describe("fake Slack Events API sender", () => {
  it("signs event callbacks as Slack does and can forge, age and retry them", async () => {
    slack = await startFakeSlack({ signingSecret: "s3cret" });
    const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
    const endpoint = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/`;
    try {
      await slack.deliverEvent(url, { type: "message", text: "hi" }, { eventId: "Ev1", retryNum: 2 });
      await slack.deliverEvent(url, { type: "message" }, { forgeWithSecret: "nope", timestampSeconds: 100 });
      const [first, forged] = received;
      const ts = Number(first?.headers["x-slack-request-timestamp"]);
      expect(first?.headers["x-slack-signature"]).toBe(signSlackRequest("s3cret", ts, first?.body ?? ""));
      expect(JSON.parse(first?.body ?? "")).toMatchObject({ type: "event_callback", event_id: "Ev1" });
      expect(first?.headers["x-slack-retry-num"]).toBe("2");
      expect(forged?.headers["x-slack-request-timestamp"]).toBe("100");
      expect(forged?.headers["x-slack-signature"]).toBe(signSlackRequest("nope", 100, forged?.body ?? ""));
    } finally {
      await new Promise<void>((resolve) => endpoint.close(() => resolve()));
    }
  });
});

describe("fake Slack Socket Mode", () => {
  it("opens a connection with the app token, says hello, delivers envelopes and collects acks", async () => {
    slack = await startFakeSlack();
    expect((await call(slack, "apps.connections.open", {})).json).toEqual({
      ok: false,
      error: "not_allowed_token_type",
    });
    const opened = await call(slack, "apps.connections.open", {}, { token: slack.appToken });
    const url = String(opened.json.url);
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/socket\//);
    const socket = new WebSocket(url);
    const received: Record<string, unknown>[] = [];
    socket.addEventListener("message", (message) => {
      const envelope = JSON.parse(String(message.data)) as Record<string, unknown>;
      received.push(envelope);
      if (typeof envelope.envelope_id === "string")
        socket.send(JSON.stringify({ envelope_id: envelope.envelope_id }));
    });
    await slack.waitForSocket();
    const ack = await slack.deliverSocketEvent({ type: "message", text: "hi" }, { eventId: "EvS1" });
    expect(ack.eventId).toBe("EvS1");
    expect(received.map((e) => e.type)).toEqual(["hello", "events_api"]);
    expect(received[1]).toMatchObject({
      payload: { type: "event_callback", event_id: "EvS1", event: { text: "hi" } },
    });
    const closed = new Promise((resolve) => socket.addEventListener("close", resolve));
    slack.disconnectSockets();
    await closed;
    expect(received.at(-1)).toEqual({ type: "disconnect", reason: "refresh_requested" });
    await expect.poll(() => slack?.openSockets).toBe(0);
  });
});
