// Photos from Slack and the web chat end to end: the adapters the daemon builds from the config
// (`channelsFromConfig`) → the gateway → a real kernel turn → pi → tooling/fake-llm. A Slack file share's picture
// (downloaded from fake-slack with the bot token) and a picture attached over the web chat's API are in that
// turn's model request, and in no later turn's; a picture in a message the gateway refuses is never downloaded.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChannelAdapter } from "@agent-kernel/channels-core";
import type { SlackChannel } from "@agent-kernel/channels-slack";
import type { WebchatChannel } from "@agent-kernel/channels-webchat";
import { reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { startFakeSlack } from "@agent-kernel/fake-slack";
import { openKernelStore } from "@agent-kernel/kernel";
import { expect, it } from "vitest";
import { testConfig } from "../test/gateway-harness.ts";
import { imageUrls, PNG_1X1, visionModels } from "../test/pictures.ts";
import { channelsFromConfig } from "./channels.ts";
import { createAutoReplyGateway, type HandledTurn } from "./index.ts";

const DATA_URL = `data:image/png;base64,${PNG_1X1.toString("base64")}`;

it("a Slack photo and a web chat photo reach the model with their own turn only", {
  timeout: 120_000,
}, async ({ onTestFinished }) => {
  const root = mkdtempSync(join(tmpdir(), "auto-reply-channel-photos-"));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const workspaceDir = join(root, "workspace");
  mkdirSync(workspaceDir, { recursive: true });
  const llm = await startFakeLlm();
  onTestFinished(() => llm.close());
  const slack = await startFakeSlack({ signingSecret: "shh", botUserId: "UBOT", teamId: "T1" });
  onTestFinished(() => slack.close());
  const config = testConfig(llm.baseUrlFor("openai"), workspaceDir, {
    models: visionModels(llm.baseUrlFor("openai")),
    channels: {
      slack: {
        enabled: true,
        botToken: slack.botToken,
        signingSecret: "shh",
        apiBaseUrl: slack.apiBaseUrl,
        dmPolicy: "open",
        allowFrom: ["*"],
      },
      webchat: { enabled: true, port: 0, token: "webchat-t0ken" },
    },
  });
  const stateDir = join(root, "state");
  const store = await openKernelStore({ stateDir });
  onTestFinished(() => store.close());
  const log: string[] = [];
  const adapters: ChannelAdapter[] = channelsFromConfig(config, {
    channelState: store.channelState,
    log: (line) => log.push(line),
  });
  const slackAdapter = adapters.find((adapter) => adapter.id === "slack") as SlackChannel;
  const webchat = adapters.find((adapter) => adapter.id === "webchat") as WebchatChannel;
  const turns: HandledTurn[] = [];
  let wake = () => {};
  const gateway = createAutoReplyGateway({
    config,
    stateDir,
    channels: adapters,
    kernelOptions: { executorSettings: { transientRetryDelayMs: 1 } },
    log: () => {},
    onTurnEnd: (turn) => {
      turns.push(turn);
      wake();
    },
  });
  await gateway.start();
  onTestFinished(() => gateway.stop());
  const turnCount = (count: number) =>
    new Promise<void>((resolve) => {
      wake = () => (turns.length >= count ? resolve() : undefined);
      wake();
    });

  llm.enqueue(reply("A Slack pixel."), reply("Slack again."), reply("A web pixel."), reply("Web again."));
  const url = slackAdapter.endpointUrl ?? "";
  const file = slack.hostFile({ name: "pixel.png", mimetype: "image/png", bytes: PNG_1X1 });
  const dm = { type: "message", channel: "D111", channel_type: "im", user: "U222", team: "T1" };
  // A picture in a channel message that does not mention the bot: refused by the gateway, so never downloaded
  // (the one download counted below is the DM's).
  const unseen = slack.hostFile({ name: "unseen.png", mimetype: "image/png", bytes: PNG_1X1 });
  const refused = await slack.deliverEvent(url, {
    type: "message",
    channel: "C999",
    channel_type: "channel",
    user: "U333",
    team: "T1",
    subtype: "file_share",
    text: "look at this",
    ts: "1700000000.5",
    files: [unseen],
  });
  expect(refused.status).toBe(200);
  expect(slack.fileDownloads).toEqual([]);
  await slack.deliverEvent(url, {
    ...dm,
    subtype: "file_share",
    text: "what is this?",
    ts: "1700000001.1",
    files: [file],
  });
  await turnCount(1);
  await slack.deliverEvent(url, { ...dm, text: "and now?", ts: "1700000002.2" });
  await turnCount(2);

  const postWebchat = (body: Record<string, unknown>) =>
    fetch(`${webchat.url}/api/messages`, {
      method: "POST",
      headers: { authorization: "Bearer webchat-t0ken", "content-type": "application/json" },
      body: JSON.stringify({ conversationId: "c-photo", ...body }),
    });
  expect(
    (
      await postWebchat({
        text: "and this?",
        images: [{ data: PNG_1X1.toString("base64"), fileName: "p.png" }],
      })
    ).status,
  ).toBe(202);
  await turnCount(3);
  expect((await postWebchat({ text: "still there?" })).status).toBe(202);
  await turnCount(4);

  expect(turns.map((turn) => turn.outcome?.status)).toEqual(["ok", "ok", "ok", "ok"]);
  expect(log).toEqual([]);
  expect(slack.fileDownloads.map((download) => download.token)).toEqual([slack.botToken]);
  const bodies = llm.requests.map((request) => request.body);
  expect(bodies).toHaveLength(4);
  expect(bodies.map(imageUrls)).toEqual([[DATA_URL], [], [DATA_URL], []]);
  expect(JSON.stringify(bodies[0])).toContain("what is this?");
  expect(JSON.stringify(bodies[2])).toContain("and this?");
  expect(slack.messages.map((message) => message.text)).toEqual(["A Slack pixel.", "Slack again."]);
});
