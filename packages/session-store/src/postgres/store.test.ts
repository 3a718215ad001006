// The PostgreSQL store on a real server (one per file): opening (foreign schema, concurrent first opens,
// borrowed pools, bad options), leases, fencing and the write-through buffer's failure rules, and the queue
// shared by two clients (separate pools) never handing one item to both.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreOpenError } from "../errors.ts";
import { header, messageEntry } from "../testing/conformance.ts";
import { LeaseLostError } from "./leases.ts";
import { openPostgresSessionStore, type PostgresSessionStore } from "./store.ts";
import {
  findPostgresBin,
  PostgresNotInstalledError,
  type PostgresTestServer,
  runSql,
  startPostgresServer,
} from "./testing/pg-server.ts";
import { TranscriptNotLoadedError } from "./transcript.ts";

let server: PostgresTestServer | undefined;
let connectionString = "";
let schemas = 0;

beforeAll(async () => {
  server = await startPostgresServer();
  connectionString = await server.createDatabase();
});

afterAll(() => server?.stop());

/** Two stores (two pools: two clients, as two processes would be) on one fresh schema. */
async function twoStores(): Promise<[PostgresSessionStore, PostgresSessionStore]> {
  const schema = `leases_${schemas++}`;
  const first = await openPostgresSessionStore({ connectionString, schema, maxConnections: 4 });
  const second = await openPostgresSessionStore({ connectionString, schema, maxConnections: 4 });
  return [first, second];
}

async function closeAll(...stores: PostgresSessionStore[]): Promise<void> {
  for (const store of stores) await store.close().catch(() => {});
}

const KEY = "agent:main:main";

describe("opening", () => {
  it("refuses a schema holding store tables without a migration history, and leaves it untouched", async () => {
    await runSql(connectionString, "CREATE SCHEMA foreign_app");
    await runSql(connectionString, "CREATE TABLE foreign_app.sessions (id integer PRIMARY KEY)");
    await runSql(connectionString, "INSERT INTO foreign_app.sessions VALUES (7)");
    const failure = await openPostgresSessionStore({ connectionString, schema: "foreign_app" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StoreOpenError);
    expect(String(failure)).toMatch(/schema foreign_app has tables sessions but no schema_migrations/);
    expect(String(failure)).not.toContain("password");
    const { rows } = await runSql(connectionString, "SELECT id FROM foreign_app.sessions");
    expect(rows).toEqual([{ id: 7 }]);
  });

  it("migrates a new schema once when several stores open it at the same time", async () => {
    const stores = await Promise.all(
      Array.from({ length: 4 }, () =>
        openPostgresSessionStore({ connectionString, schema: "raced", maxConnections: 2 }),
      ),
    );
    try {
      const applied = await Promise.all(stores.map(async (store) => (await store.schema()).applied));
      for (const list of applied) expect(list).toEqual(applied[0]);
      expect(applied[0]?.map((m) => m.version)).toEqual(
        Array.from({ length: applied[0]?.length ?? 0 }, (_unused, index) => index + 1),
      );
    } finally {
      await closeAll(...stores);
    }
  });

  it("uses a borrowed pool without ending it, and names bad options clearly", async () => {
    const pool = new pg.Pool({ connectionString, max: 2 });
    try {
      const store = await openPostgresSessionStore({ pool, schema: "borrowed" });
      await store.sessions.create({ agentId: "main", sessionKey: KEY, sessionId: "s1", now: 5 });
      await store.close();
      // The store is gone, the pool still works.
      const { rows } = await pool.query("SELECT session_id FROM borrowed.sessions");
      expect(rows).toEqual([{ session_id: "s1" }]);
    } finally {
      await pool.end();
    }
    await expect(openPostgresSessionStore({})).rejects.toThrow(/exactly one of connectionString or pool/);
    await expect(openPostgresSessionStore({ connectionString, schema: "bad; DROP" })).rejects.toThrow(
      /invalid PostgreSQL schema name/,
    );
  });

  it("recovers runs whose store is closed or stopped beating, on any host, and only those", async () => {
    const schema = "owners";
    const first = await openPostgresSessionStore({ connectionString, schema });
    const ownerRows = async () =>
      Number((await runSql(connectionString, "SELECT count(*) AS n FROM owners.store_owners")).rows[0]?.n);
    expect(await ownerRows()).toBe(1);
    const run = (runId: string, token: string) =>
      runSql(
        connectionString,
        `INSERT INTO owners.runs (run_id, agent_id, session_key, session_id, entry_point, status, started_at, fallback_chain, owner_host, owner_pid, owner_token, updated_at)
         VALUES ($1, 'main', $2, 's1', 'agent', 'running', 1, '[]', 'another-host', 4242, $3, 1)`,
        [runId, KEY, token],
      );
    const beat = (token: string, agoMs: number) =>
      runSql(
        connectionString,
        `INSERT INTO owners.store_owners (token, host, pid, heartbeat_at)
         VALUES ($1, 'another-host', 4242, (extract(epoch from clock_timestamp()) * 1000)::bigint - $2)`,
        [token, agoMs],
      );
    await run("beating", "t-beating");
    await beat("t-beating", 0);
    await run("stale", "t-stale");
    await beat("t-stale", 120_000);
    await run("closed", "t-closed");
    await first.runs.start({
      runId: "mine",
      agentId: "main",
      sessionKey: KEY,
      sessionId: "s1",
      entryPoint: "agent",
    });
    const second = await openPostgresSessionStore({ connectionString, schema });
    try {
      expect(second.recoveredRuns.map((r) => r.runId).sort()).toEqual(["closed", "stale"]);
      expect(await second.runs.get("stale")).toMatchObject({
        status: "interrupted",
        errorMessage: "the process that ran it (on host another-host) ended before the run finished",
      });
      expect((await second.runs.get("beating"))?.status).toBe("running");
      expect((await second.runs.get("mine"))?.status).toBe("running");
      // The stale store's row is pruned; the two open stores and the beating one remain.
      expect(await ownerRows()).toBe(3);
      const tokens = (await runSql(connectionString, "SELECT token FROM owners.store_owners")).rows.map(
        (row: { token: string }) => row.token,
      );
      expect(tokens).toContain("t-beating");
      expect(tokens).not.toContain("t-stale");
      await first.close();
      expect(await ownerRows()).toBe(2);
    } finally {
      await closeAll(first, second);
    }
  });

  it("fails with a message naming the Debian package when the server programs are missing", () => {
    expect(() => findPostgresBin("/nonexistent/bin", "/nonexistent/postgresql")).toThrow(
      PostgresNotInstalledError,
    );
    expect(() => findPostgresBin("/nonexistent/bin", "/nonexistent/postgresql")).toThrow(
      /install the Debian package `postgresql`/,
    );
  });
});

describe("session leases", () => {
  it("grants one holder at a time; tokens grow by one per acquisition; renew and release check the token", async () => {
    const [a, b] = await twoStores();
    try {
      const first = await a.leases.acquire(KEY, "a", 60_000);
      expect(first).toMatchObject({ sessionKey: KEY, owner: "a", token: 1 });
      expect(await b.leases.acquire(KEY, "b", 60_000)).toBeUndefined();
      if (first === undefined) throw new Error("unreachable");
      const renewed = await a.leases.renew(first, 120_000);
      expect(renewed.token).toBe(1);
      expect(await a.leases.release(first)).toBe(true);
      const second = await b.leases.acquire(KEY, "b", 60_000);
      expect(second).toMatchObject({ owner: "b", token: 2 });
      await expect(a.leases.renew(first, 1000)).rejects.toBeInstanceOf(LeaseLostError);
      expect(await a.leases.release(first)).toBe(false);
      expect((await a.leases.current(KEY))?.owner).toBe("b");
      await expect(a.leases.acquire(KEY, "a", 0)).rejects.toThrow(/ttlMs must be a positive integer/);
    } finally {
      await closeAll(a, b);
    }
  });

  it("lets exactly one of many concurrent acquirers win", async () => {
    const [a, b] = await twoStores();
    try {
      const attempts = await Promise.all(
        Array.from({ length: 12 }, (_unused, index) =>
          (index % 2 === 0 ? a : b).leases.acquire(KEY, `owner-${index}`, 60_000),
        ),
      );
      const winners = attempts.filter((lease) => lease !== undefined);
      expect(winners).toHaveLength(1);
      expect(winners[0]?.token).toBe(1);
    } finally {
      await closeAll(a, b);
    }
  });

  it("hands an expired lease to the next acquirer (waiting for it) with a larger token", async () => {
    const [a, b] = await twoStores();
    try {
      const first = await a.leases.acquire(KEY, "a", 150);
      const second = await b.leases.acquire(KEY, "b", 60_000, { waitMs: 30_000, pollMs: 20 });
      expect(second?.owner).toBe("b");
      expect(second?.token).toBeGreaterThan(first?.token ?? Number.POSITIVE_INFINITY);
    } finally {
      await closeAll(a, b);
    }
  });
});

describe("holding a lease through a long turn", () => {
  it("keeps renewing until released, and reports the loss when a newer token appears", async () => {
    const [a, b] = await twoStores();
    try {
      const hold = await a.leases.hold(KEY, "a", 1500);
      if (hold === undefined) throw new Error("no lease");
      // Several TTLs later the lease is still a's: the renewals kept it.
      await new Promise((resolve) => setTimeout(resolve, 3200));
      expect(await b.leases.acquire(KEY, "b", 60_000)).toBeUndefined();
      expect(hold.lost.aborted).toBe(false);
      expect(await hold.release()).toBe(true);
      const taken = await b.leases.acquire(KEY, "b", 60_000);
      expect(taken?.token).toBe(hold.lease.token + 1);

      const second = await b.leases.hold("agent:main:other", "b", 300);
      if (second === undefined) throw new Error("no lease");
      // Someone takes the key over behind its back (as after a pause longer than the TTL).
      await runSql(
        connectionString,
        `UPDATE ${b.schemaName}.session_leases SET token = token + 1 WHERE session_key = $1`,
        ["agent:main:other"],
      );
      await new Promise<void>((resolve) =>
        second.lost.addEventListener("abort", () => resolve(), { once: true }),
      );
      expect(second.lost.reason).toBeInstanceOf(LeaseLostError);
      expect(await second.release()).toBe(false);
    } finally {
      await closeAll(a, b);
    }
  });
});

describe("fencing", () => {
  it("refuses a transcript flush under a superseded lease; the error sticks until the transcript is reloaded", async () => {
    const [a, b] = await twoStores();
    try {
      const leaseA = await a.leases.acquire(KEY, "a", 60_000);
      if (leaseA === undefined) throw new Error("no lease");
      await a.loadTranscript("main", "s1", { lease: leaseA });
      const t = a.openTranscript("main", "s1", { header: header("s1") });
      t.append(messageEntry("a1", null));
      await t.flush();
      await a.leases.release(leaseA);

      const leaseB = await b.leases.acquire(KEY, "b", 60_000);
      if (leaseB === undefined) throw new Error("no lease");
      await b.loadTranscript("main", "s1", { lease: leaseB });
      const tb = b.openTranscript("main", "s1");
      tb.append(messageEntry("b1", "a1"));
      await tb.flush();

      // A, not knowing it lost the lease, writes late.
      t.append(messageEntry("late", "a1"));
      const failure = await t.flush().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(LeaseLostError);
      expect(String(failure)).toContain("token 1");
      expect(() => t.append(messageEntry("later", "a1"))).toThrow(LeaseLostError);
      expect(() => t.getEntries()).toThrow(LeaseLostError);
      await expect(a.flush()).rejects.toBeInstanceOf(LeaseLostError);

      await b.loadTranscript("main", "s1");
      expect(
        b
          .openTranscript("main", "s1")
          .getEntries()
          .map((e) => e.id),
      ).toEqual(["a1", "b1"]);
      // Reloading drops the refused change and shows what the database holds.
      await a.loadTranscript("main", "s1");
      expect(t.getEntries().map((e) => e.id)).toEqual(["a1", "b1"]);
      expect(t.getLeafId()).toBe("b1");
    } finally {
      await closeAll(a, b);
    }
  });

  it("refuses run writes under a superseded lease and leaves the run as it was", async () => {
    const [a, b] = await twoStores();
    try {
      const leaseA = await a.leases.acquire(KEY, "a", 60_000);
      if (leaseA === undefined) throw new Error("no lease");
      const runsA = a.fencedRuns(leaseA);
      await runsA.start({
        runId: "r1",
        agentId: "main",
        sessionKey: KEY,
        sessionId: "s1",
        entryPoint: "agent",
      });
      await runsA.appendEvents("r1", [{ seq: 1, ts: 1, stream: "lifecycle", data: { phase: "start" } }]);
      await a.leases.release(leaseA);
      const leaseB = await b.leases.acquire(KEY, "b", 60_000);
      if (leaseB === undefined) throw new Error("no lease");
      await expect(
        runsA.finish("r1", {
          status: "succeeded",
          events: [{ seq: 2, ts: 2, stream: "lifecycle", data: { phase: "end" } }],
        }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      await expect(runsA.update("r1", { model: "x" })).rejects.toBeInstanceOf(LeaseLostError);
      expect(await a.runs.get("r1")).toMatchObject({ status: "running" });
      expect((await a.runs.events("r1")).map((e) => e.seq)).toEqual([1]);
      const finished = await b.fencedRuns(leaseB).finish("r1", {
        status: "failed",
        errorReason: "lease_lost",
        events: [{ seq: 2, ts: 2, stream: "lifecycle", data: { phase: "taken-over" } }],
      });
      expect(finished.status).toBe("failed");
      expect((await b.runs.events("r1")).map((e) => e.seq)).toEqual([1, 2]);
    } finally {
      await closeAll(a, b);
    }
  });
});

describe("the write-through buffer", () => {
  it("needs loadTranscript before synchronous use, and names the call to make", async () => {
    const [a, b] = await twoStores();
    try {
      expect(() => a.openTranscript("main", "s1")).toThrow(TranscriptNotLoadedError);
      expect(() => a.hasTranscript("main", "s1")).toThrow(/await store\.loadTranscript\("main", "s1"\)/);
    } finally {
      await closeAll(a, b);
    }
  });

  it("reports a stale writer's flush (another store appended meanwhile) without writing, and recovers by reloading", async () => {
    const [a, b] = await twoStores();
    try {
      await a.loadTranscript("main", "s1");
      a.openTranscript("main", "s1", { header: header("s1") }).append(messageEntry("x", null));
      await a.flush();
      await b.loadTranscript("main", "s1");
      const ta = a.openTranscript("main", "s1");
      const tb = b.openTranscript("main", "s1");
      ta.append(messageEntry("from-a", "x"));
      await ta.flush();
      // b loaded before a's append: its view is stale, its append takes a position already taken.
      tb.append(messageEntry("from-b", "x"));
      await expect(tb.flush()).rejects.toThrow(/another writer appended to this session meanwhile/);
      expect(() => tb.count()).toThrow(/reload it with store.loadTranscript/);
      await b.loadTranscript("main", "s1");
      expect(tb.getEntries().map((e) => e.id)).toEqual(["x", "from-a"]);
      tb.append(messageEntry("from-b-again", "from-a"));
      await b.flush();
      await a.loadTranscript("main", "s1");
      expect(ta.getBranch().map((e) => e.id)).toEqual(["x", "from-a", "from-b-again"]);
    } finally {
      await closeAll(a, b);
    }
  });

  it("flushes on close, and a new transcript created by two stores at once fails the second flush", async () => {
    const [a, b] = await twoStores();
    try {
      await a.loadTranscript("main", "s1");
      await b.loadTranscript("main", "s1");
      a.openTranscript("main", "s1", { header: header("s1") }).append(messageEntry("a", null));
      await a.flush();
      // b last looked before a created it: it creates its own in memory, and its flush is refused.
      const tb = b.openTranscript("main", "s1", { header: header("s1", "/other") });
      await expect(tb.flush()).rejects.toThrow(/another writer created it first/);
      a.openTranscript("main", "s1").append(messageEntry("b", "a"));
      await a.close();
      await b.loadTranscript("main", "s1");
      expect(tb.getEntries().map((e) => e.id)).toEqual(["a", "b"]);
      expect(tb.getHeader()?.cwd).toBe("/work");
    } finally {
      await closeAll(a, b);
    }
  });
});

describe("the queue shared by two clients", () => {
  it("never hands one item to both: every item is claimed exactly once", async () => {
    const [a, b] = await twoStores();
    try {
      const count = 60;
      for (let index = 0; index < count; index++) {
        await a.queue.enqueue({
          itemId: `q${index}`,
          agentId: "main",
          sessionKey: KEY,
          kind: "followup",
          payload: { index },
          now: index,
        });
      }
      const handled: string[] = [];
      const worker = async (store: PostgresSessionStore, owner: string) => {
        for (;;) {
          const item = await store.queue.claimNext({ agentId: "main", owner, leaseMs: 600_000 });
          if (item === undefined) return;
          handled.push(item.itemId);
          await store.queue.complete(item.itemId, owner);
        }
      };
      await Promise.all([worker(a, "a1"), worker(a, "a2"), worker(b, "b1"), worker(b, "b2")]);
      expect(handled).toHaveLength(count);
      expect(new Set(handled).size).toBe(count);
      expect(await b.queue.list({ agentId: "main", status: "done" })).toHaveLength(count);
    } finally {
      await closeAll(a, b);
    }
  });
});
