// The handled-event dedupe kept in the channel state: a new adapter over the same state (a restart) does not
// handle a redelivered event again, in Events API mode and in Socket Mode; concurrent deliveries in one process
// are handled once; marks expire and are purged; failures are not marked. The channel state here is an
// in-memory stand-in with the store's expiry rules; apps/auto-reply runs the restart over the real SQLite store.
import type { InboundMessage } from "@agent-kernel/channels-core";
import { type FakeSlack, startFakeSlack } from "@agent-kernel/fake-slack";
import { afterEach, describe, expect, it } from "vitest";
import {
  createSlackChannel,
  SLACK_DEDUPE_TTL_MS,
  type SlackChannel,
  type SlackChannelOptions,
  type SlackChannelStateLike,
} from "./index.ts";

/** The store's rules: an entry at or past `expiresAt` is absent; `purgeExpired` deletes those. */
class MemoryChannelState implements SlackChannelStateLike {
  readonly rows = new Map<string, { value: unknown; expiresAt?: number }>();
  failReads = false;
  purges = 0;

  async get(channel: string, accountId: string, key: string, options: { readonly now?: number } = {}) {
    if (this.failReads) throw new Error("database is locked");
    const row = this.rows.get(`${channel}/${accountId}/${key}`);
    if (row === undefined) return undefined;
    if (row.expiresAt !== undefined && row.expiresAt <= (options.now ?? Date.now())) return undefined;
    return { value: row.value };
  }

  async put(
    channel: string,
    accountId: string,
    key: string,
    value: unknown,
    options: { readonly expiresAt?: number } = {},
  ) {
    this.rows.set(`${channel}/${accountId}/${key}`, {
      value: structuredClone(value),
      ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
    });
  }

  async purgeExpired(options: { readonly now?: number } = {}) {
    this.purges++;
    const now = options.now ?? Date.now();
    let count = 0;
    for (const [key, row] of this.rows) {
      if (row.expiresAt !== undefined && row.expiresAt <= now) {
        this.rows.delete(key);
        count++;
      }
    }
    return count;
  }

  keys(): string[] {
    return [...this.rows.keys()].sort();
  }
}

let slack: FakeSlack | undefined;
const channels: SlackChannel[] = [];

afterEach(async () => {
  for (const channel of channels.splice(0)) await channel.stop();
  await slack?.close();
  slack = undefined;
});

interface Started {
  readonly adapter: SlackChannel;
  readonly received: InboundMessage[];
  readonly url: string;
}

/** A started adapter (a fresh process, as far as memory goes) over `state`. */
async function start(
  state: SlackChannelStateLike,
  extra: Partial<SlackChannelOptions> & { readonly onMessage?: (m: InboundMessage) => Promise<void> } = {},
): Promise<Started> {
  slack ??= await startFakeSlack({ signingSecret: "shh", botUserId: "UBOT", teamId: "T1" });
  const { onMessage, ...options } = extra;
  const adapter = createSlackChannel({
    botToken: slack.botToken,
    signingSecret: "shh",
    apiBaseUrl: slack.apiBaseUrl,
    channelState: state,
    ...options,
  });
  channels.push(adapter);
  const received: InboundMessage[] = [];
  await adapter.start({
    onMessage: async (message) => {
      await onMessage?.(message);
      received.push(message);
    },
  });
  return { adapter, received, url: adapter.endpointUrl ?? "" };
}

async function restart(previous: Started, state: SlackChannelStateLike, extra = {}): Promise<Started> {
  await previous.adapter.stop();
  return start(state, extra);
}

const dm = (text: string, ts = "1700000001.000100") => ({
  type: "message",
  channel: "D111",
  channel_type: "im",
  user: "U222",
  text,
  ts,
  team: "T1",
});

const later = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

describe("Slack dedupe across a restart (Events API)", () => {
  it("acknowledges an event redelivered to a new adapter over the same state without handling it", async () => {
    const state = new MemoryChannelState();
    const first = await start(state);
    const delivered = await slack?.deliverEvent(first.url, dm("once"), { eventId: "EvRESTART" });
    expect(delivered?.status).toBe(200);
    expect(first.received.map((m) => m.text)).toEqual(["once"]);
    expect(state.keys()).toEqual([
      "slack/default/dedupe:event:EvRESTART",
      "slack/default/dedupe:message:D111:1700000001.000100",
    ]);

    const second = await restart(first, state);
    // Slack's retry after the restart: a new timestamp and signature, `x-slack-retry-num` set
    const retried = await slack?.deliverEvent(second.url, dm("once"), {
      eventId: "EvRESTART",
      retryNum: 1,
      timestampSeconds: later(1),
    });
    // the byte-identical same-second retry (the new process has no memory of the signature)
    const sameSecond = await slack?.replay(second.url, {
      ...(delivered?.request ?? { headers: {}, body: "" }),
      headers: { ...delivered?.request.headers, "x-slack-retry-num": "2" },
    });
    expect([retried?.status, sameSecond?.status]).toEqual([200, 200]);
    expect(second.received).toEqual([]);

    // a new event is still handled after the restart
    await slack?.deliverEvent(second.url, dm("new", "1700000002.000200"), { eventId: "EvNEW" });
    expect(second.received.map((m) => m.text)).toEqual(["new"]);
  });

  it("handles a mention once when its message and app_mention events straddle a restart", async () => {
    const state = new MemoryChannelState();
    const base = {
      channel: "C1",
      channel_type: "channel",
      user: "U2",
      text: "<@UBOT> hi",
      ts: "1700000010.1",
    };
    const first = await start(state);
    await slack?.deliverEvent(first.url, { type: "message", ...base }, { eventId: "EvMSG" });
    const second = await restart(first, state);
    const mention = await slack?.deliverEvent(
      second.url,
      { type: "app_mention", ...base },
      { eventId: "EvMENTION" },
    );
    expect(mention?.status).toBe(200);
    expect([...first.received, ...second.received]).toHaveLength(1);
  });

  it("marks nothing for a failed handler or an ignored event, so a redelivery after a restart is handled", async () => {
    const state = new MemoryChannelState();
    const first = await start(state, {
      onMessage: async () => {
        throw new Error("store unavailable");
      },
    });
    const failed = await slack?.deliverEvent(first.url, dm("flaky"), { eventId: "EvFLAKY" });
    const ignored = await slack?.deliverEvent(
      first.url,
      { ...dm("echo", "1.2"), user: "UBOT" },
      { eventId: "EvECHO" },
    );
    expect([failed?.status, ignored?.status]).toEqual([500, 200]);
    expect(state.keys()).toEqual([]);

    const second = await restart(first, state);
    const retried = await slack?.deliverEvent(second.url, dm("flaky"), {
      eventId: "EvFLAKY",
      retryNum: 1,
      timestampSeconds: later(1),
    });
    expect(retried?.status).toBe(200);
    expect(second.received.map((m) => m.text)).toEqual(["flaky"]);
  });

  it("answers 500 (so Slack retries) and reports it when the state cannot be read", async () => {
    const state = new MemoryChannelState();
    const errors: Error[] = [];
    const { url, received } = await start(state, { onError: (error) => errors.push(error) });
    state.failReads = true;
    const refused = await slack?.deliverEvent(url, dm("later"), { eventId: "EvLOCKED" });
    expect(refused?.status).toBe(500);
    expect(received).toEqual([]);
    expect(errors.map((e) => e.message).join("\n")).toMatch(
      /cannot read the handled mark.*database is locked/,
    );
    state.failReads = false;
    const retried = await slack?.deliverEvent(url, dm("later"), {
      eventId: "EvLOCKED",
      retryNum: 1,
      timestampSeconds: later(1),
    });
    expect(retried?.status).toBe(200);
    expect(received.map((m) => m.text)).toEqual(["later"]);
  });
});

describe("Slack dedupe in one process", () => {
  it("handles concurrent deliveries of one event once, while the state lookup and the handler are slow", async () => {
    const state = new MemoryChannelState();
    const slowState: SlackChannelStateLike = {
      get: async (...args) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return state.get(...args);
      },
      put: (...args) => state.put(...args),
    };
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { url, received } = await start(slowState, { onMessage: () => gate });
    const deliveries = [0, 1, 2].map((retry) =>
      slack?.deliverEvent(url, dm("concurrent"), {
        eventId: "EvCONCURRENT",
        ...(retry === 0 ? {} : { retryNum: retry, timestampSeconds: later(retry) }),
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const statuses = (await Promise.all(deliveries)).map((result) => result?.status);
    expect(statuses).toEqual([200, 200, 200]);
    expect(received).toHaveLength(1);
  });

  it("answers a repeat from memory without reading the state again", async () => {
    const state = new MemoryChannelState();
    let reads = 0;
    const counted: SlackChannelStateLike = {
      get: (...args) => {
        reads++;
        return state.get(...args);
      },
      put: (...args) => state.put(...args),
    };
    const { url, received } = await start(counted);
    await slack?.deliverEvent(url, dm("fast"), { eventId: "EvFAST" });
    const readsAfterFirst = reads;
    await slack?.deliverEvent(url, dm("fast"), {
      eventId: "EvFAST",
      retryNum: 1,
      timestampSeconds: later(1),
    });
    expect(reads).toBe(readsAfterFirst);
    expect(received).toHaveLength(1);
  });
});

describe("Slack dedupe expiry", () => {
  it("marks expire after the TTL (2 h by default) and are purged", async () => {
    const state = new MemoryChannelState();
    let clock = 1_000_000;
    const now = () => clock;
    const first = await start(state, { now });
    await slack?.deliverEvent(first.url, dm("old"), { eventId: "EvOLD" });
    expect(state.rows.get("slack/default/dedupe:event:EvOLD")?.expiresAt).toBe(
      1_000_000 + SLACK_DEDUPE_TTL_MS,
    );
    expect(state.purges).toBe(1); // the first mark purges at once

    // within the TTL a restarted adapter still skips it
    clock += SLACK_DEDUPE_TTL_MS - 1;
    const second = await restart(first, state, { now });
    await slack?.deliverEvent(second.url, dm("old"), {
      eventId: "EvOLD",
      retryNum: 3,
      timestampSeconds: later(1),
    });
    expect(second.received).toEqual([]);

    // past it the mark is gone: the next mark purges the expired ones
    clock += 1;
    const third = await restart(second, state, { now });
    await slack?.deliverEvent(third.url, dm("fresh", "1700000009.000900"), { eventId: "EvFRESH" });
    expect(third.received.map((m) => m.text)).toEqual(["fresh"]);
    expect(state.keys()).toEqual([
      "slack/default/dedupe:event:EvFRESH",
      "slack/default/dedupe:message:D111:1700000009.000900",
    ]);
  });

  it("takes a shorter TTL and refuses a meaningless one", async () => {
    const state = new MemoryChannelState();
    let clock = 0;
    const first = await start(state, { now: () => clock, dedupeTtlMs: 60_000 });
    await slack?.deliverEvent(first.url, dm("short"), { eventId: "EvSHORT" });
    clock = 60_000;
    const second = await restart(first, state, { now: () => clock, dedupeTtlMs: 60_000 });
    await slack?.deliverEvent(second.url, dm("short"), {
      eventId: "EvSHORT",
      retryNum: 1,
      timestampSeconds: later(1),
    });
    expect(second.received.map((m) => m.text)).toEqual(["short"]);
    expect(() =>
      createSlackChannel({ botToken: "xoxb-1", signingSecret: "s", channelState: state, dedupeTtlMs: 0 }),
    ).toThrow(/dedupeTtlMs/);
  });
});

describe("Slack dedupe across a restart (Socket Mode)", () => {
  it("acknowledges an envelope redelivered to a new adapter without handling it", async () => {
    const state = new MemoryChannelState();
    slack = await startFakeSlack({ botUserId: "UBOT" });
    const socketOptions = { mode: "socket" as const, appToken: slack.appToken, reconnectDelayMs: 10 };
    const first = await start(state, socketOptions);
    await slack.deliverSocketEvent(dm("over the socket", "5.5"), { eventId: "EvSOCK" });
    expect(first.received.map((m) => m.text)).toEqual(["over the socket"]);

    const second = await restart(first, state, socketOptions);
    await slack.waitForSocket();
    const ack = await slack.deliverSocketEvent(dm("over the socket", "5.5"), {
      eventId: "EvSOCK",
      retryAttempt: 1,
    });
    expect(ack.eventId).toBe("EvSOCK");
    expect(second.received).toEqual([]);
  });
});
