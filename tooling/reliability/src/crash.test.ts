// Crash safety on SQLite: a real child process runs real kernel turns (turn-pipeline's executor, pi, the
// fake LLM over HTTP, the real SQLite store) and is killed with SIGKILL at a random point; after each kill the
// store must be intact and hold exactly what was committed, and the session must take its next turn.
//
// "Committed", precisely: a transcript entry whose `append` returned in the child (the child reports `ok`
// after the call returns; the store's append is synchronous and durable against a process crash when it
// returns: a line of its append journal, replayed by the next opener when the fold never ran, or an SQLite
// commit in WAL mode), and a run whose outcome the child received (`end`: the run record was finished, maybe
// only in the run journal, which the next opener replays first). An entry the
// child announced (`pre`) but was killed before reporting may or may not be stored — the kill may land before
// or after its write — but if stored it is the last one and nothing else is; a batch (`appendMany`, the
// executor's deferred writes) is stored whole or not at all. Runs the child started but did
// not end are absent, interrupted (`running` in the file or the journal, marked on reopen) or finished.
//
// A trial counts once its child was killed mid-run; a child that finished its turns before the kill is
// checked the same way but the loop goes on until TRIALS children were killed (timer kills then land earlier).
// Seeded: the seed is printed; `RELIABILITY_SEED=<seed>` repeats a run's kill points (as far as timing
// allows), `RELIABILITY_CRASH_TRIALS=<n>` changes the trial count (at least 50 in CI).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { type FakeLlm, startFakeLlm } from "@agent-kernel/fake-llm";
import { createKernel } from "@agent-kernel/kernel";
import {
  agentDatabasePath,
  controlPlanePath,
  openSessionStore,
  type SqliteSessionStore,
  type TranscriptEntry,
  TranscriptNotFoundError,
} from "@agent-kernel/session-store";
import { ModelRuntimePool } from "@agent-kernel/turn-pipeline";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileCacheEnv, type LineChild, startLineChild } from "./support/child-process.ts";
import { runSeed, seededRandom } from "./support/random.ts";
import { recordReliability } from "./support/summary.ts";
import { countUserMessages, treeProblems } from "./support/transcript-checks.ts";
import { crashTrialStep, fakeLlmConfig } from "./support/turn-setup.ts";

const CHILD = join(import.meta.dirname, "crash", "child.ts");
const MIN_TRIALS = 50;
const TRIALS = Number(process.env.RELIABILITY_CRASH_TRIALS ?? MIN_TRIALS);
/**
 * Children loading while a trial runs: loading pi and our sources (≈ 2 s of CPU on an idle machine, half of
 * it Node's module loader and TypeScript stripping) is the slow part of a trial, so two load at once.
 */
const PRELOAD = 2;
const TURNS_PER_CHILD = 6;
const SESSION_KEYS = ["alpha", "beta"];
/** Kill points: after the k-th reported line (k ≤ this), or after a delay (ms, < this); both shrink if needed. */
const MAX_KILL_LINE = 60;
const MAX_KILL_DELAY_MS = 800;

let llm: FakeLlm;
let root: string;
let stateDir: string;
let workspaceDir: string;

beforeAll(async () => {
  llm = await startFakeLlm({ scenario: { fallback: crashTrialStep } });
  root = mkdtempSync(join(tmpdir(), "reliability-crash-"));
  stateDir = join(root, "state");
  workspaceDir = join(root, "workspace");
  mkdirSync(workspaceDir);
});

afterAll(async () => {
  await llm.close();
  rmSync(root, { recursive: true, force: true });
});

interface ChildReport {
  /** Per transcript (sessionId): ids whose append returned, in order. */
  readonly committed: Map<string, string[]>;
  /** The write announced but not reported done (at most one: writes are synchronous); a batch is all or nothing. */
  readonly pending: { sessionId: string; entryIds: string[] } | undefined;
  /** runId → sessionKey, for every turn handed to the kernel. */
  readonly started: Map<string, string>;
  /** runId → the outcome's status. */
  readonly ended: Map<string, string>;
  readonly done: boolean;
}

function readReport(lines: readonly string[]): ChildReport {
  const committed = new Map<string, string[]>();
  const started = new Map<string, string>();
  const ended = new Map<string, string>();
  let pending: ChildReport["pending"];
  let done = false;
  for (const line of lines) {
    const [kind = "", first = "", second = ""] = line.split(" ");
    if (kind === "pre") pending = { sessionId: first, entryIds: second.split(",") };
    else if (kind === "ok") {
      const ids = committed.get(first) ?? [];
      ids.push(...second.split(","));
      committed.set(first, ids);
      pending = undefined;
    } else if (kind === "run") started.set(first, second);
    else if (kind === "end") ended.set(first, second);
    else if (kind === "done") done = true;
  }
  return { committed, pending, started, ended, done };
}

const FINAL_RUN_STATUSES = ["succeeded", "failed", "aborted", "timed_out"];
const OUTCOME_TO_RUN: Record<string, string> = {
  ok: "succeeded",
  error: "failed",
  aborted: "aborted",
  timeout: "timed_out",
};

function integrity(path: string): string {
  const db = new Database(path);
  try {
    return (db.pragma("integrity_check", { simple: true }) as string) ?? "no answer";
  } finally {
    db.close();
  }
}

function runningRunIds(): string[] {
  const db = new Database(controlPlanePath(stateDir));
  try {
    return db
      .prepare("SELECT run_id FROM runs WHERE status = 'running' ORDER BY run_id")
      .pluck()
      .all() as string[];
  } finally {
    db.close();
  }
}

/** Every transcript's entries in append order, by sessionId (none when it was never created). */
function storedEntries(
  store: SqliteSessionStore,
  sessionIds: Iterable<string>,
): Map<string, TranscriptEntry[]> {
  const result = new Map<string, TranscriptEntry[]>();
  for (const sessionId of sessionIds) {
    try {
      result.set(sessionId, store.openTranscript("main", sessionId).getEntries());
    } catch (error) {
      // A session whose transcript was never created (killed between the two writes) holds no entries.
      if (!(error instanceof TranscriptNotFoundError)) throw error;
      result.set(sessionId, []);
    }
  }
  return result;
}

describe(`kill -9 during real turns on SQLite (${TRIALS} trials)`, () => {
  it(`runs at least ${MIN_TRIALS} trials`, () => {
    expect(TRIALS, "RELIABILITY_CRASH_TRIALS below the required count").toBeGreaterThanOrEqual(MIN_TRIALS);
  });

  it("keeps the database intact, every transcript a prefix of what was written, and every session usable", async () => {
    const seed = runSeed();
    const random = seededRandom(seed);
    console.log(`crash trials: seed ${seed} (RELIABILITY_SEED=${seed} repeats it), ${TRIALS} trials`);
    const config = fakeLlmConfig({ baseUrl: llm.baseUrlFor("openai"), stateDir, workspaceDir });
    const models = new ModelRuntimePool({ config });
    // Kept between runs (Node checks each entry against the source), so a second run loads children faster.
    const env = compileCacheEnv(join(tmpdir(), "agent-kernel-reliability-compile-cache"));
    const spawnChild = () => startLineChild(CHILD, [stateDir, workspaceDir, llm.baseUrlFor("openai")], env);
    const loading: LineChild[] = Array.from({ length: Math.min(PRELOAD, TRIALS) }, spawnChild);
    // Kill points are drawn below these bounds, which shrink when a child finishes before its kill (fewer
    // lines or less time than expected: the executor may batch its writes, an idle machine runs faster).
    let killWindowMs = MAX_KILL_DELAY_MS;
    let killLineMax = MAX_KILL_LINE;
    /** What each transcript held after the previous trial's checks, by sessionId. */
    let before = new Map<string, string[]>();
    const tally = {
      killed: 0,
      finished: 0,
      byLine: 0,
      byTimer: 0,
      pendingStored: 0,
      pendingLost: 0,
      interrupted: 0,
    };

    // A trial whose child finished its turns before the kill is checked too but does not count: the loop
    // runs until TRIALS children were killed mid-run.
    let trial = 0;
    for (; tally.killed < TRIALS; trial++) {
      expect(trial, "too many children finished before their kill").toBeLessThan(TRIALS * 2);
      const child = loading.shift() ?? spawnChild();
      if (tally.killed + 1 + loading.length < TRIALS) loading.push(spawnChild());
      expect(await child.waitFor((line) => line === "loaded"), (await peekExit(child)) ?? "").toBe(0);
      child.send(`${trial} ${TURNS_PER_CHILD} ${SESSION_KEYS.join(" ")}`);
      const readyAt = await child.waitFor((line) => line === "ready");
      expect(readyAt, `trial ${trial}: the child never opened the store`).toBeGreaterThan(0);
      const readyTime = performance.now();
      // The kill point: after a random reported line, or after a random delay.
      const byLine = random() < 0.5;
      const killLine = 1 + Math.floor(random() * killLineMax);
      const killDelay = Math.floor(random() * killWindowMs);
      if (byLine) await child.waitFor(() => true, readyAt + killLine);
      else await Promise.race([sleep(killDelay), child.exited]);
      child.kill();
      const exit = await child.exited;
      const report = readReport(child.lines);
      const label = `trial ${trial} (seed ${seed}, ${byLine ? `kill after line ${killLine}` : `kill after ${killDelay} ms`})`;
      if (report.done) {
        // It finished before the kill (exit 0), or the kill landed between `done` and its exit.
        expect(exit.code === 0 || exit.signal === "SIGKILL", `${label}: ${exit.stderr}`).toBe(true);
        tally.finished += 1;
        if (byLine)
          killLineMax = Math.max(3, Math.min(killLineMax, Math.floor(0.9 * (child.lines.length - readyAt))));
        else killWindowMs = Math.max(50, Math.min(killWindowMs, 0.9 * (performance.now() - readyTime)));
      } else {
        expect(exit.signal, `${label}: the child died on its own: ${exit.stderr}`).toBe("SIGKILL");
        tally.killed += 1;
        if (byLine) tally.byLine += 1;
        else tally.byTimer += 1;
      }

      // 1. Both databases pass SQLite's integrity check (opened raw, before the store's own open).
      expect(integrity(controlPlanePath(stateDir)), label).toBe("ok");
      // A child killed before its first transcript write never created the agent's database: a valid
      // outcome (nothing was written), as long as it reported nothing committed either.
      const agentDatabase = agentDatabasePath(stateDir, "main");
      if (existsSync(agentDatabase)) expect(integrity(agentDatabase), label).toBe("ok");
      else expect(report.committed.size, `${label}: committed entries but no agent database`).toBe(0);
      const running = runningRunIds();

      // 2. Reopening replays the child's run journal (a run started or finished there, its fold never run,
      //    is not in the file yet: `running` is what the file says), then marks exactly the runs still left
      //    running as interrupted: every run the file had running is interrupted or, when its finish was in the
      //    journal, final; no other run is marked.
      const store = await openSessionStore({ stateDir });
      try {
        const recovered = store.recoveredRuns.map((run) => run.runId).sort();
        const journaledStarts = store.recoveredRunWrites.length > 0 ? [...report.started.keys()] : [];
        for (const runId of recovered)
          expect([...running, ...journaledStarts], `${label}: run ${runId} marked interrupted`).toContain(
            runId,
          );
        tally.interrupted += recovered.length;
        for (const runId of running) {
          const status = (await store.runs.get(runId))?.status;
          if (recovered.includes(runId)) expect(status, `${label}: run ${runId}`).toBe("interrupted");
          else expect(FINAL_RUN_STATUSES, `${label}: run ${runId} (${status})`).toContain(status);
        }
        for (const [runId] of report.started) {
          const run = await store.runs.get(runId);
          const ended = report.ended.get(runId);
          if (ended !== undefined) {
            // The child had the outcome: the run record is final and says the same.
            expect(run?.status, `${label}: run ${runId}`).toBe(OUTCOME_TO_RUN[ended]);
          } else if (run !== undefined) {
            expect([...FINAL_RUN_STATUSES, "interrupted"], `${label}: run ${runId}`).toContain(run.status);
          }
        }

        // 3. Every transcript is exactly what was there before plus what the child committed, in order;
        //    the one append under way at the kill may be there too, as the last entry.
        // Every transcript the store knows of is checked, so a write the child did not report shows up.
        const sessionIds = new Set([
          ...before.keys(),
          ...report.committed.keys(),
          ...(await store.sessions.list("main")).map((session) => session.sessionId),
        ]);
        if (report.pending !== undefined) sessionIds.add(report.pending.sessionId);
        const stored = storedEntries(store, sessionIds);
        for (const sessionId of sessionIds) {
          const entries = stored.get(sessionId) ?? [];
          const ids = entries.map((entry) => entry.id);
          const expected = [...(before.get(sessionId) ?? []), ...(report.committed.get(sessionId) ?? [])];
          const pending = report.pending?.sessionId === sessionId ? report.pending.entryIds : undefined;
          if (pending !== undefined && ids.length === expected.length + pending.length) {
            expect(ids, `${label}: transcript ${sessionId}`).toEqual([...expected, ...pending]);
            tally.pendingStored += 1;
          } else {
            expect(ids, `${label}: transcript ${sessionId}`).toEqual(expected);
            if (pending !== undefined) tally.pendingLost += 1;
          }
          expect(treeProblems(entries), `${label}: transcript ${sessionId}`).toEqual([]);
          if (entries.length > 0) {
            expect(
              store.openTranscript("main", sessionId).getBranch().length,
              `${label}: the leaf's branch of ${sessionId} reads`,
            ).toBeGreaterThan(0);
          }
        }
        // Each prompt the child sent is stored at most once; once exactly when its turn ended.
        const allEntries = [...stored.values()].flat();
        for (const [runId] of report.started) {
          const [, turn = ""] = /turn(\d+)$/.exec(runId) ?? [];
          const count = countUserMessages(allEntries, `[trial ${trial} turn ${turn}]`);
          if (report.ended.get(runId) === "ok") expect(count, `${label}: prompt of ${runId}`).toBe(1);
          else expect(count, `${label}: prompt of ${runId}`).toBeLessThanOrEqual(1);
        }

        // 4. The session the child was in takes its next turn.
        const lastSession = [...report.started.values()].at(-1) ?? SESSION_KEYS[0] ?? "alpha";
        const kernel = createKernel({
          config,
          store,
          models,
          paths: { env: {}, homeDir: root, cwd: workspaceDir },
          executorSettings: { transientRetryDelayMs: 0 },
        });
        const prompt = `[after crash ${trial}] on ${lastSession}`;
        const prepared = await kernel.prepareSession({ sessionKey: lastSession });
        const next = await kernel.executeTurn(prepared, { prompt, timeoutMs: 30_000 });
        expect(next.status, `${label}: next turn: ${next.result.errorMessage ?? ""}`).toBe("ok");
        const after = store.openTranscript("main", prepared.transcript.sessionId).getEntries();
        expect(countUserMessages(after, prompt), label).toBe(1);
        expect(treeProblems(after), label).toEqual([]);
        sessionIds.add(prepared.transcript.sessionId);
        before = new Map(
          [...storedEntries(store, sessionIds)].map(([id, list]) => [id, list.map((e) => e.id)]),
        );
      } finally {
        await store.close();
      }
    }
    for (const child of loading) child.kill();
    await Promise.all(loading.map((child) => child.exited));

    console.log(
      `crash trials: ${trial} run (seed ${seed}): ${tally.killed} killed mid-run (${tally.byLine} after a random line, ` +
        `${tally.byTimer} after a random delay), ${tally.finished} finished before the kill; ` +
        `${tally.interrupted} runs recovered as interrupted; the append under way at the kill: ` +
        `${tally.pendingStored} committed, ${tally.pendingLost} not`,
    );
    expect(tally.killed + tally.finished).toBe(trial);
    expect(tally.killed, "children killed mid-run").toBe(TRIALS);
    // Every committed entry and finished run was checked above; a loss fails the test before this line.
    recordReliability("kill -9 during turns (SQLite)", { trials: trial, faults: tally.killed, lost: 0 });
  }, 600_000);
});

/** The child's stderr if it already exited (for the message of a failed wait). */
async function peekExit(child: LineChild): Promise<string | undefined> {
  const exit = await Promise.race([child.exited, sleep(0).then(() => undefined)]);
  return exit?.stderr;
}
