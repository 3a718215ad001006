// Crash trials on PostgreSQL: a child process appends transcript entries and run records in a loop and is
// killed with kill -9 at a random point, TRIALS times (in two lanes, a schema each). After each kill a store
// is reopened and the database must pass: every entry's parent exists in its session, positions are
// contiguous from 0 per session, no run is left `running` after recovery (all writers are dead), every
// succeeded run has the event written before it finished, the stored transcript extends the previous one by
// a prefix of what the child announced (logged before appending) and holds at least everything it logged as
// flushed, and a next append succeeds. The trial count is printed.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresSessionStore } from "./store.ts";
import { type PostgresTestServer, startPostgresServer } from "./testing/pg-server.ts";

const TRIALS = 20;
/** Trials run in this many independent lanes at once (a schema each), to keep the wall time down. */
const LANES = 2;
const SESSION = "crash-session";
const WRITER = join(import.meta.dirname, "children", "crash-writer.ts");

let server: PostgresTestServer | undefined;
let connectionString = "";
const folder = mkdtempSync(join(tmpdir(), "agent-kernel-pg-crash-"));

beforeAll(async () => {
  server = await startPostgresServer();
  connectionString = await server.createDatabase();
});

afterAll(() => {
  server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** Runs the writer until it prints "ready", lets it write for `runMs` more, then kills it with kill -9. */
async function runAndKill(schema: string, logFile: string, runMs: number): Promise<{ stderr: string }> {
  const child = spawn(
    process.execPath,
    ["--conditions=@agent-kernel/source", WRITER, connectionString, schema, logFile],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  await new Promise<void>((resolve) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve();
    });
    child.on("close", () => resolve());
  });
  await sleep(runMs);
  child.kill("SIGKILL");
  await exited;
  return { stderr };
}

function readLog(logFile: string): { intents: string[]; flushed: string[] } {
  const intents: string[] = [];
  const flushed: string[] = [];
  for (const line of readFileSync(logFile, "utf8").split("\n")) {
    const [kind, ...ids] = line.split(" ");
    if (kind === "intent") intents.push(...ids);
    if (kind === "flushed") flushed.push(...ids);
  }
  return { intents, flushed };
}

interface Counts {
  trials: number;
  entries: number;
  flushedAtKill: number;
  beyondLastFlushLog: number;
  interruptedRuns: number;
}

/** `trials` kill -9 trials one after another in `schema`, checking the database after each. */
async function runLane(schema: string, trials: number, counts: Counts): Promise<void> {
  let before: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    const logFile = join(folder, `${schema}-trial-${trial}.log`);
    writeFileSync(logFile, "");
    const { stderr } = await runAndKill(schema, logFile, Math.floor(Math.random() * 80));
    expect(stderr).toBe("");
    const label = `${schema} trial ${trial}`;
    const store = await openPostgresSessionStore({ connectionString, schema, maxConnections: 2 });
    try {
      counts.interruptedRuns += store.recoveredRuns.length;
      const orphans = await sql<{ id: string }>`
        SELECT e.id FROM transcript_entries e WHERE e.parent_id IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM transcript_entries p
          WHERE p.agent_id = e.agent_id AND p.session_id = e.session_id AND p.id = e.parent_id)`.execute(
        store.db,
      );
      expect(orphans.rows, `${label}: entries whose parent is missing`).toEqual([]);
      const gaps = await sql<{ session_id: string }>`
        SELECT session_id FROM transcript_entries GROUP BY agent_id, session_id
        HAVING MIN(position) <> 0 OR MAX(position) <> COUNT(*) - 1`.execute(store.db);
      expect(gaps.rows, `${label}: sessions with non-contiguous positions`).toEqual([]);
      const running = await sql<{ run_id: string }>`SELECT run_id FROM runs WHERE status = 'running'`.execute(
        store.db,
      );
      expect(running.rows, `${label}: runs still running after recovery`).toEqual([]);
      // A run is finished only after its event was written: a succeeded run without it lost a write.
      const eventless = await sql<{ run_id: string }>`
        SELECT r.run_id FROM runs r WHERE r.status = 'succeeded'
        AND NOT EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = r.run_id)`.execute(store.db);
      expect(eventless.rows, `${label}: succeeded runs without their event`).toEqual([]);

      await store.loadTranscript("main", SESSION);
      const transcript = store.openTranscript("main", SESSION);
      const stored = transcript.getEntries().map((entry) => entry.id);
      const { intents, flushed } = readLog(logFile);
      expect(stored.slice(0, before.length), `${label}: earlier entries kept`).toEqual(before);
      const added = stored.slice(before.length);
      expect(added, `${label}: stored entries are a prefix of the announced ones`).toEqual(
        intents.slice(0, added.length),
      );
      expect(added.slice(0, flushed.length), `${label}: every entry logged as flushed is stored`).toEqual(
        flushed,
      );
      expect(transcript.getBranch().map((entry) => entry.id)).toEqual(stored);
      counts.entries += added.length;
      counts.flushedAtKill += flushed.length;
      counts.beyondLastFlushLog += added.length - flushed.length;

      transcript.append({
        type: "custom",
        id: `check-${trial}`,
        parentId: transcript.getLeafId(),
        timestamp: "t",
      });
      await transcript.flush();
      before = [...stored, `check-${trial}`];
    } finally {
      await store.close();
    }
    counts.trials++;
  }
}

describe("crash trials on PostgreSQL", () => {
  it(`keeps the database consistent across ${TRIALS} kill -9 of a writer`, async () => {
    const counts: Counts = {
      trials: 0,
      entries: 0,
      flushedAtKill: 0,
      beyondLastFlushLog: 0,
      interruptedRuns: 0,
    };
    await Promise.all(
      Array.from({ length: LANES }, (_unused, lane) => runLane(`crash_${lane}`, TRIALS / LANES, counts)),
    );
    console.log(`PostgreSQL crash trials: ${JSON.stringify(counts)}`);
    expect(counts.trials).toBe(TRIALS);
    expect(counts.entries).toBeGreaterThan(0);
    // Generous: each trial starts a Node process (≈ 0.7 s of CPU), and a shared 2-core machine may be busy.
  }, 300_000);
});
