// The fault matrix under load: 50 sessions × 3 turns submitted at once to one kernel (per-session lanes, the
// global cap) against tooling/fake-llm over HTTP, with every fault class the fake serves mixed in — HTTP 429,
// 401, 402, 500, 503, 529, context overflow, a reset stream, an in-stream error, malformed SSE, a stalled
// stream — each either transient (the next request for that turn is answered) or persistent. Whatever each
// turn's fate, nothing may be lost: every user message stored exactly once, every run record finished with
// a terminal status that matches the outcome and carries its events, every transcript a valid tree.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type DataStep,
  type FakeLlm,
  type FaultName,
  fault,
  type RecordedRequest,
  reply,
  startFakeLlm,
  toolCall,
} from "@agent-kernel/fake-llm";
import { createKernel, type TurnOutcome } from "@agent-kernel/kernel";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomInt, runSeed, seededRandom } from "./support/random.ts";
import { recordReliability } from "./support/summary.ts";
import { countUserMessages, treeProblems } from "./support/transcript-checks.ts";
import { fakeLlmConfig, lastIsToolResult, lastUserText } from "./support/turn-setup.ts";

const SESSIONS = 50;
const TURNS = 3;

/** Every fault class: HTTP faults by name, and the stream faults. */
const FAULT_CLASSES = [
  "rate_limit",
  "auth",
  "billing",
  "server_error",
  "unavailable",
  "overloaded",
  "context_overflow",
  "reset",
  "stream_error",
  "malformed",
  "stall",
] as const;
type FaultClass = (typeof FAULT_CLASSES)[number];

interface TurnPlan {
  readonly session: number;
  readonly turn: number;
  readonly prompt: string;
  /** Absent: answered at once. */
  readonly fault?: FaultClass;
  /** A transient fault hits the turn's first request only; a persistent one every request. */
  readonly persistent: boolean;
  readonly tool: boolean;
}

function faultStep(faultClass: FaultClass): DataStep {
  const partial = { text: "partial answer that never completes", chunkSize: 8 };
  switch (faultClass) {
    case "reset":
      return { type: "reset", afterDeltas: 2, ...partial };
    case "stream_error":
      return { type: "stream_error", afterDeltas: 2, ...partial };
    case "malformed":
      return { type: "malformed", afterDeltas: 2, ...partial };
    case "stall":
      return { type: "stall", afterDeltas: 1, ...partial };
    default:
      return fault(faultClass satisfies FaultName);
  }
}

let llm: FakeLlm;
let store: SqliteSessionStore;
let root: string;
const plans = new Map<string, TurnPlan>();
const requestsPerPrompt = new Map<string, number>();

/** Answers by the plan of the turn named in the request's last user message. */
function answer(request: RecordedRequest): DataStep {
  const prompt = lastUserText(request);
  const plan = [...plans.values()].find((candidate) => prompt.includes(candidate.prompt));
  if (plan === undefined) return reply("A summary of the conversation so far.");
  const count = (requestsPerPrompt.get(plan.prompt) ?? 0) + 1;
  requestsPerPrompt.set(plan.prompt, count);
  if (plan.fault !== undefined && (plan.persistent || count === 1)) return faultStep(plan.fault);
  if (plan.tool && !lastIsToolResult(request)) {
    return toolCall("write", { path: `s${plan.session}-t${plan.turn}.txt`, content: plan.prompt });
  }
  return reply(`Done: ${plan.prompt}`);
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "reliability-faults-"));
  mkdirSync(join(root, "workspace"));
  llm = await startFakeLlm({ scenario: { fallback: answer } });
  store = await openSessionStore({ stateDir: join(root, "state") });
});

afterAll(async () => {
  await store.close();
  await llm.close();
  rmSync(root, { recursive: true, force: true });
});

describe(`fault matrix: ${SESSIONS} sessions × ${TURNS} turns at once over HTTP`, () => {
  it("loses nothing: each user message stored once, each run finished with its events, transcripts valid", async () => {
    const seed = runSeed();
    const random = seededRandom(seed);
    console.log(`fault matrix: seed ${seed} (RELIABILITY_SEED=${seed} repeats it)`);
    for (let session = 0; session < SESSIONS; session++) {
      for (let turn = 0; turn < TURNS; turn++) {
        // Every fault class appears, transient and persistent; the rest answer at once.
        const index = session * TURNS + turn;
        const fault =
          index < FAULT_CLASSES.length * 2
            ? FAULT_CLASSES[index % FAULT_CLASSES.length]
            : random() < 0.5
              ? FAULT_CLASSES[randomInt(random, 0, FAULT_CLASSES.length - 1)]
              : undefined;
        const prompt = `[session ${session} turn ${turn}]`;
        plans.set(prompt, {
          session,
          turn,
          prompt,
          ...(fault === undefined ? {} : { fault }),
          persistent: index < FAULT_CLASSES.length * 2 ? index >= FAULT_CLASSES.length : random() < 0.5,
          tool: random() < 0.3,
        });
      }
    }
    const config = fakeLlmConfig({
      baseUrl: llm.baseUrlFor("openai"),
      stateDir: join(root, "state"),
      workspaceDir: join(root, "workspace"),
    });
    const kernel = createKernel({
      config,
      store,
      paths: { env: {}, homeDir: root, cwd: root },
      // Retries at once; a stalled stream ends after 3 s (the default is 2 minutes).
      executorSettings: { transientRetryDelayMs: 0, stallTimeoutMs: 3000 },
    });

    // All turns at once: each session's turns queue in its lane, in order; the global cap bounds the rest.
    const outcomes = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, session) => {
        const prepared = await kernel.prepareSession({ sessionKey: `load-${session}` });
        const turns = Array.from({ length: TURNS }, (_unused, turn) =>
          kernel.executeTurn(prepared, { prompt: `[session ${session} turn ${turn}]`, timeoutMs: 60_000 }),
        );
        return { session, sessionId: prepared.transcript.sessionId, outcomes: await Promise.all(turns) };
      }),
    );

    const byStatus = new Map<string, number>();
    /** `<fault> transient|persistent` → outcome statuses, for the printed summary. */
    const byFault = new Map<string, Map<string, number>>();
    const STATUS_TO_RUN: Record<TurnOutcome["status"], string> = {
      ok: "succeeded",
      error: "failed",
      aborted: "aborted",
      timeout: "timed_out",
    };
    for (const { session, sessionId, outcomes: turns } of outcomes) {
      const entries = store.openTranscript("main", sessionId).getEntries();
      expect(treeProblems(entries), `session ${session}`).toEqual([]);
      const runs = await store.runs.listForSession({
        agentId: "main",
        sessionKey: `agent:main:load-${session}`,
      });
      expect(runs.map((run) => run.runId).sort(), `session ${session}: one run per turn`).toEqual(
        turns.map((outcome) => outcome.runId).sort(),
      );
      for (const [turn, outcome] of turns.entries()) {
        const plan = plans.get(`[session ${session} turn ${turn}]`);
        const label = `session ${session} turn ${turn} (${plan?.fault ?? "no fault"}${plan?.persistent ? ", persistent" : ""})`;
        byStatus.set(outcome.status, (byStatus.get(outcome.status) ?? 0) + 1);
        const faultKey =
          plan?.fault === undefined
            ? "none"
            : `${plan.fault} ${plan.persistent ? "persistent" : "transient"}`;
        const statuses = byFault.get(faultKey) ?? new Map<string, number>();
        statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
        byFault.set(faultKey, statuses);
        expect(countUserMessages(entries, `[session ${session} turn ${turn}]`), label).toBe(1);
        if (plan?.fault === undefined)
          expect(outcome.status, `${label}: ${outcome.result.errorMessage}`).toBe("ok");
        const run = await store.runs.get(outcome.runId);
        expect(run?.status, label).toBe(STATUS_TO_RUN[outcome.status]);
        expect(run?.endedAt, label).toBeTypeOf("number");
        const events = await store.runs.events(outcome.runId);
        expect(events[0], `${label}: the decisions are event 0`).toMatchObject({
          seq: 0,
          data: { phase: "prepared" },
        });
        const seqs = events.map((event) => event.seq);
        expect(seqs, `${label}: events in seq order, no duplicates`).toEqual(
          [...new Set(seqs)].sort((a, b) => a - b),
        );
        expect(events.at(-1), `${label}: the stored stream ends with the run's end`).toMatchObject({
          stream: "lifecycle",
          data: { phase: "end", status: outcome.status },
        });
      }
    }
    const served = new Map<string, number>();
    for (const request of llm.requests)
      served.set(String(request.served), (served.get(String(request.served)) ?? 0) + 1);
    console.log(
      `fault matrix: ${SESSIONS * TURNS} turns → ${[...byStatus].map(([status, n]) => `${n} ${status}`).join(", ")}; ` +
        `${llm.requests.length} requests served as ${[...served].map(([kind, n]) => `${kind} ×${n}`).join(", ")}`,
    );
    console.log(
      `fault matrix: outcomes by fault: ${[...byFault]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(
          ([fault, statuses]) =>
            `${fault} → ${[...statuses].map(([status, n]) => `${n} ${status}`).join("/")}`,
        )
        .join("; ")}`,
    );
    // Every fault class was served at least once.
    for (const faultClass of FAULT_CLASSES) {
      const kind =
        faultClass === "reset" || faultClass === "stall" || faultClass === "malformed"
          ? faultClass
          : faultClass === "stream_error"
            ? "stream_error:overloaded"
            : `error:${faultClass}`;
      expect(served.get(kind) ?? 0, `fault ${faultClass} served`).toBeGreaterThan(0);
    }
    const faults = llm.requests.filter((request) => request.served !== "response").length;
    recordReliability("fault matrix (HTTP faults under load)", { trials: SESSIONS * TURNS, faults, lost: 0 });
  }, 180_000);
});
