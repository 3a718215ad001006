// The kernel on PostgreSQL: a real server (session-store's test helper), real pi, real HTTP to tooling/fake-llm.
// One turn end to end (transcript durable when the turn reports success, run record, decisions); two real
// child processes, each with its own kernel on the same database, running turns on one session key at once
// (never overlapping, all succeeded, one chain with each turn's entries together, in run order); and a holder
// killed with kill -9 mid-turn (the other process takes over after the lease's TTL, the dead run is marked
// interrupted, the next turn succeeds on a valid prefix).
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, reply, startFakeLlm } from "@agent-kernel/fake-llm";
import type { SessionStore, TranscriptEntry } from "@agent-kernel/session-store";
import { openPostgresSessionStore, type PostgresSessionStore } from "@agent-kernel/session-store/postgres";
import {
  type PostgresTestServer,
  runSql,
  startPostgresServer,
} from "@agent-kernel/session-store/postgres/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresKernelConfig } from "../test/postgres-kernel.ts";
import { createKernel, openKernelStore, runDoctor, showSession } from "./index.ts";

const WORKER = join(import.meta.dirname, "..", "test", "postgres-lane-worker.ts");

let server: PostgresTestServer | undefined;
let llm: FakeLlm | undefined;
let root = "";
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "kernel-pg-"));
  server = await startPostgresServer();
  // Slow-model turns never answer in time (the kill test kills their holder); every other turn takes a while
  // so that turns of two processes would overlap if nothing serialised them.
  llm = await startFakeLlm({
    scenario: {
      rules: [{ when: { model: "slow-1" }, steps: [reply("never", { latencyMs: 60_000, times: "always" })] }],
      fallback: reply("fine thanks", { latencyMs: 40, delayMs: 10 }),
    },
  });
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await llm?.close();
  server?.stop();
  rmSync(root, { recursive: true, force: true });
});

function running(): { server: PostgresTestServer; llm: FakeLlm } {
  if (server === undefined || llm === undefined)
    throw new Error("the PostgreSQL server or fake-llm is not up");
  return { server, llm };
}

interface Child {
  readonly process: ChildProcessWithoutNullStreams;
  /** Every stdout line so far. */
  readonly lines: string[];
  /** Resolves with the first stdout line starting with `prefix`. */
  line(prefix: string): Promise<string>;
  readonly exited: Promise<{ code: number | null; stderr: string }>;
}

function startWorker(args: Record<string, unknown>): Child {
  const child = spawn(process.execPath, ["--conditions=@agent-kernel/source", WORKER, JSON.stringify(args)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  const lines: string[] = [];
  let partial = "";
  let stderr = "";
  const waiters: { prefix: string; resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  const settle = () => {
    for (const waiter of [...waiters]) {
      const found = lines.find((line) => line.startsWith(waiter.prefix));
      if (found !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(found);
      }
    }
  };
  child.stdout.on("data", (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    settle();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.on("close", (code) => {
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`worker exited (${code}) before printing "${waiter.prefix}": ${stderr}`));
      }
      resolve({ code, stderr });
    });
  });
  return {
    process: child,
    lines,
    exited,
    line: (prefix) =>
      new Promise<string>((resolve, reject) => {
        waiters.push({ prefix, resolve, reject });
        settle();
      }),
  };
}

function userText(entry: TranscriptEntry): string | undefined {
  if (entry.type !== "message") return undefined;
  const message = entry.message as { role?: unknown; content?: unknown };
  if (message.role !== "user") return undefined;
  const content = message.content;
  if (typeof content === "string") return content;
  return Array.isArray(content)
    ? content
        .map((block: { type?: unknown; text?: unknown }) =>
          typeof block.text === "string" ? block.text : "",
        )
        .join("")
    : undefined;
}

function roleOf(entry: TranscriptEntry): string | undefined {
  return entry.type === "message" ? (entry.message as { role?: string }).role : undefined;
}

/** The stored transcript of a session, read by a store of its own (what another process would see). */
async function storedEntries(
  store: SessionStore,
  agentId: string,
  sessionId: string,
): Promise<TranscriptEntry[]> {
  await store.loadTranscript(agentId, sessionId);
  return store.hasTranscript(agentId, sessionId) ? store.openTranscript(agentId, sessionId).getEntries() : [];
}

/** Every entry's parent is the entry before it: one chain, no branch. */
function expectOneChain(entries: readonly TranscriptEntry[]): void {
  for (const [index, entry] of entries.entries()) {
    expect(entry.parentId, `entry ${index} (${entry.type})`).toBe(
      index === 0 ? null : entries[index - 1]?.id,
    );
  }
}

/** A kernel in this process on the PostgreSQL database at `url`, and a second store to look with. */
async function kernelOn(url: string, model: string, name: string, leaseTtlMs?: number) {
  const { llm: fake } = running();
  const workspaceDir = join(root, `${name}-workspace`);
  mkdirSync(workspaceDir, { recursive: true });
  const config = postgresKernelConfig({
    url,
    llmBaseUrl: fake.baseUrlFor("openai"),
    model,
    stateDir: join(root, `${name}-state`),
    workspaceDir,
  });
  const store = await openKernelStore({ stateDir: join(root, `${name}-state`), config });
  const observer = await openPostgresSessionStore({ connectionString: url, maxConnections: 2 });
  const kernel = createKernel({
    config,
    store,
    paths: { env: {}, homeDir: root, cwd: root },
    executorSettings: { transientRetryDelayMs: 0 },
    sessionLeases: { owner: "kernel-under-test", ...(leaseTtlMs === undefined ? {} : { ttlMs: leaseTtlMs }) },
  });
  return { kernel, store, observer };
}

describe("the kernel on PostgreSQL", () => {
  it("runs a turn end to end: the transcript is durable when the turn reports success", async () => {
    const { server: pg, llm: fake } = running();
    const url = await pg.createDatabase();
    const workspaceDir = join(root, "one-workspace");
    mkdirSync(workspaceDir, { recursive: true });
    const config = postgresKernelConfig({
      url,
      llmBaseUrl: fake.baseUrlFor("openai"),
      model: "fast-1",
      stateDir: join(root, "one-state"),
      workspaceDir,
    });
    const store = await openKernelStore({ stateDir: join(root, "one-state"), config });
    const observer = await openPostgresSessionStore({ connectionString: url, maxConnections: 2 });
    try {
      expect("leases" in store).toBe(true);
      const kernel = createKernel({
        config,
        store,
        paths: { env: {}, homeDir: root, cwd: root },
        executorSettings: { transientRetryDelayMs: 0 },
      });
      const prepared = await kernel.prepareSession({ sessionKey: "pg-one" });
      const outcome = await kernel.executeTurn(prepared, { prompt: "hello there" });
      expect(outcome.status).toBe("ok");
      expect(outcome.result.assistantText).toBe("fine thanks");

      // Another store (another process's view) sees the whole turn at once: flushed before success.
      const { agentId, sessionId } = prepared.transcript;
      const entries = await storedEntries(observer, agentId, sessionId);
      expectOneChain(entries);
      expect(entries.map(userText).filter((text) => text !== undefined)).toEqual(["hello there"]);
      expect(entries.at(-1)?.type).toBe("message");
      expect(roleOf(entries.at(-1) as TranscriptEntry)).toBe("assistant");

      const run = await observer.runs.get(outcome.runId);
      expect(run).toMatchObject({ status: "succeeded", sessionKey: "agent:main:pg-one", sessionId });
      const events = await observer.runs.events(outcome.runId);
      expect(events[0]?.data).toMatchObject({ phase: "prepared" });
      // The turn's lease is kept a few ms for this process's next turn (sticky), then released.
      let lease = await (store as PostgresSessionStore).leases.current("agent:main:pg-one");
      for (let waited = 0; lease?.owner !== "" && waited < 5_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        lease = await (store as PostgresSessionStore).leases.current("agent:main:pg-one");
      }
      expect(lease).toMatchObject({ owner: "" });

      // The next turn continues the same chain.
      const second = await kernel.executeTurn(prepared, { prompt: "and again" });
      expect(second.status).toBe("ok");
      const after = await storedEntries(observer, agentId, sessionId);
      expectOneChain(after);
      expect(after.slice(0, entries.length)).toEqual(entries);
      expect(after.map(userText).filter((text) => text !== undefined)).toEqual(["hello there", "and again"]);

      // The admin read side on a store that has loaded nothing yet.
      const admin = await openKernelStore({ stateDir: join(root, "one-state"), config });
      try {
        const shown = await showSession(admin, config, { key: "pg-one" });
        const talk = shown?.messages.filter(
          (message) => message.role === "user" || message.role === "assistant",
        );
        expect(talk?.map((message) => message.text)).toEqual([
          "hello there",
          "fine thanks",
          "and again",
          "fine thanks",
        ]);
        const doctor = await runDoctor(admin, config);
        expect(doctor.problems).toEqual([]);
        expect(doctor.stateDir).toBe("postgres:public");
        expect(doctor.checked).toMatchObject({ sessions: 1, transcripts: 1, runs: 2 });
      } finally {
        await admin.close();
      }
    } finally {
      await observer.close();
      await store.close();
    }
  });

  it("waiting for another process's lease honours the turn's timeout and abort signal", async () => {
    const { server: pg, llm: fake } = running();
    const url = await pg.createDatabase();
    const { kernel, store, observer } = await kernelOn(url, "fast-1", "busy");
    try {
      const other = await observer.leases.acquire("agent:main:busy", "other-process", 60_000);
      if (other === undefined) throw new Error("could not take the lease");
      const asked = fake.requests.length;
      const prepared = await kernel.prepareSession({ sessionKey: "busy" });
      const timedOut = await kernel.executeTurn(prepared, { prompt: "are you there", timeoutMs: 300 });
      expect(timedOut.status).toBe("timeout");
      expect(timedOut.result.errorMessage).toMatch(/busy in another process/);
      expect(await observer.runs.get(timedOut.runId)).toMatchObject({ status: "timed_out" });

      const controller = new AbortController();
      const aborting = kernel.executeTurn(prepared, { prompt: "hello?", signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      const aborted = await aborting;
      expect(aborted.status).toBe("aborted");
      expect(await observer.runs.get(aborted.runId)).toMatchObject({ status: "aborted" });
      // Neither turn reached the model, and the other process's lease is untouched.
      expect(fake.requests.length).toBe(asked);
      expect(await observer.leases.current("agent:main:busy")).toMatchObject({ owner: "other-process" });

      await observer.leases.release(other);
      const answered = await kernel.executeTurn(prepared, { prompt: "now?" });
      expect(answered.status).toBe("ok");
    } finally {
      await observer.close();
      await store.close();
    }
  });

  it("a turn whose lease is taken over mid-turn fails, and none of its answer is stored", async () => {
    const { server: pg } = running();
    const url = await pg.createDatabase();
    const { kernel, store, observer } = await kernelOn(url, "slow-1", "stolen", 600);
    try {
      const prepared = await kernel.prepareSession({ sessionKey: "stolen" });
      const turn = kernel.executeTurn(prepared, { prompt: "take your time" });
      const key = "agent:main:stolen";
      while ((await observer.leases.current(key))?.owner !== "kernel-under-test") {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // Another holder's acquisition, as after an expiry: a newer token.
      await runSql(
        url,
        "UPDATE session_leases SET owner = 'thief', token = token + 1, expires_at = expires_at + 600000 WHERE session_key = $1",
        [key],
      );
      const outcome = await turn;
      expect(outcome.status).toBe("error");
      expect(outcome.result.errorMessage).toMatch(/lease/);
      const run = await observer.runs.get(outcome.runId);
      expect(run?.status).toBe("failed");
      expect(run?.errorMessage).toMatch(/lease/);
      const entries = await storedEntries(
        observer,
        prepared.transcript.agentId,
        prepared.transcript.sessionId,
      );
      expect(entries.some((entry) => roleOf(entry) === "assistant")).toBe(false);
    } finally {
      await observer.close();
      // The refused transcript stays failed until a turn reloads it; closing reports that failure again.
      await store.close().catch(() => {});
    }
  });

  it("two processes running turns on one session key never overlap; the transcript is one chain", async () => {
    const { server: pg, llm: fake } = running();
    const url = await pg.createDatabase();
    const turns = 4;
    const sessionKey = "shared";
    const workers = ["a", "b"].map((worker) =>
      startWorker({
        url,
        llmBaseUrl: fake.baseUrlFor("openai"),
        model: "fast-1",
        worker,
        turns,
        sessionKey,
        leaseTtlMs: 10_000,
      }),
    );
    await Promise.all(workers.map((worker) => worker.line("ready")));
    for (const worker of workers) worker.process.stdin.write("go\n");
    const exits = await Promise.all(workers.map((worker) => worker.exited));
    for (const exit of exits) expect(exit.stderr).toBe("");
    expect(exits.map((exit) => exit.code)).toEqual([0, 0]);
    const ended = workers.flatMap((worker) => worker.lines.filter((line) => line.startsWith("turn ")));
    expect(ended).toHaveLength(2 * turns);
    for (const line of ended) expect(line).toMatch(/ ok$/);

    const store = await openPostgresSessionStore({ connectionString: url, maxConnections: 2 });
    try {
      const runs = (
        await store.runs.listForSession({ agentId: "main", sessionKey: "agent:main:shared" }, { limit: 100 })
      )
        .slice()
        .sort((x, y) => x.startedAt - y.startedAt);
      expect(runs).toHaveLength(2 * turns);
      expect(runs.every((run) => run.status === "succeeded")).toBe(true);
      expect(new Set(runs.map((run) => run.runId.split("-")[0]))).toEqual(new Set(["a", "b"]));
      for (const [index, run] of runs.entries()) {
        const next = runs[index + 1];
        if (next === undefined) continue;
        expect(run.endedAt, `${run.runId} ended`).toBeDefined();
        expect(next.startedAt, `${next.runId} starts after ${run.runId} ends`).toBeGreaterThanOrEqual(
          run.endedAt ?? Number.POSITIVE_INFINITY,
        );
      }
      const sessionIds = new Set(runs.map((run) => run.sessionId));
      expect(sessionIds.size).toBe(1);
      const [sessionId = ""] = sessionIds;
      const entries = await storedEntries(store, "main", sessionId);
      expectOneChain(entries);
      // The turns are in the order their runs started (each run's id is its prompt), and each turn's entries
      // are together: whatever it records first (a process's first turn records its system prompt, the
      // workspaces differ), its user message, its answer; then the next turn's.
      expect(entries.map(userText).filter((text) => text !== undefined)).toEqual(
        runs.map((run) => run.runId),
      );
      const ends = entries.flatMap((entry, index) => (roleOf(entry) === "assistant" ? [index] : []));
      expect(ends).toHaveLength(runs.length);
      expect(ends.at(-1)).toBe(entries.length - 1);
      for (const [turn, end] of ends.entries()) {
        const from = turn === 0 ? 0 : (ends[turn - 1] ?? 0) + 1;
        const roles = entries.slice(from, end + 1).map(roleOf);
        expect(roles.slice(-2), `turn ${turn}`).toEqual(["user", "assistant"]);
        expect(
          roles.filter((role) => role === "user"),
          `turn ${turn}`,
        ).toHaveLength(1);
      }
    } finally {
      await store.close();
    }
  });

  it("a holder killed with kill -9 mid-turn is taken over after the lease's TTL", async () => {
    const { server: pg, llm: fake } = running();
    const url = await pg.createDatabase();
    const sessionKey = "crash";
    const common = { url, llmBaseUrl: fake.baseUrlFor("openai"), turns: 1, sessionKey, leaseTtlMs: 1500 };
    const doomed = startWorker({ ...common, model: "slow-1", worker: "dead" });
    await doomed.line("ready");
    const asked = fake.requests.length;
    doomed.process.stdin.write("go\n");
    await doomed.line("started dead-0");
    // Its model call is in flight (the slow model never answers in time): kill the holder mid-turn.
    while (!fake.requests.slice(asked).some((request) => request.model === "slow-1")) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    doomed.process.kill("SIGKILL");
    await doomed.exited;

    const store = await openPostgresSessionStore({ connectionString: url, maxConnections: 2 });
    try {
      const held = await store.leases.current("agent:main:crash");
      expect(held).toMatchObject({ owner: "dead" });
      const sessionId = (await store.runs.get("dead-0"))?.sessionId ?? "";
      const prefix = await storedEntries(store, "main", sessionId);

      const next = startWorker({ ...common, model: "fast-1", worker: "next" });
      await next.line("ready");
      next.process.stdin.write("go\n");
      const exit = await next.exited;
      expect(exit.stderr).toBe("");
      expect(exit.code).toBe(0);
      expect(next.lines).toContain("turn next-0 next-0 ok");

      expect(await store.runs.get("dead-0")).toMatchObject({
        status: "interrupted",
        errorReason: "interrupted",
      });
      const after = await store.leases.current("agent:main:crash");
      expect(after?.token).toBe((held?.token ?? 0) + 1);
      const nextRun = await store.runs.get("next-0");
      expect(nextRun).toMatchObject({ status: "succeeded", sessionId });
      // Not before the dead holder's lease expired (the database's clock in both).
      expect(nextRun?.startedAt ?? 0).toBeGreaterThanOrEqual(held?.expiresAt ?? Number.POSITIVE_INFINITY);

      // What the dead turn stored stays, unchanged, and the new turn continues it as one chain.
      const entries = await storedEntries(store, "main", sessionId);
      expectOneChain(entries);
      expect(entries.slice(0, prefix.length)).toEqual(prefix);
      expect(prefix.every((entry) => roleOf(entry) !== "assistant")).toBe(true);
      const added = entries.slice(prefix.length);
      expect(added.map(userText).filter((text) => text !== undefined)).toEqual(["next-0"]);
      expect(roleOf(added.at(-1) as TranscriptEntry)).toBe("assistant");
    } finally {
      await store.close();
    }
  });
});
