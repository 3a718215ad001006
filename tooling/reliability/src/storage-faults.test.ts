// Storage faults: a kernel over a real SQLite store, turns against tooling/fake-llm over HTTP, and the store's
// files failing under it — the agent's disk full mid-turn (a tmpfs over its folder, a reply too large for
// what is left), the whole state dir's disk full, a read-only agent database or control plane (immutable),
// a transcript row damaged behind the store's back, a middle entry deleted, an agent database emptied. Each
// trial builds a history, injects its fault, runs a turn, clears the fault and checks:
// - the faulted turn never reports success for what was not stored: it ends `error` with reason `storage`
//   and a message naming a file of the state dir (its run stored `failed`), or the kernel throws that
//   failure when the run itself cannot be recorded — or, for a deleted entry (which no turn can see), the
//   doctor names the session, the entry and the missing parent;
// - nothing committed before the fault is lost (every stored entry still there, byte for byte, except the
//   one damaged or deleted on purpose, which stays in place or is reported), the session takes its next
//   turn, and an emptied database is left as it was (never turned into a new, empty history).
// Faults that cannot be made here (not root, no tmpfs, no chattr) are skipped and not counted.
import { mkdirSync, mkdtempSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KernelConfig } from "@agent-kernel/config";
import { type FakeLlm, type RecordedRequest, reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { createKernel, runDoctor, type TurnOutcome } from "@agent-kernel/kernel";
import {
  agentDatabasePath,
  clearTranscriptCache,
  controlPlanePath,
  openSessionStore,
  type SqliteSessionStore,
  toStorageFailure,
} from "@agent-kernel/session-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomInt, runSeed, seededRandom } from "./support/random.ts";
import { fillLeaving, makeReadOnly, mountSmallDisk, withDatabase } from "./support/storage-faults.ts";
import { recordReliability } from "./support/summary.ts";
import { fakeLlmConfig, lastUserText } from "./support/turn-setup.ts";

const FAULTS = [
  "agent disk full",
  "state disk full",
  "agent database read-only",
  "control plane read-only",
  "damaged row",
  "deleted entry",
  "empty agent database",
] as const;
type Fault = (typeof FAULTS)[number];
/** Trials per fault: the random ones (sizes, which row) get more. */
const TRIALS_PER_FAULT: Record<Fault, number> = {
  "agent disk full": 4,
  "state disk full": 3,
  "agent database read-only": 2,
  "control plane read-only": 2,
  "damaged row": 4,
  "deleted entry": 2,
  "empty agent database": 2,
};

let llm: FakeLlm;
let root: string;
/** Prompts answered with a long reply: `[long <chars>]`. */
function answer(request: RecordedRequest): ReturnType<typeof reply> {
  const prompt = lastUserText(request);
  const long = /\[long (\d+)\]/.exec(prompt);
  if (long !== null)
    return reply(`${"Long answer. ".repeat(100)}\n`, { repeat: Math.ceil(Number(long[1]) / 1301) });
  return reply(`Answer to ${prompt}`);
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "reliability-storage-"));
  llm = await startFakeLlm({ scenario: { fallback: answer } });
});

afterAll(async () => {
  await llm.close();
  rmSync(root, { recursive: true, force: true });
});

interface Trial {
  readonly stateDir: string;
  readonly config: KernelConfig;
  readonly paths: { env: Record<string, string>; homeDir: string; cwd: string };
}

/** One turn of `agent:main:main` through a kernel over a store opened for it (as a new process would). */
async function turn(
  trial: Trial,
  prompt: string,
): Promise<{ outcome?: TurnOutcome; thrown?: unknown; store?: SqliteSessionStore }> {
  clearTranscriptCache();
  let store: SqliteSessionStore;
  try {
    store = await openSessionStore({ stateDir: trial.stateDir });
  } catch (error) {
    return { thrown: error };
  }
  try {
    const kernel = createKernel({ config: trial.config, store, paths: trial.paths });
    const prepared = await kernel.prepareSession({ sessionKey: "main" });
    return { outcome: await kernel.executeTurn(prepared, { prompt, timeoutMs: 60_000 }), store };
  } catch (error) {
    return { thrown: error, store };
  }
}

/** Every stored row of the session's agent database: id → body, read behind the store's back. */
function storedRows(stateDir: string): Map<string, string> {
  return withDatabase(agentDatabasePath(stateDir, "main"), (db) => {
    const rows = db.prepare("SELECT id, body FROM transcript_entries").all() as {
      id: string;
      body: string;
    }[];
    return new Map(rows.map((row) => [row.id, row.body]));
  });
}

describe("storage faults under real turns", () => {
  it("never reports success for what was not stored, names the file, and loses nothing committed", async () => {
    const seed = runSeed();
    const random = seededRandom(seed);
    console.log(`storage faults: seed ${seed} (RELIABILITY_SEED=${seed} repeats it)`);
    let trials = 0;
    const skipped = new Map<Fault, string>();
    const outcomes = new Map<string, number>();
    for (const fault of FAULTS) {
      for (let index = 0; index < TRIALS_PER_FAULT[fault]; index++) {
        const label = `${fault} #${index + 1}`;
        const dir = mkdtempSync(join(root, "trial-"));
        const stateDir = join(dir, "state");
        mkdirSync(join(dir, "workspace"));
        const trial: Trial = {
          stateDir,
          config: fakeLlmConfig({
            baseUrl: llm.baseUrlFor("openai"),
            stateDir,
            workspaceDir: join(dir, "workspace"),
          }),
          paths: { env: {}, homeDir: dir, cwd: dir },
        };
        // What clears the fault (space freed, writes allowed again), and what undoes the trial's set-up.
        const clears: (() => void)[] = [];
        const teardowns: (() => void)[] = [];
        try {
          // A history: two answered turns.
          for (const prompt of [`${label}: first`, `${label}: second`]) {
            const { outcome, store } = await turn(trial, prompt);
            await store?.close();
            expect(outcome?.status, `${label}: history`).toBe("ok");
          }
          const before = storedRows(stateDir);
          const agentDb = agentDatabasePath(stateDir, "main");
          const ids = [...before.keys()];

          // The fault.
          let prompt = `${label}: third`;
          let spared: string | undefined;
          const skip = (why: string) => skipped.set(fault, why);
          if (fault === "agent disk full" || fault === "state disk full") {
            const folder = fault === "agent disk full" ? join(stateDir, "agents", "main") : stateDir;
            const disk = mountSmallDisk(folder, 4096);
            if (typeof disk === "string") {
              skip(disk);
              continue;
            }
            teardowns.push(() => disk.unmount());
            const filler = fillLeaving(folder, randomInt(random, 40, 120));
            clears.push(() => unlinkSync(filler));
            prompt = `${label}: [long ${randomInt(random, 150_000, 190_000)}]`;
          } else if (fault === "agent database read-only" || fault === "control plane read-only") {
            const file = fault === "agent database read-only" ? agentDb : controlPlanePath(stateDir);
            const readOnly = makeReadOnly(file);
            if (typeof readOnly === "string") {
              skip(readOnly);
              continue;
            }
            clears.push(() => readOnly.undo());
          } else if (fault === "damaged row" || fault === "deleted entry") {
            // Any entry but the first (a damaged root is covered by session-store's own tests).
            spared = ids[randomInt(random, 1, ids.length - 1)];
            withDatabase(agentDb, (db) =>
              fault === "damaged row"
                ? db.prepare("UPDATE transcript_entries SET body = ? WHERE id = ?").run('{"torn', spared)
                : db.prepare("DELETE FROM transcript_entries WHERE id = ?").run(spared),
            );
          } else {
            writeFileSync(agentDb, "");
          }

          // The faulted turn.
          const faulted = await turn(trial, prompt);
          const failure =
            faulted.thrown === undefined
              ? undefined
              : toStorageFailure(faulted.thrown, controlPlanePath(stateDir));
          if (faulted.thrown !== undefined) {
            expect(failure, `${label}: thrown ${String(faulted.thrown)}`).toBeDefined();
            expect(failure?.path.startsWith(stateDir), `${label}: ${failure?.message}`).toBe(true);
            outcomes.set(
              `${fault}: thrown ${failure?.kind}`,
              (outcomes.get(`${fault}: thrown ${failure?.kind}`) ?? 0) + 1,
            );
          } else if (fault === "deleted entry") {
            // No turn can see a deleted entry (the branch just ends there): the doctor must.
            const report = await runDoctor(faulted.store as SqliteSessionStore, trial.config);
            const broken = report.problems.find((problem) =>
              problem.problem.includes("the active branch is broken"),
            );
            const child = [...before.entries()].find(([, body]) =>
              body.includes(`"parentId":"${spared}"`),
            )?.[0];
            if (child !== undefined) {
              expect(broken?.problem, `${label}`).toContain(
                `entry ${child} names parent ${spared}, which is not in the transcript`,
              );
            }
            outcomes.set(`${fault}: doctor`, (outcomes.get(`${fault}: doctor`) ?? 0) + 1);
          } else {
            const outcome = faulted.outcome as TurnOutcome;
            const message = outcome.result.errorMessage ?? "";
            expect(`${outcome.status} ${outcome.result.reason}`, `${label}: ${message}`).toBe(
              "error storage",
            );
            expect(message, label).toContain(stateDir);
            const run = await faulted.store?.runs.get(outcome.runId);
            expect(run?.status, label).toBe("failed");
            expect(run?.errorReason, label).toBe("storage");
            outcomes.set(`${fault}: error storage`, (outcomes.get(`${fault}: error storage`) ?? 0) + 1);
          }
          await faulted.store?.close().catch(() => undefined);

          // The fault cleared: nothing committed before it is gone, and the session goes on.
          for (const clear of clears.splice(0)) clear();
          if (fault === "empty agent database") {
            expect(statSync(agentDb).size, `${label}: the emptied file was left as it was`).toBe(0);
          } else {
            const next = await turn(trial, `${label}: after`);
            await next.store?.close();
            expect(
              next.outcome?.status,
              `${label}: next turn: ${next.outcome?.result.errorMessage ?? String(next.thrown)}`,
            ).toBe("ok");
            const rows = storedRows(stateDir);
            for (const [id, body] of before) {
              if (id === spared) continue;
              expect(rows.get(id), `${label}: entry ${id} committed before the fault`).toBe(body);
            }
            // A damaged row stays in place, byte for byte.
            if (fault === "damaged row") expect(rows.get(spared ?? ""), label).toBe('{"torn');
          }
          trials += 1;
        } finally {
          for (const cleanup of [...clears, ...teardowns]) {
            try {
              cleanup();
            } catch {
              // best effort: the next cleanup still runs
            }
          }
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
    console.log(
      `storage faults: ${trials} trials; ${[...outcomes].map(([what, count]) => `${what} ×${count}`).join(", ")}` +
        (skipped.size > 0
          ? `; skipped: ${[...skipped].map(([fault, why]) => `${fault} (${why})`).join(", ")}`
          : ""),
    );
    expect(trials).toBeGreaterThan(0);
    // Every trial injected one fault; a loss fails the test above.
    recordReliability("storage faults (full disk, read-only, damaged rows, empty database)", {
      trials,
      faults: trials,
      lost: 0,
    });
  }, 600_000);
});
