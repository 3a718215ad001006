// Keeps the fake honest against Slack's official clients: @slack/web-api's WebClient (form-encoded calls with
// JSON-encoded object arguments, the three-step filesUploadV2) and @slack/socket-mode's SocketModeClient
// (apps.connections.open, the WebSocket, hello, events_api envelopes and acks) drive the fake over real
// HTTP and WebSocket connections; what they send must be read as Slack reads it.
import { SocketModeClient } from "@slack/socket-mode";
import { LogLevel, WebClient } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "./index.ts";

let slack: FakeSlack | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

function webClient(fake: FakeSlack): WebClient {
  // no retries: a fake's error must surface at once, not after Slack's thirty-minute retry policy
  return new WebClient(fake.botToken, {
    slackApiUrl: fake.apiBaseUrl,
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
  });
}

const BLOCKS = [{ type: "section", text: { type: "mrkdwn", text: "*Done.*" } }];

describe("the fake Slack driven by the official clients", () => {
  it("WebClient chat.postMessage: form-encoded blocks arrive as Slack parses them, a JSON array", async () => {
    slack = await startFakeSlack();
    const client = webClient(slack);
    const posted = await client.chat.postMessage({ channel: "C1", text: "Done.", blocks: BLOCKS });
    expect(posted).toMatchObject({ ok: true, channel: "C1", message: { text: "Done.", blocks: BLOCKS } });
    const call = slack.callsTo("chat.postMessage")[0];
    expect(call?.contentType).toBe("application/x-www-form-urlencoded");
    expect(call?.params.blocks).toEqual(BLOCKS);
    expect(slack.messages[0]?.blocks).toEqual(BLOCKS);
  });

  it("refuses form-encoded blocks that are not a JSON array with invalid_blocks_format", async () => {
    slack = await startFakeSlack();
    const send = async (blocks: string) => {
      const response = await fetch(`${slack?.apiBaseUrl}chat.postMessage`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${slack?.botToken}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ channel: "C1", text: "x", blocks }).toString(),
      });
      return (await response.json()) as { ok: boolean; error?: string };
    };
    expect(await send("not json")).toEqual({ ok: false, error: "invalid_blocks_format" });
    expect(await send('{"type":"section"}')).toEqual({ ok: false, error: "invalid_blocks_format" });
    expect(await send(JSON.stringify(BLOCKS))).toMatchObject({ ok: true });
    expect(slack.messages).toHaveLength(1);
  });

  it("WebClient filesUploadV2 runs end to end: the stored bytes are the file, not the multipart body", async () => {
    slack = await startFakeSlack();
    const client = webClient(slack);
    const content = Buffer.from("report line 1\nreport line 2\n");
    const result = await client.filesUploadV2({
      channel_id: "C1",
      thread_ts: "1700000001.000001",
      file: content,
      filename: "report.txt",
      title: "Report",
      initial_comment: "here it is",
    });
    expect(result.ok).toBe(true);
    expect(slack.callsTo("files.completeUploadExternal")[0]?.response).toMatchObject({ ok: true });
    const [file] = slack.files;
    expect(file).toMatchObject({
      filename: "report.txt",
      length: content.length,
      title: "Report",
      channel: "C1",
      threadTs: "1700000001.000001",
      initialComment: "here it is",
      completed: true,
    });
    expect(Buffer.from(file?.bytes ?? []).toString("utf8")).toBe(content.toString("utf8"));
  });

  it("SocketModeClient connects through apps.connections.open, receives an event and acks it", async () => {
    slack = await startFakeSlack();
    const client = new SocketModeClient({
      appToken: slack.appToken,
      clientOptions: { slackApiUrl: slack.apiBaseUrl },
      logLevel: LogLevel.ERROR,
    });
    const received: unknown[] = [];
    client.on("message", async ({ event, ack }: { event: unknown; ack: () => Promise<void> }) => {
      received.push(event);
      await ack();
    });
    await client.start();
    try {
      await slack.waitForSocket();
      const event = {
        type: "message",
        channel: "D1",
        channel_type: "im",
        user: "U1",
        text: "hi",
        ts: "1.000001",
      };
      const ack = await slack.deliverSocketEvent(event, { eventId: "Ev0001" });
      expect(ack.eventId).toBe("Ev0001");
      expect(received).toEqual([event]);
      expect(slack.callsTo("apps.connections.open")).toHaveLength(1);
    } finally {
      await client.disconnect();
    }
  }, 30_000);
});
