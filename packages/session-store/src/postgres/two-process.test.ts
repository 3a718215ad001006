// Multi-process lanes on PostgreSQL: real child processes (node with the source condition) share one
// database. Two workers run turns on the same session key at once: their turns never overlap (intervals and
// tokens recorded in the database), every turn's entries are stored and the transcript is one consistent
// chain. A holder killed with kill -9 mid-lease is taken over after the TTL and a write with its token is
// refused by fencing; a holder paused past its TTL has its own late write refused.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaseLostError, type SessionLease } from "./leases.ts";
import { openPostgresSessionStore, type PostgresSessionStore } from "./store.ts";
import { type PostgresTestServer, startPostgresServer } from "./testing/pg-server.ts";

const CHILDREN = join(import.meta.dirname, "children");
const KEY = "agent:main:main";
const SESSION = "lane-session";

let server: PostgresTestServer | undefined;
let connectionString = "";
let schemas = 0;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  server = await startPostgresServer();
  connectionString = await server.createDatabase();
});

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  server?.stop();
});

interface Child {
  readonly process: ChildProcessWithoutNullStreams;
  /** Resolves with the first stdout line starting with `prefix`. */
  line(prefix: string): Promise<string>;
  readonly exited: Promise<{ code: number | null; stderr: string }>;
}

function startChild(script: string, args: readonly string[]): Child {
  const child = spawn(
    process.execPath,
    ["--conditions=@agent-kernel/source", join(CHILDREN, script), ...args],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  children.push(child);
  let stdout = "";
  let stderr = "";
  const waiters: { prefix: string; resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  const settle = () => {
    for (const waiter of [...waiters]) {
      const found = stdout.split("\n").find((line) => line.startsWith(waiter.prefix));
      if (found !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(found);
      }
    }
  };
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    settle();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.on("close", (code) => {
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`${script} exited (${code}) before printing ${waiter.prefix}: ${stderr}`));
      }
      resolve({ code, stderr });
    });
  });
  return {
    process: child,
    exited,
    line: (prefix) =>
      new Promise<string>((resolve, reject) => {
        waiters.push({ prefix, resolve, reject });
        settle();
      }),
  };
}

async function freshSchema(): Promise<{ schema: string; store: PostgresSessionStore }> {
  const schema = `lanes_${schemas++}`;
  const store = await openPostgresSessionStore({ connectionString, schema, maxConnections: 3 });
  await sql`CREATE TABLE turn_log (id serial PRIMARY KEY, worker text NOT NULL, turn integer NOT NULL,
    token bigint NOT NULL, started_at timestamptz NOT NULL, ended_at timestamptz)`.execute(store.db);
  return { schema, store };
}

describe("lanes across processes on PostgreSQL", () => {
  it("two processes running turns on one session key never overlap, and every turn's entries form one chain", async () => {
    const { schema, store } = await freshSchema();
    try {
      const turns = 8;
      const workers = ["a", "b"].map((worker) =>
        startChild("lane-worker.ts", [connectionString, schema, worker, String(turns)]),
      );
      await Promise.all(workers.map((worker) => worker.line("ready")));
      for (const worker of workers) worker.process.stdin.write("go\n");
      const exits = await Promise.all(workers.map((worker) => worker.exited));
      for (const exit of exits) expect(exit.stderr).toBe("");
      expect(exits.map((exit) => exit.code)).toEqual([0, 0]);

      const { rows } = await sql<{
        worker: string;
        turn: number;
        token: number;
        start: number;
        end: number | null;
      }>`
        SELECT worker, turn, token,
          extract(epoch from started_at) * 1000000 AS start, extract(epoch from ended_at) * 1000000 AS end
        FROM turn_log ORDER BY started_at`.execute(store.db);
      expect(rows).toHaveLength(2 * turns);
      for (const [index, row] of rows.entries()) {
        expect(row.end, `turn ${row.worker}-${row.turn} ended`).not.toBeNull();
        const next = rows[index + 1];
        if (next !== undefined) {
          expect(
            Number(next.start),
            `${next.worker}-${next.turn} starts after ${row.worker}-${row.turn} ends`,
          ).toBeGreaterThanOrEqual(Number(row.end));
          expect(next.token).toBeGreaterThan(row.token);
        }
      }
      // Both processes really took turns.
      expect(new Set(rows.map((row) => row.worker))).toEqual(new Set(["a", "b"]));

      await store.loadTranscript("main", SESSION);
      const transcript = store.openTranscript("main", SESSION);
      const entries = transcript.getEntries();
      expect(entries).toHaveLength(2 * turns * 3);
      // One chain: each entry's parent is the entry before it, and the leaf is the last one.
      for (const [index, entry] of entries.entries()) {
        expect(entry.parentId).toBe(index === 0 ? null : entries[index - 1]?.id);
      }
      expect(transcript.getBranch()).toHaveLength(entries.length);
      // Each turn's three entries are contiguous and in order, and carry the token of the turn's lease.
      for (const row of rows) {
        const ids = [0, 1, 2].map((step) => `${row.worker}-${row.turn}-${step}`);
        const at = entries.findIndex((entry) => entry.id === ids[0]);
        expect(entries.slice(at, at + 3).map((entry) => entry.id)).toEqual(ids);
        expect(entries[at]?.data).toMatchObject({ token: Number(row.token) });
      }
      const runs = await store.runs.listForSession({ agentId: "main", sessionKey: KEY });
      expect(runs).toHaveLength(2 * turns);
      expect(runs.every((run) => run.status === "succeeded")).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("a holder killed with kill -9 is taken over after its TTL, and a late write with its token is refused", async () => {
    const { schema, store } = await freshSchema();
    try {
      const ttlMs = 1500;
      const holder = startChild("lane-holder.ts", [connectionString, schema, "dead", String(ttlMs)]);
      const token = Number((await holder.line("held ")).split(" ")[1]);
      holder.process.kill("SIGKILL");
      await holder.exited;
      const held = await store.leases.current(KEY);
      expect(held).toMatchObject({ owner: "dead", token });

      // Nobody gets the lease while it is live; the next owner gets it once the TTL has passed.
      expect(await store.leases.acquire(KEY, "next", 60_000)).toBeUndefined();
      const next = await store.leases.acquire(KEY, "next", 60_000, { waitMs: 60_000, pollMs: 20 });
      if (next === undefined) throw new Error("the lease was never taken over");
      expect(next.token).toBe(token + 1);
      const { rows } = await sql<{
        now: number;
      }>`SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now`.execute(store.db);
      expect(Number(rows[0]?.now)).toBeGreaterThanOrEqual(held?.expiresAt ?? Number.POSITIVE_INFINITY);

      await store.loadTranscript("main", SESSION, { lease: next });
      const transcript = store.openTranscript("main", SESSION);
      expect(transcript.getEntries().map((entry) => entry.id)).toEqual(["dead-first"]);
      transcript.append({ type: "custom", id: "next-1", parentId: "dead-first", timestamp: "t" });
      await transcript.flush();

      // The dead holder's late write (its token, e.g. a request still in flight) is refused by fencing.
      const stale: SessionLease = { sessionKey: KEY, owner: "dead", token, expiresAt: held?.expiresAt ?? 0 };
      const late = await openPostgresSessionStore({ connectionString, schema, maxConnections: 2 });
      // The first store opened after the kill recovers the dead process's run as interrupted.
      expect(late.recoveredRuns.map((run) => run.runId)).toEqual(["dead-run"]);
      try {
        await late.loadTranscript("main", SESSION, { lease: stale });
        const lateTranscript = late.openTranscript("main", SESSION);
        lateTranscript.append({ type: "custom", id: "dead-late", parentId: "next-1", timestamp: "t" });
        await expect(lateTranscript.flush()).rejects.toBeInstanceOf(LeaseLostError);
        await expect(
          late.fencedRuns(stale).finish("dead-run", { status: "succeeded" }),
        ).rejects.toBeInstanceOf(LeaseLostError);
      } finally {
        await late.close().catch(() => {});
      }
      await store.loadTranscript("main", SESSION);
      expect(
        store
          .openTranscript("main", SESSION)
          .getEntries()
          .map((entry) => entry.id),
      ).toEqual(["dead-first", "next-1"]);
      expect(await store.runs.get("dead-run")).toMatchObject({
        status: "interrupted",
        errorReason: "interrupted",
      });
    } finally {
      await store.close();
    }
  });

  it("a holder paused past its TTL has its own late write refused once it resumes", async () => {
    const { schema, store } = await freshSchema();
    try {
      const holder = startChild("lane-holder.ts", [connectionString, schema, "slow", "800"]);
      const token = Number((await holder.line("held ")).split(" ")[1]);
      holder.process.kill("SIGSTOP");
      const next = await store.leases.acquire(KEY, "next", 60_000, { waitMs: 60_000, pollMs: 20 });
      if (next === undefined) throw new Error("the lease was never taken over");
      expect(next.token).toBe(token + 1);
      await store.loadTranscript("main", SESSION, { lease: next });
      const transcript = store.openTranscript("main", SESSION);
      transcript.append({ type: "custom", id: "next-1", parentId: "slow-first", timestamp: "t" });
      await transcript.flush();

      holder.process.kill("SIGCONT");
      holder.process.stdin.write("write\n");
      expect(await holder.line("refused")).toBe("refused LeaseLostError");
      expect(await holder.line("run ")).toBe("run refused LeaseLostError");
      holder.process.kill("SIGKILL");
      await holder.exited;

      await store.loadTranscript("main", SESSION);
      expect(transcript.getEntries().map((entry) => entry.id)).toEqual(["slow-first", "next-1"]);
      expect(await store.runs.get("slow-run")).toMatchObject({ status: "running" });
    } finally {
      await store.close();
    }
  });
});
