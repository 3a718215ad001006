import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InboundMessage } from "@agent-kernel/channels-core";
import { type FakeTelegram, privateChat, startFakeTelegram, user } from "@agent-kernel/fake-telegram";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTelegramChannel, type TelegramChannel, type TelegramChannelOptions } from "./channel.ts";
import {
  channelStateOffsetStore,
  fileOffsetStore,
  memoryOffsetStore,
  type OffsetStore,
} from "./offset-store.ts";

const alice = user(42, "Alice", { username: "alice" });
const chat = privateChat(alice);
let fake: FakeTelegram;
let dir: string;
const running: TelegramChannel[] = [];

beforeEach(async () => {
  fake = await startFakeTelegram();
  dir = await mkdtemp(join(tmpdir(), "channels-telegram-poll-"));
});

afterEach(async () => {
  for (const channel of running.splice(0)) await channel.stop();
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

function push(texts: readonly string[]): number[] {
  return texts.map((text) => fake.pushMessage({ chat, from: alice, text }).update_id);
}

interface Started {
  channel: TelegramChannel;
  received: string[];
  errors: Error[];
  /** Resolves once the handler has resolved for `count` messages in total. */
  until(count: number): Promise<void>;
}

async function startAdapter(
  store: OffsetStore,
  handler: (message: InboundMessage) => Promise<void> = async () => undefined,
  extra: Partial<TelegramChannelOptions> = {},
): Promise<Started> {
  const received: string[] = [];
  const errors: Error[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const channel = createTelegramChannel({
    token: fake.token,
    apiBaseUrl: fake.url,
    pollTimeoutSeconds: 5,
    offsetStore: store,
    pollBackoff: { baseDelayMs: 5, maxDelayMs: 20 },
    onError: (error) => errors.push(error),
    ...extra,
  });
  await channel.start({
    onMessage: async (message) => {
      await handler(message);
      received.push(message.text);
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
    },
  });
  running.push(channel);
  return {
    channel,
    received,
    errors,
    until: (count) =>
      new Promise((resolve) => {
        if (received.length >= count) return resolve();
        waiters.push({ count, resolve });
      }),
  };
}

const texts = (from: number, to: number): string[] =>
  Array.from({ length: to - from }, (_, i) => `m${from + i}`);

describe("malformed updates", () => {
  it("reports an update without the Bot API's shape and moves past it instead of retrying it forever", async () => {
    push(["before"]);
    // no chat, a caption that is not a string: normalisation would read chat.id of undefined
    fake.pushUpdate({ channel_post: { message_id: 9, caption: {} } } as never);
    push(["after"]);
    const started = await startAdapter(memoryOffsetStore());
    await started.until(2);
    expect(started.received).toEqual(["before", "after"]);
    const skipped = started.errors.filter((error) => error.name === "TelegramUpdateError");
    expect(skipped).toHaveLength(1);
    expect(skipped[0]?.message).toMatch(/update \d+ skipped: message\.chat is missing/);
  });
});

describe("offset persistence across restarts", () => {
  it("stopping mid-stream and restarting on the same file store: no duplicate, no loss", async () => {
    const path = join(dir, "state", "telegram-offset.json");
    push(texts(0, 10));
    // m3's handler is in flight when stop() is called: stop must wait for it, save its offset, go no further
    let m3Started: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => {
      m3Started = resolve;
    });
    let releaseM3: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      releaseM3 = resolve;
    });
    const first = await startAdapter(fileOffsetStore(path), async (message) => {
      if (message.text !== "m3") return;
      m3Started();
      await gate;
    });
    await inFlight;
    const stopping = first.channel.stop();
    releaseM3();
    await stopping;
    expect(first.received).toEqual(texts(0, 4));
    const handledByFirst = first.received.length;
    // Telegram would send all ten again: only the saved offset keeps the next instance from repeating them
    expect(fake.pendingUpdates()).toHaveLength(10);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ offset: 1004, handled: [], botId: 123456 });

    const second = await startAdapter(fileOffsetStore(path));
    push(texts(10, 15));
    await second.until(15 - handledByFirst);
    expect([...first.received, ...second.received]).toEqual(texts(0, 15));
    expect(first.errors).toEqual([]);
    expect(second.errors).toEqual([]);
    await second.channel.stop(); // waits for the last offset write
    const saved = JSON.parse(await readFile(path, "utf8")) as { offset: number; handled: number[] };
    expect(saved.offset).toBe(1015);
    expect(saved.handled).toEqual([]);
    expect((await readdir(join(dir, "state"))).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("a crash after the handler resolved but before the offset was saved: dedupe keeps it from the handler", async () => {
    const path = join(dir, "offset.json");
    const ids = push(texts(0, 5));
    const crashAt = (ids[2] ?? 0) + 1; // saving the offset past the third update "kills the process"
    const file = fileOffsetStore(path);
    const crashing: OffsetStore = {
      ...file,
      save: async (offset) => {
        if (offset === crashAt) throw new Error("process killed");
        await file.save(offset);
      },
    };
    const first = await startAdapter(crashing);
    await first.channel.stopped;
    expect(first.received).toEqual(["m0", "m1", "m2"]);
    expect(first.errors.map((e) => e.message)).toEqual([
      `telegram: polling stopped: cannot save offset ${crashAt} (process killed)`,
    ]);
    // nothing was confirmed to Telegram yet (confirmation is the next getUpdates' offset)
    expect(fake.pendingUpdates().map((u) => u.update_id)).toEqual(ids);

    const second = await startAdapter(fileOffsetStore(path));
    await second.until(2);
    expect(second.received).toEqual(["m3", "m4"]);
    const redelivered = fake.calls.find((c) => c.method === "getUpdates" && c.params.offset === ids[2]);
    expect(redelivered?.response).toMatchObject({
      ok: true,
      result: expect.arrayContaining([expect.objectContaining({ update_id: ids[2] })]),
    });
    expect([...first.received, ...second.received]).toEqual(texts(0, 5));
  });

  it("a handler that never finished (a crash mid-handler) is delivered again to the next instance", async () => {
    const store = memoryOffsetStore();
    push(texts(0, 3));
    let hung = false;
    await startAdapter(store, async (message) => {
      if (message.text === "m1") {
        hung = true;
        await new Promise<never>(() => undefined); // the process dies here
      }
    });
    // the first instance is stuck in m1's handler; a second one takes over from the saved offset
    const second = await startAdapter({ load: store.load, save: store.save });
    await second.until(2);
    expect(hung).toBe(true);
    expect(second.received).toEqual(["m1", "m2"]);
    running.shift(); // the hung instance cannot stop (its handler never returns)
  });

  it("a failing handler is retried and the update is delivered once; offsets never move past a failure", async () => {
    const store = memoryOffsetStore();
    const ids = push(texts(0, 2));
    let failures = 0;
    const started = await startAdapter(store, async (message) => {
      if (message.text === "m0" && failures < 2) {
        failures += 1;
        expect(store.state.offset).toBeUndefined();
        throw new Error("database busy");
      }
    });
    await started.until(2);
    expect(started.received).toEqual(["m0", "m1"]);
    await started.channel.stop();
    expect(store.state).toEqual({ offset: (ids[1] ?? 0) + 1, handled: [], botId: 123456 });
  });

  it("the channel-state table (session store) works as the offset store", async () => {
    const rows = new Map<string, unknown>();
    const table = {
      get: async (channel: string, account: string, key: string) => {
        const value = rows.get(`${channel}/${account}/${key}`);
        return value === undefined ? undefined : { value };
      },
      put: async (channel: string, account: string, key: string, value: unknown) => {
        rows.set(`${channel}/${account}/${key}`, structuredClone(value));
      },
    };
    push(texts(0, 2));
    const first = await startAdapter(channelStateOffsetStore(table, { accountId: "default" }));
    await first.until(2);
    await first.channel.stop();
    push(texts(2, 3));
    const second = await startAdapter(channelStateOffsetStore(table, { accountId: "default" }));
    await second.until(1);
    expect(second.received).toEqual(["m2"]);
    expect(rows.get("telegram/default/poll-offset")).toMatchObject({ offset: 1002 });
  });

  it("an offset saved for another bot is discarded (update ids are per bot), not used to skip updates", async () => {
    const path = join(dir, "offset.json");
    push(texts(0, 3));
    const first = await startAdapter(fileOffsetStore(path));
    await first.until(3);
    await first.channel.stop();
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ offset: 1003, handled: [], botId: 123456 });

    const otherBot = await startFakeTelegram({ bot: { id: 999, username: "other_bot" }, firstUpdateId: 500 });
    try {
      otherBot.pushMessage({ chat, from: alice, text: "for the other bot" });
      const errors: Error[] = [];
      const received: string[] = [];
      let delivered: () => void = () => undefined;
      const done = new Promise<void>((resolve) => {
        delivered = resolve;
      });
      const channel = createTelegramChannel({
        token: otherBot.token,
        apiBaseUrl: otherBot.url,
        offsetStore: fileOffsetStore(path),
        onError: (error) => errors.push(error),
      });
      await channel.start({
        onMessage: async (message) => {
          received.push(message.text);
          delivered();
        },
      });
      await done;
      await channel.stop();
      expect(received).toEqual(["for the other bot"]);
      expect(errors.map((e) => e.message)).toEqual([
        "telegram: the saved polling offset belonged to another bot; starting fresh for bot 999",
      ]);
      expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ offset: 501, handled: [], botId: 999 });
    } finally {
      await otherBot.close();
    }
  });

  it("a corrupt offset file stops start() with a clear error and is left untouched", async () => {
    const path = join(dir, "offset.json");
    await writeFile(path, "{ not json");
    const channel = createTelegramChannel({
      token: fake.token,
      apiBaseUrl: fake.url,
      offsetStore: fileOffsetStore(path),
      onError: () => undefined,
    });
    await expect(channel.start({ onMessage: async () => undefined })).rejects.toThrow(
      /offset file .*offset\.json is not valid JSON .*fix or delete it/,
    );
    expect(await readFile(path, "utf8")).toBe("{ not json");
    expect(fake.calls.map((c) => c.method)).toEqual(["getMe"]);
  });
});

describe("polling resilience and the token", () => {
  it("an invalid token fails start() with a clear 401 error and never polls", async () => {
    const channel = createTelegramChannel({
      token: "1:wrong",
      apiBaseUrl: fake.url,
      onError: () => undefined,
    });
    const error = await channel.start({ onMessage: async () => undefined }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "ChannelError",
      status: 401,
      retryable: false,
      message:
        "telegram: getMe: Unauthorized (401) — the bot token was rejected; check channels.telegram.botToken",
    });
    expect(String(error)).not.toContain("1:wrong");
    expect(fake.calls.map((c) => c.method)).toEqual(["getMe"]);
  });

  it("polling rides out 500, 429 and resets, and stops on a revoked token", async () => {
    fake.failNext({ kind: "server_error", method: "getUpdates" });
    fake.failNext({ kind: "reset", method: "getUpdates" });
    fake.failNext({ kind: "rate_limit", method: "getUpdates", retryAfter: 0 });
    push(["after faults"]);
    const started = await startAdapter(memoryOffsetStore());
    await started.until(1);
    expect(started.received).toEqual(["after faults"]);
    expect(started.errors.map((e) => (e as { status?: number }).status)).toEqual([500, undefined, 429]);
    fake.failNext({ kind: "unauthorized", method: "getUpdates" });
    push(["wake"]); // ends a parked long poll, if one is parked; the next poll meets the 401

    await started.channel.stopped;
    expect(started.errors.at(-1)).toMatchObject({ status: 401 });
  });

  it("a webhook left behind is deleted at start so long polling works", async () => {
    fake.setWebhook("https://old.example/hook");
    push(["hello"]);
    const started = await startAdapter(memoryOffsetStore());
    await started.until(1);
    expect(fake.calls.map((c) => c.method).slice(0, 3)).toEqual(["getMe", "deleteWebhook", "getUpdates"]);
  });
});
