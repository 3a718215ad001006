// One session, several processes: real child processes (src/crash/child.ts: the real kernel, pi, the fake LLM
// over HTTP, the SQLite store) run turns on the same session key at once — the gateway and an `agent -m` in a
// shell share `agent:main:main` — and one of them is killed with SIGKILL at a random point. The session
// leases must make the turns take turns: every message stored is on the active branch (no fork), each turn
// that ended is whole and not interleaved with another, each prompt is stored at most once, the killed
// child's run is recovered as interrupted, and the session takes its next turn.
// Seeded: `RELIABILITY_SEED=<seed>` repeats a run's kill points (as far as timing allows).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, startFakeLlm } from "@agent-kernel/fake-llm";
import { createKernel } from "@agent-kernel/kernel";
import { controlPlanePath, openSessionStore, type TranscriptEntry } from "@agent-kernel/session-store";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileCacheEnv, type LineChild, startLineChild } from "./support/child-process.ts";
import { randomInt, runSeed, seededRandom } from "./support/random.ts";
import { recordReliability } from "./support/summary.ts";
import { treeProblems, userMessages } from "./support/transcript-checks.ts";
import { crashTrialStep, fakeLlmConfig } from "./support/turn-setup.ts";

const CHILD = join(import.meta.dirname, "crash", "child.ts");
const TRIALS = 4;
const PROCESSES = 3;
const TURNS_PER_CHILD = 3;
const SESSION_KEY = "agent:main:main";

let llm: FakeLlm;
let root: string;
const compileCache = join(tmpdir(), "agent-kernel-reliability-compile-cache");

beforeAll(async () => {
  llm = await startFakeLlm({ scenario: { fallback: crashTrialStep } });
  root = mkdtempSync(join(tmpdir(), "reliability-lanes-"));
});

afterAll(async () => {
  await llm.close();
  rmSync(root, { recursive: true, force: true });
});

interface Message {
  readonly role: string;
  readonly text: string;
}

function messagesOf(entries: readonly TranscriptEntry[]): Message[] {
  const list: Message[] = [];
  for (const entry of entries) {
    const message = (entry as { message?: { role?: string; content?: unknown } }).message;
    if (entry.type !== "message" || message?.role === undefined || message.role === "system") continue;
    const text = userMessages([entry])[0] ?? JSON.stringify(message.content ?? "");
    list.push({ role: message.role, text });
  }
  return list;
}

describe(`${PROCESSES} processes on one SQLite session, one killed mid-turn (${TRIALS} trials)`, () => {
  it("every message on the active branch, turns whole and serial, the dead one's run interrupted", async () => {
    const seed = runSeed();
    const random = seededRandom(seed);
    console.log(`lane trials: seed ${seed} (RELIABILITY_SEED=${seed} repeats it)`);
    let turnsEnded = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const stateDir = join(root, `state-${trial}`);
      const workspaceDir = join(root, `workspace-${trial}`);
      mkdirSync(workspaceDir);
      const children: LineChild[] = Array.from({ length: PROCESSES }, () =>
        startLineChild(CHILD, [stateDir, workspaceDir, llm.url], compileCacheEnv(compileCache)),
      );
      for (const child of children)
        expect(await child.waitFor((line) => line === "loaded")).toBeGreaterThanOrEqual(0);
      children.forEach((child, index) => {
        child.send(`t${trial}p${index} ${TURNS_PER_CHILD} ${SESSION_KEY}`);
      });
      // The victim dies after a random number of its reported lines (its turns may be waiting in line).
      const victim = children[randomInt(random, 0, PROCESSES - 1)];
      const killAfter = randomInt(random, 2, 14);
      await victim?.waitFor(() => (victim?.lines.length ?? 0) >= killAfter);
      victim?.kill();
      const exits = await Promise.all(children.map((child) => child.exited));
      for (const [index, exit] of exits.entries()) {
        if (children[index] !== victim) expect(exit.code, `child ${index}: ${exit.stderr}`).toBe(0);
      }
      const ended = new Map<string, string>();
      for (const child of children) {
        for (const line of child.lines) {
          const [kind, runId = "", status = ""] = line.split(" ");
          if (kind === "end") ended.set(runId, status);
        }
      }

      const raw = new Database(controlPlanePath(stateDir));
      expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
      raw.close();
      const store = await openSessionStore({ stateDir });
      try {
        const session = await store.sessions.get({ agentId: "main", sessionKey: SESSION_KEY });
        if (session === undefined) throw new Error(`trial ${trial}: no session was stored`);
        const transcript = store.openTranscript("main", session.sessionId);
        const entries = transcript.getEntries();
        expect(treeProblems(entries), `trial ${trial}`).toEqual([]);
        const all = messagesOf(entries);
        const branch = messagesOf(transcript.getBranch());
        // No fork: every message stored is on the active branch.
        expect(branch, `trial ${trial}: every message on the active branch`).toEqual(all);
        // Each prompt at most once; each turn that ended ok is whole: its prompt, then its answer before the
        // next prompt (turns never interleave).
        const prompts = branch.filter((message) => message.role === "user").map((message) => message.text);
        expect(new Set(prompts).size, `trial ${trial}: a prompt stored twice`).toBe(prompts.length);
        // The runs: each one the children saw end has that status; the killed child's run under way is
        // `interrupted` on reopen — or final already, when the kill landed between its finish and the report.
        const runs = await store.runs.listForSession({ agentId: "main", sessionKey: SESSION_KEY });
        expect(
          runs.filter((run) => run.status === "running"),
          `trial ${trial}`,
        ).toEqual([]);
        const STATUS = {
          ok: "succeeded",
          error: "failed",
          aborted: "aborted",
          timeout: "timed_out",
        } as const;
        for (const run of runs) {
          const reported = ended.get(run.runId);
          if (reported !== undefined) {
            expect(run.status, `trial ${trial}: ${run.runId}`).toBe(STATUS[reported as keyof typeof STATUS]);
          } else {
            expect(["interrupted", "succeeded", "failed"], `trial ${trial}: ${run.runId}`).toContain(
              run.status,
            );
          }
          if (run.status !== "succeeded") continue;
          // A turn that succeeded is whole: its prompt, then its answer before the next prompt began.
          const [, label = "", turn = ""] = /^trial(.+)-turn(\d+)$/.exec(run.runId) ?? [];
          const at = branch.findIndex(
            (message) => message.role === "user" && message.text.includes(`[trial ${label} turn ${turn}]`),
          );
          expect(at, `trial ${trial}: ${run.runId} stored`).toBeGreaterThanOrEqual(0);
          const next = branch.findIndex((message, index) => index > at && message.role === "user");
          const turnMessages = branch.slice(at + 1, next === -1 ? undefined : next);
          expect(
            turnMessages.some(
              (message) => message.role === "assistant" && message.text.includes("Answer to:"),
            ),
            `trial ${trial}: ${run.runId} answered before the next turn began`,
          ).toBe(true);
          turnsEnded += 1;
        }
        // The session takes its next turn.
        const kernel = createKernel({
          config: fakeLlmConfig({ baseUrl: llm.url, stateDir, workspaceDir }),
          store,
          paths: { env: {}, homeDir: stateDir, cwd: workspaceDir },
        });
        const prepared = await kernel.prepareSession({ sessionKey: SESSION_KEY });
        const after = await kernel.executeTurn(prepared, {
          prompt: `[trial after${trial} turn 0]`,
          timeoutMs: 60_000,
        });
        expect(after.status, after.result.errorMessage).toBe("ok");
        const final = messagesOf(store.openTranscript("main", session.sessionId).getBranch());
        expect(final.slice(0, branch.length)).toEqual(branch);
      } finally {
        await store.close();
      }
    }
    recordReliability("several processes on one session (SQLite)", {
      trials: TRIALS * PROCESSES * TURNS_PER_CHILD,
      faults: TRIALS,
      lost: 0,
    });
    console.log(`lane trials: ${TRIALS} trials, ${turnsEnded} turns succeeded and checked whole and serial`);
  }, 600_000);
});
