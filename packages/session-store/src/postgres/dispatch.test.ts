// Queue and cron dispatch through pg-boss on a real PostgreSQL server: two clients (each its own store, pool
// and pg-boss instance, as two gateway processes would be) share one queue; every item is handled exactly
// once, extra wake-ups change nothing, a failing item is retried, and a cron tick runs once and is recorded.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type QueueDispatcher, startQueueDispatcher } from "./dispatch.ts";
import { openPostgresSessionStore, type PostgresSessionStore } from "./store.ts";
import { type PostgresTestServer, startPostgresServer } from "./testing/pg-server.ts";

let server: PostgresTestServer | undefined;
let connectionString = "";

beforeAll(async () => {
  server = await startPostgresServer();
  connectionString = await server.createDatabase();
});

afterAll(() => server?.stop());

/** Polls `done` until it holds (a deadline only so that a broken build fails instead of hanging). */
async function until(done: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("queue and cron dispatch through pg-boss", () => {
  it("two clients sharing the queue handle every item exactly once, retries included", async () => {
    const schema = "dispatch_queue";
    const stores: PostgresSessionStore[] = [];
    const dispatchers: QueueDispatcher[] = [];
    try {
      for (const owner of ["gateway-a", "gateway-b"]) {
        const store = await openPostgresSessionStore({ connectionString, schema, maxConnections: 4 });
        stores.push(store);
        dispatchers.push(
          await startQueueDispatcher(store, { connectionString, owner, pollingIntervalSeconds: 0.5 }),
        );
      }
      const [storeA] = stores;
      if (storeA === undefined) throw new Error("unreachable");
      // A primary key: a second handling of one item would fail the handler's insert (and the test).
      await sql`CREATE TABLE handled (item_id text PRIMARY KEY, owner text NOT NULL)`.execute(storeA.db);
      let flakyCalls = 0;
      dispatchers.forEach((dispatcher, index) => {
        const store = stores[index] as PostgresSessionStore;
        void dispatcher.work(
          async (item) => {
            if (item.itemId === "flaky" && flakyCalls++ === 0) throw new Error("first attempt fails");
            await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 5)));
            await sql`INSERT INTO handled (item_id, owner) VALUES (${item.itemId}, ${item.claimedBy ?? ""})`.execute(
              store.db,
            );
          },
          { retryAfterMs: 200 },
        );
      });
      const ids: string[] = ["flaky"];
      await dispatchers[0]?.enqueue({
        itemId: "flaky",
        agentId: "main",
        sessionKey: "agent:main:s0",
        kind: "followup",
        payload: {},
      });
      for (let index = 0; index < 40; index++) {
        const itemId = `item-${index}`;
        ids.push(itemId);
        await dispatchers[index % 2]?.enqueue({
          itemId,
          agentId: "main",
          sessionKey: `agent:main:s${index % 4}`,
          kind: "followup",
          payload: { index },
        });
      }
      // The same items again: idempotent in the store, extra wake-ups in pg-boss.
      for (let index = 0; index < 10; index++) {
        await dispatchers[1]?.enqueue({
          itemId: `item-${index}`,
          agentId: "main",
          sessionKey: `agent:main:s${index % 4}`,
          kind: "followup",
          payload: { index },
        });
      }
      await until(
        async () => (await storeA.queue.list({ agentId: "main", status: "done" })).length === ids.length,
        "every item done",
      );
      const { rows } = await sql<{
        item_id: string;
        owner: string;
      }>`SELECT item_id, owner FROM handled`.execute(storeA.db);
      expect(rows.map((row) => row.item_id).sort()).toEqual([...ids].sort());
      const items = await storeA.queue.list({ agentId: "main" });
      expect(items.every((item) => item.status === "done")).toBe(true);
      expect(items.find((item) => item.itemId === "flaky")).toMatchObject({
        attempts: 2,
        lastError: "first attempt fails",
      });
      expect(flakyCalls).toBe(2);
    } finally {
      for (const dispatcher of dispatchers) await dispatcher.stop();
      for (const store of stores) await store.close();
    }
  });

  it("runs a cron tick once across two clients and records it in the cron state", async () => {
    const schema = "dispatch_cron";
    const stores: PostgresSessionStore[] = [];
    const dispatchers: QueueDispatcher[] = [];
    try {
      const runs: string[] = [];
      for (const owner of ["gateway-a", "gateway-b"]) {
        const store = await openPostgresSessionStore({ connectionString, schema, maxConnections: 4 });
        stores.push(store);
        const dispatcher = await startQueueDispatcher(store, { connectionString, owner });
        dispatchers.push(dispatcher);
        await dispatcher.workCron(async (jobId) => {
          runs.push(`${jobId}@${owner}`);
          if (jobId === "broken") throw new Error("cron job failed");
        });
      }
      const [first, second] = dispatchers;
      const [storeA] = stores;
      if (first === undefined || second === undefined || storeA === undefined) throw new Error("unreachable");
      await first.schedule("daily", "0 3 * * *", { agentId: "main" });
      await second.schedule("daily", "0 3 * * *", { agentId: "main" });
      expect(await storeA.cron.get("daily")).toMatchObject({ agentId: "main" });
      await first.trigger("daily", "main");
      await second.trigger("broken");
      await until(
        async () =>
          (await storeA.cron.get("daily"))?.lastStatus === "ok" &&
          (await storeA.cron.get("broken"))?.lastStatus === "error",
        "both ticks recorded",
      );
      expect(runs.filter((run) => run.startsWith("daily@"))).toHaveLength(1);
      expect(runs.filter((run) => run.startsWith("broken@"))).toHaveLength(1);
      expect(await storeA.cron.get("broken")).toMatchObject({
        lastError: "cron job failed",
        consecutiveErrors: 1,
      });
      expect((await storeA.cron.get("daily"))?.runningSince).toBeUndefined();
      await first.unschedule("daily");
    } finally {
      for (const dispatcher of dispatchers) await dispatcher.stop();
      for (const store of stores) await store.close();
    }
  });
});
