// Crash safety of the journals (a turn's writes with no SQLite commit on its path): a child writes a turn's
// durable writes — run start, the transcript flush (`appendMany`), run finish with its events — through the
// real SQLite store, whose journals make each durable when it returns and fold it into SQLite in a later
// event-loop turn, and kills itself (SIGKILL) right after a seeded random write: between that write's journal
// line and its fold, with earlier writes folded or not. The next opener replays the journals; after it:
// nothing the child saw return is lost, nothing is stored twice, every run it finished is final with its two
// events, the run it started and had not finished is `interrupted`, the transcript is the chain of every
// flushed entry in order; a second opener changes nothing; `PRAGMA integrity_check` is ok on both files.
// `RELIABILITY_SEED=<seed>` repeats a run; `RELIABILITY_JOURNAL_TRIALS=<n>` changes the trial count.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentDatabasePath, controlPlanePath, openSessionStore } from "@agent-kernel/session-store";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { startLineChild } from "./support/child-process.ts";
import { randomInt, runSeed, seededRandom } from "./support/random.ts";
import { recordReliability } from "./support/summary.ts";

const CHILD = join(import.meta.dirname, "crash", "journal-child.ts");
const TRIALS = Number(process.env.RELIABILITY_JOURNAL_TRIALS ?? 20);
/** Kill after one of the first this many writes (three per turn). */
const MAX_KILL_WRITE = 40;

const root = mkdtempSync(join(tmpdir(), "journal-crash-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface StoredState {
  readonly runs: { run_id: string; status: string; events: number }[];
  readonly entryIds: string[];
  readonly integrity: string[];
}

function readState(stateDir: string): StoredState {
  const control = new Database(controlPlanePath(stateDir), { readonly: true });
  const agent = new Database(agentDatabasePath(stateDir, "main"), { readonly: true });
  try {
    return {
      runs: control
        .prepare(
          "SELECT run_id, status, (SELECT COUNT(*) FROM run_events e WHERE e.run_id = r.run_id) AS events " +
            "FROM runs r ORDER BY started_at",
        )
        .all() as StoredState["runs"],
      entryIds: agent.prepare("SELECT id FROM transcript_entries ORDER BY seq").pluck().all() as string[],
      integrity: [
        control.prepare("PRAGMA integrity_check").pluck().get() as string,
        agent.prepare("PRAGMA integrity_check").pluck().get() as string,
      ],
    };
  } finally {
    control.close();
    agent.close();
  }
}

describe(`kill -9 between a journal append and its fold (${TRIALS} trials)`, () => {
  it("loses nothing the child saw return and doubles nothing once the next opener replays the journals", async () => {
    const seed = runSeed();
    console.log(`journal crash trials: seed ${seed} (RELIABILITY_SEED=${seed} repeats it)`);
    const random = seededRandom(seed);
    let replayedLines = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const stateDir = join(root, `trial-${trial}`);
      const killAfter = randomInt(random, 1, MAX_KILL_WRITE);
      const child = startLineChild(CHILD, [stateDir, String(trial), String(killAfter), String(seed + trial)]);
      const exit = await child.exited;
      const context = `trial ${trial} (kill after write ${killAfter}): ${exit.stderr}`;
      expect(exit.signal, context).toBe("SIGKILL");
      const reported = child.lines.filter((line) => line.startsWith("ok "));
      expect(reported, context).toHaveLength(killAfter);
      const started = reported.filter((line) => line.startsWith("ok start ")).map((line) => line.slice(9));
      const finished = new Set(
        reported.filter((line) => line.startsWith("ok finish ")).map((line) => line.slice(10)),
      );
      const flushed = reported
        .filter((line) => line.startsWith("ok flush "))
        .flatMap((line) => line.slice(9).split(","));

      // The next opener: replays the run journal when it opens, the append journal with the agent database.
      const store = await openSessionStore({ stateDir });
      replayedLines += store.recoveredRunWrites.reduce((sum, replay) => sum + replay.applied, 0);
      expect(
        store.recoveredRunWrites.flatMap((replay) => replay.problems),
        context,
      ).toEqual([]);
      const leaf = store.openTranscript("main", "journal-session").getLeafId();
      expect(
        store.recoveredAppends.flatMap((replay) => replay.problems),
        context,
      ).toEqual([]);
      await store.close();

      const state = readState(stateDir);
      expect(state.integrity, context).toEqual(["ok", "ok"]);
      // Every run exactly once; finished ones final with both events, the one under way interrupted.
      expect(
        state.runs.map((run) => run.run_id),
        context,
      ).toEqual(started);
      for (const run of state.runs) {
        if (finished.has(run.run_id)) expect(run, context).toMatchObject({ status: "succeeded", events: 2 });
        else expect(run, context).toMatchObject({ status: "interrupted", events: 0 });
      }
      // The transcript: every flushed entry once, in order, and the leaf on the last one.
      expect(state.entryIds, context).toEqual(flushed);
      expect(leaf, context).toBe(flushed.at(-1) ?? null);

      // A second opener finds nothing to replay and changes nothing.
      const again = await openSessionStore({ stateDir });
      expect(again.recoveredRunWrites, context).toEqual([]);
      again.openTranscript("main", "journal-session");
      expect(again.recoveredAppends, context).toEqual([]);
      await again.close();
      expect(readState(stateDir), context).toEqual(state);
    }
    console.log(`journal crash trials: ${TRIALS} kills, ${replayedLines} run journal lines replayed`);
    recordReliability("kill -9 between a journal append and its fold (SQLite)", {
      trials: TRIALS,
      faults: TRIALS,
      lost: 0,
    });
  }, 600_000);
});
