// Slack's handled-event dedupe over the daemon's real store: the Slack adapter `channelsFromConfig` builds keeps
// handled event ids in the SQLite channel state, so after a restart (adapter stopped, store closed and reopened,
// a new adapter) an event Slack redelivers is acknowledged without reaching the handler again.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChannelAdapter, InboundMessage } from "@agent-kernel/channels-core";
import { createSlackChannel, SLACK_DEDUPE_TTL_MS } from "@agent-kernel/channels-slack";
import { parseConfig } from "@agent-kernel/config";
import { type FakeSlack, startFakeSlack } from "@agent-kernel/fake-slack";
import { openKernelStore } from "@agent-kernel/kernel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { channelsFromConfig } from "./channels.ts";

let stateDir: string;
let slack: FakeSlack;

beforeEach(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "auto-reply-slack-dedupe-"));
  slack = await startFakeSlack({ signingSecret: "shh", botUserId: "UBOT", teamId: "T1" });
});

afterEach(async () => {
  await slack.close();
  rmSync(stateDir, { recursive: true, force: true });
});

/** One daemon life: the store opened, the Slack adapter from the config started, `deliver` run, all closed. */
async function daemonLife(
  deliver: (url: string) => Promise<void>,
): Promise<{ received: InboundMessage[]; log: string[] }> {
  const config = parseConfig({
    channels: {
      slack: { enabled: true, botToken: slack.botToken, signingSecret: "shh", apiBaseUrl: slack.apiBaseUrl },
    },
  });
  const store = await openKernelStore({ stateDir });
  const log: string[] = [];
  const received: InboundMessage[] = [];
  let adapter: ChannelAdapter | undefined;
  try {
    [adapter] = channelsFromConfig(config, {
      channelState: store.channelState,
      log: (line) => log.push(line),
    });
    if (!adapter) throw new Error("no Slack adapter from the config");
    await adapter.start({ onMessage: async (message) => void received.push(message) });
    await deliver((adapter as ChannelAdapter & { endpointUrl: string }).endpointUrl);
  } finally {
    await adapter?.stop();
    await store.close();
  }
  return { received, log };
}

const dm = (text: string, ts: string) => ({
  type: "message",
  channel: "D111",
  channel_type: "im",
  user: "U222",
  text,
  ts,
  team: "T1",
});

describe("Slack dedupe over the SQLite store", () => {
  it("a redelivered event after a restart is acknowledged and handled once", async () => {
    const first = await daemonLife(async (url) => {
      expect((await slack.deliverEvent(url, dm("hello", "1700000001.1"), { eventId: "EvONCE" })).status).toBe(
        200,
      );
    });
    expect(first.received.map((m) => m.text)).toEqual(["hello"]);

    const second = await daemonLife(async (url) => {
      const retry = await slack.deliverEvent(url, dm("hello", "1700000001.1"), {
        eventId: "EvONCE",
        retryNum: 1,
        timestampSeconds: Math.floor(Date.now() / 1000) + 1,
      });
      expect(retry.status).toBe(200);
      expect((await slack.deliverEvent(url, dm("next", "1700000002.2"), { eventId: "EvNEXT" })).status).toBe(
        200,
      );
    });
    expect(second.received.map((m) => m.text)).toEqual(["next"]);
    expect(second.log).toEqual([]);

    const store = await openKernelStore({ stateDir });
    try {
      const marks = await store.channelState.list("slack", "default", { prefix: "dedupe:event:" });
      expect(marks.map((entry) => entry.key)).toEqual(["dedupe:event:EvNEXT", "dedupe:event:EvONCE"]);
      const hour = 60 * 60 * 1000;
      for (const mark of marks) {
        expect(mark.expiresAt).toBeGreaterThan(Date.now() + hour);
        expect(mark.expiresAt).toBeLessThanOrEqual(Date.now() + 2 * hour);
      }
      // past their expiry the marks are absent and purged
      expect(await store.channelState.purgeExpired({ now: Date.now() + 2 * hour + 1000 })).toBe(4);
      expect(await store.channelState.list("slack", "default")).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("the adapter purges expired marks from the store", async () => {
    const store = await openKernelStore({ stateDir });
    let clock = Date.now();
    const t0 = clock;
    const received: string[] = [];
    const start = async () => {
      const adapter = createSlackChannel({
        botToken: slack.botToken,
        signingSecret: "shh",
        apiBaseUrl: slack.apiBaseUrl,
        channelState: store.channelState,
        now: () => clock,
      });
      await adapter.start({ onMessage: async (message) => void received.push(message.text) });
      return adapter;
    };
    try {
      const first = await start();
      await slack.deliverEvent(first.endpointUrl ?? "", dm("old", "1700000001.1"), { eventId: "EvOLD" });
      await first.stop();
      clock = t0 + SLACK_DEDUPE_TTL_MS;
      expect(
        await store.channelState.get("slack", "default", "dedupe:event:EvOLD", { now: clock }),
      ).toBeUndefined();
      const second = await start();
      await slack.deliverEvent(second.endpointUrl ?? "", dm("new", "1700000002.2"), { eventId: "EvNEW" });
      await second.stop();
      expect(received).toEqual(["old", "new"]);
      // the second life's first mark purged the expired ones: even read as of t0 they are gone from the table
      const keys = (await store.channelState.list("slack", "default", { now: t0 })).map((entry) => entry.key);
      expect(keys).toEqual(["dedupe:event:EvNEW", "dedupe:message:D111:1700000002.2"]);
    } finally {
      await store.close();
    }
  });
});
