// The session-lease contract (./leases.ts) on both stores, one suite: tokens that grow by one per acquisition,
// expiry, renewal and release, fencing of run and transcript writes, and real processes — two workers taking
// turns on one session key never overlap and leave one chain; a holder killed with kill -9 is taken over (on
// SQLite at once: its process is provably gone; on PostgreSQL after its TTL) and a late write with its token
// is refused; a holder paused past its TTL has its own late writes refused once it resumes.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaseLostError, type LeasingSessionStore, type SessionLease } from "./leases.ts";
import { openPostgresSessionStore } from "./postgres/store.ts";
import { type PostgresTestServer, startPostgresServer } from "./postgres/testing/pg-server.ts";
import { openSessionStore } from "./store.ts";

const CHILD = join(import.meta.dirname, "..", "test", "child", "lane-child.ts");
const KEY = "agent:main:main";
const SESSION = "lane-session";
const HEADER = {
  type: "session",
  version: 3,
  id: SESSION,
  timestamp: new Date(0).toISOString(),
  cwd: "/w",
} as const;

interface Backend {
  /** A fresh, empty location: its spec for the child processes, and an opener for this process. */
  fresh(): Promise<{ spec: string; open(): Promise<LeasingSessionStore> }>;
  /** Whether a holder that died is taken over before its TTL (its process is provably gone). */
  readonly takesOverDeadHolders: boolean;
}

const scratch: string[] = [];
const children: ChildProcessWithoutNullStreams[] = [];
let server: PostgresTestServer | undefined;
let connectionString = "";
let schemas = 0;

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  server?.stop();
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "agent-kernel-leases-"));
  scratch.push(dir);
  return dir;
}

const sqlite: Backend = {
  takesOverDeadHolders: true,
  async fresh() {
    const stateDir = scratchDir();
    return { spec: `sqlite:${stateDir}`, open: () => openSessionStore({ stateDir }) };
  },
};

const postgres: Backend = {
  takesOverDeadHolders: false,
  async fresh() {
    if (server === undefined) {
      server = await startPostgresServer();
      connectionString = await server.createDatabase();
    }
    const schema = `leases_${process.pid}_${schemas++}`;
    return {
      spec: `postgres:${schema}:${connectionString}`,
      open: () => openPostgresSessionStore({ connectionString, schema, maxConnections: 3 }),
    };
  },
};

interface Child {
  readonly process: ChildProcessWithoutNullStreams;
  /** Resolves with the first stdout line starting with `prefix` that was not returned before. */
  line(prefix: string): Promise<string>;
  readonly exited: Promise<{ code: number | null; stderr: string }>;
}

function startChild(args: readonly string[]): Child {
  const child = spawn(process.execPath, ["--conditions=@agent-kernel/source", CHILD, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  let consumed = 0;
  const waiters: { prefix: string; resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  const settle = () => {
    for (const waiter of [...waiters]) {
      const lines = stdout.split("\n").slice(0, -1);
      const index = lines.findIndex((line, at) => at >= consumed && line.startsWith(waiter.prefix));
      if (index >= 0) {
        consumed = index + 1;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(lines[index] ?? "");
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
        waiter.reject(new Error(`lane child exited (${code}) before printing ${waiter.prefix}: ${stderr}`));
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

/** A transcript write and what makes it durable: SQLite refuses at the append, PostgreSQL at the flush. */
async function writeEntry(store: LeasingSessionStore, id: string): Promise<void> {
  await store.loadTranscript("main", SESSION);
  const transcript = store.openTranscript("main", SESSION, { header: HEADER });
  transcript.append({ type: "custom", id, parentId: transcript.getLeafId(), timestamp: "t" });
  await store.flush();
}

async function entryIds(store: LeasingSessionStore): Promise<string[]> {
  await store.loadTranscript("main", SESSION);
  return store
    .openTranscript("main", SESSION)
    .getEntries()
    .map((entry) => entry.id);
}

describe.each([
  ["SQLite", sqlite],
  ["PostgreSQL", postgres],
] as const)("session leases on %s", (_name, backend) => {
  let location: Awaited<ReturnType<Backend["fresh"]>>;
  let store: LeasingSessionStore;

  beforeAll(async () => {
    location = await backend.fresh();
    store = await location.open();
    return () => store.close();
  }, 120_000);

  it("tokens grow by one per acquisition; a live lease is nobody else's; release and renew keep the token", async () => {
    const key = "contract:tokens";
    const first = await store.leases.acquire(key, "a", 60_000);
    expect(first).toMatchObject({ sessionKey: key, owner: "a", token: 1 });
    if (first === undefined) return;
    expect(await store.leases.acquire(key, "b", 60_000)).toBeUndefined();
    const renewed = await store.leases.renew(first, 120_000);
    expect(renewed.token).toBe(1);
    expect(renewed.expiresAt).toBeGreaterThan(first.expiresAt);
    expect(await store.leases.release(renewed)).toBe(true);
    expect(await store.leases.current(key)).toMatchObject({ token: 1, owner: "" });
    const second = await store.leases.acquire(key, "b", 60_000);
    expect(second).toMatchObject({ owner: "b", token: 2 });
    // Whether the last holder left it unreleased: SQLite tells (PostgreSQL cannot, and says nothing).
    if (backend.takesOverDeadHolders) {
      expect([first.tookOver, second?.tookOver]).toEqual([false, false]);
    } else {
      expect(second?.tookOver).toBeUndefined();
    }
    // The old holder's lease is superseded: renew throws, release reports false.
    await expect(store.leases.renew(first, 1000)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.leases.release(first)).toBe(false);
    await expect(store.leases.acquire(key, "c", 0)).rejects.toThrow(/ttlMs must be a positive integer/);
  });

  it("an expired lease goes to the next owner with the next token, and the old one's writes are fenced", async () => {
    const key = "contract:expiry";
    const old = await store.leases.acquire(key, "old", 150);
    if (old === undefined) throw new Error("no lease");
    const next = await store.leases.acquire(key, "next", 60_000, { waitMs: 10_000, pollMs: 10 });
    expect(next).toMatchObject({ owner: "next", token: old.token + 1 });
    if (backend.takesOverDeadHolders) expect(next?.tookOver).toBe(true);
    const runs = store.fencedRuns(old);
    await expect(
      runs.start({ runId: "expired-run", agentId: "main", sessionKey: key, sessionId: "s", entryPoint: "t" }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.runs.get("expired-run")).toBeUndefined();
    if (next === undefined) return;
    const fenced = store.fencedRuns(next);
    await fenced.start({
      runId: "next-run",
      agentId: "main",
      sessionKey: key,
      sessionId: "s",
      entryPoint: "t",
    });
    await fenced.appendEvents("next-run", [{ seq: 1, ts: 1, stream: "lifecycle", data: { ok: true } }]);
    expect(await fenced.finish("next-run", { status: "succeeded" })).toMatchObject({ status: "succeeded" });
  });

  it("a held lease is renewed past its TTL and lost when superseded; the transcript's writes follow the lease", async () => {
    const hold = await store.leases.hold(KEY, "holder", 300);
    if (hold === undefined) throw new Error("no lease");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await store.leases.acquire(KEY, "other", 60_000)).toBeUndefined();
    expect(hold.lost.aborted).toBe(false);

    await store.loadTranscript("main", SESSION, { lease: hold.lease });
    await writeEntry(store, "held-1");
    expect(await hold.release()).toBe(true);

    // Another owner takes the session; a write fenced by the old lease is refused and not stored.
    const next = await store.leases.acquire(KEY, "other", 60_000);
    if (next === undefined) throw new Error("no lease");
    const stale: SessionLease = { ...hold.lease };
    await store.loadTranscript("main", SESSION, { lease: stale });
    const transcript = store.openTranscript("main", SESSION);
    let refused: unknown;
    try {
      transcript.append({ type: "custom", id: "stale-1", parentId: "held-1", timestamp: "t" });
      await store.flush();
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(LeaseLostError);
    await store.loadTranscript("main", SESSION, { lease: next });
    await writeEntry(store, "next-1");
    expect(await entryIds(store)).toEqual(["held-1", "next-1"]);
    await store.leases.release(next);
  });

  it("two processes taking turns on one session key never overlap, and their entries form one chain", async () => {
    const fresh = await backend.fresh();
    const log = join(scratchDir(), "turns.log");
    writeFileSync(log, "");
    const turns = 6;
    const workers = ["a", "b"].map((name) => startChild(["worker", fresh.spec, name, String(turns), log]));
    await Promise.all(workers.map((worker) => worker.line("ready")));
    for (const worker of workers) worker.process.stdin.write("go\n");
    const exits = await Promise.all(workers.map((worker) => worker.exited));
    for (const exit of exits) expect(exit.stderr).toBe("");
    expect(exits.map((exit) => exit.code)).toEqual([0, 0]);

    // The log's order is the order the turns ran in: each start is followed by its own end.
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(4 * turns);
    const tokens: number[] = [];
    for (let at = 0; at < lines.length; at += 2) {
      const [kind, name, turn, token] = (lines[at] ?? "").split(" ");
      expect(kind).toBe("start");
      expect(lines[at + 1]).toBe(`end ${name} ${turn} ${token}`);
      tokens.push(Number(token));
    }
    expect(tokens).toEqual([...tokens].sort((x, y) => x - y));
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(new Set(lines.map((line) => line.split(" ")[1]))).toEqual(new Set(["a", "b"]));

    const other = await fresh.open();
    try {
      await other.loadTranscript("main", SESSION);
      const transcript = other.openTranscript("main", SESSION);
      const entries = transcript.getEntries();
      expect(entries).toHaveLength(2 * turns * 3);
      for (const [index, entry] of entries.entries()) {
        expect(entry.parentId).toBe(index === 0 ? null : entries[index - 1]?.id);
      }
      expect(transcript.getBranch()).toHaveLength(entries.length);
      const runs = await other.runs.listForSession({ agentId: "main", sessionKey: KEY });
      expect(runs).toHaveLength(2 * turns);
      expect(runs.every((run) => run.status === "succeeded")).toBe(true);
    } finally {
      await other.close();
    }
  }, 180_000);

  it("a holder killed with kill -9 is taken over, and a late write with its token is refused", async () => {
    const fresh = await backend.fresh();
    const ttlMs = 1500;
    const holder = startChild(["holder", fresh.spec, "dead", String(ttlMs)]);
    const token = Number((await holder.line("held ")).split(" ")[1]);
    holder.process.kill("SIGKILL");
    await holder.exited;
    const next = await fresh.open();
    try {
      const held = await next.leases.current(KEY);
      expect(held).toMatchObject({ owner: "dead", token });
      const takenAt = Date.now();
      const lease = await next.leases.acquire(KEY, "next", 60_000, { waitMs: 60_000, pollMs: 20 });
      if (lease === undefined) throw new Error("the lease was never taken over");
      expect(lease.token).toBe(token + 1);
      // SQLite proves the holder's process gone and takes over at once; PostgreSQL waits for the TTL.
      if (backend.takesOverDeadHolders) expect(Date.now() - takenAt).toBeLessThan(ttlMs);
      await next.loadTranscript("main", SESSION, { lease });
      await writeEntry(next, "next-1");

      const late = await fresh.open();
      try {
        const stale: SessionLease = {
          sessionKey: KEY,
          owner: "dead",
          token,
          expiresAt: held?.expiresAt ?? 0,
        };
        await late.loadTranscript("main", SESSION, { lease: stale });
        const transcript = late.openTranscript("main", SESSION);
        let refused: unknown;
        try {
          transcript.append({ type: "custom", id: "dead-late", parentId: "next-1", timestamp: "t" });
          await late.flush();
        } catch (error) {
          refused = error;
        }
        expect(refused).toBeInstanceOf(LeaseLostError);
        await expect(
          late.fencedRuns(stale).finish("dead-run", { status: "succeeded" }),
        ).rejects.toBeInstanceOf(LeaseLostError);
      } finally {
        await late.close().catch(() => {});
      }
      expect(await entryIds(next)).toEqual(["dead-first", "next-1"]);
      await next.runs.recoverInterrupted();
      expect(await next.runs.get("dead-run")).toMatchObject({ status: "interrupted" });
    } finally {
      await next.close();
    }
  }, 120_000);

  it("a holder paused past its TTL has its own late writes refused once it resumes", async () => {
    const fresh = await backend.fresh();
    const holder = startChild(["holder", fresh.spec, "slow", "800"]);
    const token = Number((await holder.line("held ")).split(" ")[1]);
    holder.process.kill("SIGSTOP");
    const next = await fresh.open();
    try {
      const lease = await next.leases.acquire(KEY, "next", 60_000, { waitMs: 60_000, pollMs: 20 });
      if (lease === undefined) throw new Error("the lease was never taken over");
      expect(lease.token).toBe(token + 1);
      await next.loadTranscript("main", SESSION, { lease });
      await writeEntry(next, "next-1");

      holder.process.kill("SIGCONT");
      holder.process.stdin.write("write\n");
      expect(await holder.line("refused")).toBe("refused LeaseLostError");
      expect(await holder.line("run ")).toBe("run refused LeaseLostError");
      holder.process.kill("SIGKILL");
      await holder.exited;

      expect(await entryIds(next)).toEqual(["slow-first", "next-1"]);
      expect(await next.runs.get("slow-run")).toMatchObject({ status: "running" });
    } finally {
      await next.close();
    }
  }, 120_000);
});
