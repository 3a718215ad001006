// Two real processes write to the same SQLite session at once; a crashed process's run is recovered; a process
// killed mid-write (kill -9, with the background WAL checkpoint on) loses nothing it had committed.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { controlPlanePath } from "./state-dir.ts";
import { openSessionStore } from "./store.ts";
import type { TranscriptEntry } from "./transcript.ts";

const CHILD_DIR = join(import.meta.dirname, "..", "test", "child");
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "agent-kernel-2p-"));
  dirs.push(dir);
  return dir;
}

interface Child {
  readonly ready: Promise<void>;
  readonly exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
  go(): void;
  /** Resolves once the child's stdout holds `lines` complete lines. */
  printed(lines: number): Promise<void>;
  kill(): void;
}

function startChild(script: string, args: readonly string[]): Child {
  const child = spawn(
    process.execPath,
    ["--conditions=@agent-kernel/source", join(CHILD_DIR, script), ...args],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  const waiters: { lines: number; resolve: () => void }[] = [];
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes("ready\n")) markReady();
    const lines = stdout.split("\n").length - 1;
    for (const waiter of waiters.filter((w) => w.lines <= lines)) waiter.resolve();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on("close", (code) => {
      markReady();
      for (const waiter of waiters) waiter.resolve();
      resolve({ code, stdout, stderr });
    });
  });
  return {
    ready,
    exited,
    go: () => child.stdin.end("go\n"),
    printed: (lines) => new Promise<void>((resolve) => waiters.push({ lines, resolve })),
    kill: () => child.kill("SIGKILL"),
  };
}

async function runTogether(dir: string, sessionId: string, count: number, mode: string) {
  const workers = ["a", "b"].map((worker) =>
    startChild("append-worker.ts", [dir, sessionId, worker, String(count), mode]),
  );
  await Promise.all(workers.map((worker) => worker.ready));
  for (const worker of workers) worker.go();
  const results = await Promise.all(workers.map((worker) => worker.exited));
  for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
}

function workerOrder(entries: readonly TranscriptEntry[], worker: string): number[] {
  return entries
    .filter((entry) => entry.id.startsWith(`${worker}-`))
    .map((entry) => (entry.data as { index: number }).index);
}

describe("two processes appending to one session", () => {
  const COUNT = 800;

  it("appendAtLeaf from both keeps one consistent chain with every entry", async () => {
    const dir = stateDir();
    await runTogether(dir, "shared", COUNT, "at-leaf");
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "shared");
    const entries = transcript.getEntries();
    expect(entries).toHaveLength(2 * COUNT);
    // One chain: each entry's parent is the entry appended just before it, whichever process wrote it.
    expect(entries.map((entry) => entry.parentId)).toEqual([
      null,
      ...entries.slice(0, -1).map((entry) => entry.id),
    ]);
    expect(transcript.getLeafId()).toBe(entries.at(-1)?.id);
    expect(transcript.getBranch()).toEqual(entries);
    const interleavings = entries.filter(
      (entry, index) => index > 0 && entry.id[0] !== entries[index - 1]?.id[0],
    );
    expect(interleavings.length).toBeGreaterThan(0);
    for (const worker of ["a", "b"]) {
      expect(workerOrder(entries, worker)).toEqual(Array.from({ length: COUNT }, (_unused, index) => index));
    }
    await store.close();
  });

  it("explicit parents from both give two intact chains and no lost entry", async () => {
    const dir = stateDir();
    await runTogether(dir, "chains", COUNT, "own-chain");
    const store = await openSessionStore({ stateDir: dir });
    const transcript = store.openTranscript("main", "chains");
    expect(transcript.count()).toBe(2 * COUNT);
    expect(
      transcript
        .getChildren(null)
        .map((entry) => entry.id)
        .sort(),
    ).toEqual(["a-0", "b-0"]);
    for (const worker of ["a", "b"]) {
      const branch = transcript.getBranch(`${worker}-${COUNT - 1}`);
      expect(branch.map((entry) => entry.id)).toEqual(
        Array.from({ length: COUNT }, (_unused, i) => `${worker}-${i}`),
      );
    }
    await store.close();
  });
});

describe("a crashed process", () => {
  it("leaves its run running; the next open marks it interrupted", async () => {
    const dir = stateDir();
    const crash = startChild("crash-mid-run.ts", [dir, "crashed-run"]);
    expect((await crash.exited).code).toBe(0);
    const store = await openSessionStore({ stateDir: dir });
    expect(store.recoveredRuns.map((run) => run.runId)).toEqual(["crashed-run"]);
    expect(await store.runs.get("crashed-run")).toMatchObject({
      status: "interrupted",
      errorReason: "interrupted",
      entryPoint: "cron",
    });
    await store.close();
  });
});

describe("a process killed with kill -9 while writing", () => {
  it("loses no committed session, transcript entry or auth update (background WAL checkpoint)", async () => {
    const dir = stateDir();
    const writer = startChild("write-until-killed.ts", [dir]);
    await writer.printed(600);
    writer.kill();
    const { stdout, stderr } = await writer.exited;
    const steps = stdout.split("\n").slice(0, -1).map(Number);
    expect(steps.length, stderr).toBeGreaterThanOrEqual(600);
    const last = steps.at(-1) ?? -1;
    // The commits since the last checkpoint exist only in the WAL: the next open replays them.
    expect(statSync(`${controlPlanePath(dir)}-wal`).size).toBeGreaterThan(0);
    const store = await openSessionStore({ stateDir: dir });
    try {
      const sessions = await store.sessions.list("main");
      const keys = new Set(sessions.map((session) => session.sessionKey));
      for (let step = 0; step <= last; step++) expect(keys.has(`key-${step}`), `key-${step}`).toBe(true);
      const branch = store.openTranscript("main", "s1").getBranch();
      expect(branch.slice(0, last + 1).map((entry) => entry.id)).toEqual(
        Array.from({ length: last + 1 }, (_unused, step) => `entry-${step}`),
      );
      expect((await store.auth.get("main", "faux:me"))?.errorCount).toBeGreaterThanOrEqual(last + 1);
    } finally {
      await store.close();
    }
  });
});
