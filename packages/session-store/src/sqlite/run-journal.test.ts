// The run journal (run-journal.ts): run writes durable as journal lines, folded by a group commit after the
// event-loop turn; read through by another process before it folds (two real processes); replayed once
// after a kill -9 between the append and its fold; refusals reported; fencing kept.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { IdempotencyConflictError } from "../errors.ts";
import { LeaseLostError } from "../leases.ts";
import { agentDatabasePath, controlPlanePath } from "../state-dir.ts";
import { openSessionStore, type SqliteSessionStore } from "../store.ts";
import { listRunJournals } from "./run-journal.ts";

const CHILD = join(import.meta.dirname, "..", "..", "test", "child", "runs-then-hang.ts");
const dirs: string[] = [];
const stores: SqliteSessionStore[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "run-journal-"));
  dirs.push(dir);
  return dir;
}

async function open(dir: string): Promise<SqliteSessionStore> {
  const store = await openSessionStore({ stateDir: dir });
  stores.push(store);
  return store;
}

const ref = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" };
const nextImmediate = () => new Promise((resolve) => setImmediate(resolve));

/** What another connection (another process) finds in the control plane, without any journal. */
function storedRun(dir: string, runId: string): { status: string; model: string | null } | undefined {
  const db = new Database(controlPlanePath(dir), { readonly: true });
  try {
    return db.prepare("SELECT status, model FROM runs WHERE run_id = ?").get(runId) as
      | { status: string; model: string | null }
      | undefined;
  } finally {
    db.close();
  }
}

function storedEvents(dir: string, runId: string): number[] {
  const db = new Database(controlPlanePath(dir), { readonly: true });
  try {
    return db
      .prepare("SELECT seq FROM run_events WHERE run_id = ? ORDER BY seq")
      .pluck()
      .all(runId) as number[];
  } finally {
    db.close();
  }
}

function storedEntryIds(dir: string): string[] {
  const db = new Database(agentDatabasePath(dir, "main"), { readonly: true });
  try {
    return db.prepare("SELECT id FROM transcript_entries ORDER BY seq").pluck().all() as string[];
  } finally {
    db.close();
  }
}

function startChild(dir: string, runId: string, ending: "hang" | "crash") {
  const child = spawn(process.execPath, ["--conditions=@agent-kernel/source", CHILD, dir, runId, ending], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const journaled = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("journaled\n")) resolve();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", () => {
      if (!stdout.includes("journaled\n")) reject(new Error(`the child ended early: ${stderr}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  return { journaled, exited, kill: () => child.kill("SIGKILL") };
}

describe("the run journal", () => {
  it("makes start, events and finish durable as journal lines and stores them in the group commit after the event-loop turn", async () => {
    const dir = stateDir();
    const store = await open(dir);
    const started = await store.runs.start({ ...ref, runId: "r1", entryPoint: "agent", startedAt: 1000 });
    const updated = await store.runs.update("r1", { fallbackChain: [{ provider: "p", model: "m0" }] });
    const finished = await store.runs.finish("r1", {
      status: "succeeded",
      endedAt: 2000,
      model: "m1",
      events: [{ seq: 1, ts: 1001, stream: "lifecycle", data: { phase: "end" } }],
    });
    expect(started).toMatchObject({ runId: "r1", status: "running" });
    expect(updated.fallbackChain).toEqual([{ provider: "p", model: "m0" }]);
    // Three lines in this store's run journal; SQLite has nothing yet for another connection.
    const [journal] = listRunJournals(controlPlanePath(dir));
    expect(
      readFileSync(journal?.path ?? "", "utf8")
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { o: string }).o),
    ).toEqual(["start", "update", "finish"]);
    expect(storedRun(dir, "r1")).toBeUndefined();
    await nextImmediate();
    expect(storedRun(dir, "r1")).toEqual({ status: "succeeded", model: "m1" });
    expect(storedEvents(dir, "r1")).toEqual([1]);
    // What each call returned is what SQLite holds now.
    expect(await store.runs.get("r1")).toEqual(finished);
    expect(finished.fallbackChain).toEqual([{ provider: "p", model: "m0" }]);
    // Folded: the file is empty, and removed when the store closes.
    expect(readFileSync(journal?.path ?? "", "utf8")).toBe("");
    await store.close();
    expect(existsSync(journal?.path ?? "")).toBe(false);
  });

  it("answers every read of this process from the journaled writes (fold before read)", async () => {
    const dir = stateDir();
    const store = await open(dir);
    await store.runs.start({ ...ref, runId: "r1", entryPoint: "agent" });
    await store.runs.appendEvents("r1", [{ seq: 1, ts: 1, stream: "lifecycle", data: {} }]);
    expect((await store.runs.listForSession(ref)).map((run) => run.runId)).toEqual(["r1"]);
    expect(await store.runs.events("r1")).toEqual([{ seq: 1, ts: 1, stream: "lifecycle", data: {} }]);
  });

  it("keeps appendEvents' rules on journaled events: the same event again is a no-op, another with its seq throws", async () => {
    const dir = stateDir();
    const store = await open(dir);
    await store.runs.start({ ...ref, runId: "r1", entryPoint: "agent" });
    const event = { seq: 1, ts: 1, stream: "lifecycle", data: { a: 1 } };
    await store.runs.appendEvents("r1", [event]);
    await store.runs.appendEvents("r1", [event]);
    await expect(store.runs.appendEvents("r1", [{ ...event, data: { a: 2 } }])).rejects.toThrow(
      IdempotencyConflictError,
    );
    expect(await store.runs.events("r1")).toEqual([event]);
  });

  it("reports a journaled finish that another process's write refused at the fold, once, on the next write", async () => {
    const dir = stateDir();
    const store = await open(dir);
    await store.runs.start({ ...ref, runId: "r1", entryPoint: "agent" });
    await store.flush();
    // Journaled (the run is this store's and running as far as it knows); another process ends it first.
    await store.runs.finish("r1", { status: "succeeded" });
    const other = new Database(controlPlanePath(dir));
    other.prepare("UPDATE runs SET status = 'aborted' WHERE run_id = 'r1'").run();
    other.close();
    await nextImmediate();
    await expect(store.runs.start({ ...ref, runId: "r2", entryPoint: "agent" })).rejects.toThrow(
      /already ended as aborted; its journaled finish as succeeded was not stored/,
    );
    // Reported once: the next write goes on.
    await expect(store.runs.start({ ...ref, runId: "r2", entryPoint: "agent" })).resolves.toMatchObject({
      runId: "r2",
    });
    expect(storedRun(dir, "r1")?.status).toBe("aborted");
  });

  it("refuses a fenced journaled write of a holder that lost its lease", async () => {
    const dir = stateDir();
    const store = await open(dir);
    const first = await store.leases.acquire("agent:main:main", "one", 50);
    expect(first).toBeDefined();
    if (first === undefined) return;
    const runs = store.fencedRuns(first);
    await runs.start({ ...ref, runId: "r1", entryPoint: "agent" });
    await new Promise((resolve) => setTimeout(resolve, 120));
    const second = await store.leases.acquire("agent:main:main", "two", 30_000);
    expect(second).toBeDefined();
    await expect(runs.finish("r1", { status: "succeeded" })).rejects.toThrow(LeaseLostError);
    await store.flush();
    expect(storedRun(dir, "r1")?.status).toBe("running");
  });

  it("another process reads a run its live owner journaled and has not folded (read-through)", async () => {
    const dir = stateDir();
    (await open(dir)).close();
    const child = startChild(dir, "r1", "hang");
    try {
      await child.journaled;
      // The child blocks its thread: its writes are only in its journals.
      expect(storedRun(dir, "r1")).toBeUndefined();
      const reader = await open(dir);
      const run = await reader.runs.get("r1");
      expect(run).toMatchObject({ runId: "r1", status: "succeeded", model: "m1", endedAt: 2000 });
      expect((await reader.runs.events("r1")).map((event) => event.seq)).toEqual([1, 2]);
      expect((await reader.runs.listForSession(ref)).map((listed) => listed.status)).toEqual(["succeeded"]);
      // Applying it again (the next read) stores nothing new.
      await reader.runs.get("r1");
      expect(storedEvents(dir, "r1")).toEqual([1, 2]);
      // The owner is alive: its journal is left for it.
      expect(listRunJournals(controlPlanePath(dir))).toHaveLength(1);
    } finally {
      child.kill();
      await child.exited;
    }
  }, 60_000);

  it("a reader applying a live owner's journal first changes nothing the owner's own fold then stores", async () => {
    const dir = stateDir();
    const owner = await open(dir);
    const reader = await open(dir);
    await owner.runs.start({ ...ref, runId: "r1", entryPoint: "agent", startedAt: 1000 });
    await owner.runs.update("r1", { model: "m0", fallbackChain: [{ provider: "p", model: "m0" }] });
    await owner.runs.finish("r1", {
      status: "failed",
      endedAt: 2000,
      model: "m1",
      fallbackChain: [
        { provider: "p", model: "m0" },
        { provider: "p", model: "m1" },
      ],
      errorReason: "provider",
      events: [{ seq: 1, ts: 1, stream: "lifecycle", data: {} }],
    });
    // The reader applies the owner's three lines before the owner's group commit runs...
    const seen = await reader.runs.get("r1");
    expect(seen).toMatchObject({ status: "failed", model: "m1", errorReason: "provider" });
    // ...which then applies them again: no refusal, the update does not undo the finish, nothing doubled.
    await nextImmediate();
    await owner.flush();
    expect(await owner.runs.get("r1")).toEqual(seen);
    expect(storedEvents(dir, "r1")).toEqual([1]);
  });

  it("after a kill -9 between the journal lines and their fold, the next opener replays them once: the run is final, not interrupted", async () => {
    const dir = stateDir();
    (await open(dir)).close();
    const child = startChild(dir, "r1", "crash");
    await child.journaled.catch(() => {});
    await child.exited;
    expect(storedRun(dir, "r1")).toBeUndefined();
    const store = await open(dir);
    expect(store.recoveredRuns).toEqual([]);
    expect(store.recoveredRunWrites).toHaveLength(1);
    expect(store.recoveredRunWrites[0]).toMatchObject({ applied: 2, problems: [] });
    expect(await store.runs.get("r1")).toMatchObject({ status: "succeeded", model: "m1" });
    expect(listRunJournals(controlPlanePath(dir))).toEqual([]);
    // The transcript batch (appendMany) was journaled too, and replayed with the agent database.
    store.openTranscript("main", "s1");
    expect(storedEntryIds(dir)).toEqual(["first", "r1-user", "r1-answer"]);
    await store.close();
    const again = await open(dir);
    expect(again.recoveredRunWrites).toEqual([]);
    expect(storedEvents(dir, "r1")).toEqual([1, 2]);
    again.openTranscript("main", "s1");
    expect(storedEntryIds(dir)).toEqual(["first", "r1-user", "r1-answer"]);
  }, 60_000);
});
