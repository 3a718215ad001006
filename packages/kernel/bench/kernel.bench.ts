// What the kernel adds to a turn: 200 sessions × 5 turns with pi's faux provider (no network, no model
// latency), through the real executor and a real SQLite store.
//
// Throughput (the tables): the baseline is turn-pipeline's `executeTurn` called directly with the same
// prepared contexts, each session's turns one after another, all sessions at once. The kernel cases hand all
// 1000 turns to `kernel.prepareSession` + `kernel.executeTurn` at once; lanes order them per session. "cap
// 200" lets as many turns run as the baseline does (so the ratio is the kernel's cost); "default cap" uses the
// real default max(8, 4 × CPUs), which also measures what the cap does to throughput with a zero-latency model.
// Like for like, the sessions exist before the timed part in every case: the baseline's contexts are made by
// `prepareSession` before it, and so each kernel case prepares its 200 sessions once before it (creating their
// rows); the timed part still calls `prepareSession` before every turn, as an entry point does (a cache hit
// then). A session's first preparation is measured by the one-at-a-time suite (its cache misses); in the
// concurrent cases' figures below, the first turn of each session would report that untimed preparation as its
// `prepareMs` (a preparation's cost goes to its next `executeTurn`): left out there, and counted.
// A second suite runs turns one at a time (no concurrency at all).
//
// Kernel overhead per turn (printed under the tables), two figures:
// - kernel's own work (`timings.kernelMs`, the target figure): `performance.now()` spans around the
//   kernel's synchronous segments — validation, prepareSession (cache hit or miss), lane and registry
//   bookkeeping, the decisions' run-record write, the session-metadata update, the outcome — and around its
//   store calls up to the moment each returns its promise (better-sqlite3 runs the statement inside that
//   call). Every await on the lane, the executor or the store is outside the spans, so work other turns do
//   while this one waits is not charged to it. Not seen: the asynchronous remainder of a Kysely-backed store
//   call (the session write runs after Kysely's connection lock).
// - wall-clock difference (`timings.overheadMs`): executeTurn wall − lane/cap wait − executor time. With
//   hundreds of turns in flight on 2 cores it also counts other turns' work done while this one awaited, so
//   it overstates the kernel's cost under concurrency; it excludes prepareSession.
// The one-at-a-time suite is the cross-check: with no other turn to interleave, its wall-clock difference
// (plus prepareSession's wall time) is the kernel's whole cost, Kysely's asynchronous remainder included.
import { performance } from "node:perf_hooks";
import { defineSuite, median } from "@agent-kernel/bench";
import type { SessionStore, SqliteSessionStore } from "@agent-kernel/session-store";
import { executeTurn, ModelRuntimePool, type TurnContext } from "@agent-kernel/turn-pipeline";
import { createKernel, type KernelOptions, type PreparedSession, type TurnOutcome } from "../src/index.ts";
import { createKernelHarness, type KernelHarness } from "../test/harness.ts";

const SESSIONS = 200;
const TURNS = 5;
/** Timed rounds per case: 5, since the ratio moves by tenths between runs of 3 on a shared machine. */
const ITERATIONS = 5;
const WARMUP = 1;
/** The one-at-a-time suite: fewer sessions, same turns per session. */
const SERIAL_SESSIONS = 40;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function describe(values: readonly number[]): string {
  const max = values.reduce((a, b) => Math.max(a, b), 0);
  return `p50 ${percentile(values, 50).toFixed(3)} ms, p99 ${percentile(values, 99).toFixed(3)} ms, max ${max.toFixed(3)} ms`;
}

/** Per-turn figures of the timed iterations of one kernel case. */
class TurnFigures {
  /**
   * The sessions were prepared before the timed part: the one miss each session's first timed turn reports is
   * that untimed preparation (a preparation's cost goes to its next `executeTurn`), left out of the figures.
   */
  readonly #preparedBefore: boolean;
  readonly kernel: number[] = [];
  readonly wallDifference: number[] = [];
  readonly wallPrepare: number[] = [];
  readonly executor: number[] = [];
  readonly phases = new Map<string, number[]>();
  readonly cache = { hit: 0, miss: 0, none: 0, before: 0 };
  rounds = 0;

  constructor(preparedBefore = false) {
    this.#preparedBefore = preparedBefore;
  }

  add(outcome: TurnOutcome, prepareWallMs: number): void {
    if (outcome.status !== "ok") throw new Error(`kernel turn failed: ${outcome.result.errorMessage}`);
    const timings = outcome.timings;
    const untimed = this.#preparedBefore && timings.phases.prepareCache === "miss";
    this.kernel.push(untimed ? timings.kernelMs - timings.phases.prepareMs : timings.kernelMs);
    this.wallDifference.push(timings.overheadMs);
    this.wallPrepare.push(prepareWallMs + timings.overheadMs);
    this.executor.push(timings.executorMs);
    this.cache[untimed ? "before" : timings.phases.prepareCache] += 1;
    for (const [phase, ms] of Object.entries(timings.phases)) {
      if (typeof ms !== "number" || (untimed && phase === "prepareMs")) continue;
      const list = this.phases.get(phase) ?? [];
      list.push(ms);
      this.phases.set(phase, list);
    }
  }

  report(title: string): string {
    return [
      `${title}, over ${this.kernel.length} turns (prepareSession: ${this.cache.hit} cache hits, ${this.cache.miss} misses${this.cache.before > 0 ? `, ${this.cache.before} first turns whose preparation was made before the timed part (left out)` : ""}):`,
      `  kernel's own work (timings.kernelMs, incl. prepareSession):  ${describe(this.kernel)}`,
      ...[...this.phases].map(([phase, values]) => `    ${phase.padEnd(16)} ${describe(values)}`),
      `  wall-clock difference (timings.overheadMs = executeTurn wall − queue wait − executor; counts other turns' work): ${describe(this.wallDifference)}`,
      `  same + prepareSession wall time: ${describe(this.wallPrepare)}`,
      `  executor time per turn: median ${median(this.executor).toFixed(3)} ms`,
      "",
    ].join("\n");
  }
}

async function harness(kernel: Partial<KernelOptions> = {}): Promise<KernelHarness> {
  const h = await createKernelHarness({
    config: { agents: { defaults: { skipBootstrap: true } } },
    kernel,
  });
  h.model.otherwise(() => ({
    role: "assistant",
    content: [{ type: "text", text: "A short answer." }],
    api: "faux",
    provider: "faux",
    model: "faux-1",
    usage: {
      input: 10,
      output: 4,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 14,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "stop",
    timestamp: Date.now(),
  }));
  return h;
}

function sessionKeys(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `bench-${index}`);
}

/** The baseline's contexts: the kernel's preparations turned into executor contexts by hand. */
async function executorContexts(count: number): Promise<{ h: KernelHarness; contexts: TurnContext[] }> {
  const h = await harness();
  const models = new ModelRuntimePool({ config: h.config, nativeProviders: [h.faux.provider] });
  const contexts: TurnContext[] = [];
  for (const sessionKey of sessionKeys(count)) {
    const prepared = await h.kernel.prepareSession({ sessionKey });
    const runtime = prepared.runtimeContext;
    contexts.push({
      config: prepared.config,
      store: h.store,
      runtime,
      toolPolicy: prepared.toolPolicy,
      models,
      agentId: runtime.agentId.value,
      sessionKey: runtime.sessionKey.value,
      sessionId: prepared.transcript.sessionId,
      workspaceDir: runtime.workspaceDir.value,
      transientRetryDelayMs: 0,
    });
  }
  return { h, contexts };
}

async function executorTurn(context: TurnContext, turn: number): Promise<void> {
  const result = await executeTurn(context, { prompt: `turn ${turn}`, timeoutMs: 0, entryPoint: "bench" });
  if (result.status !== "ok") throw new Error(`baseline turn failed: ${result.errorMessage}`);
}

/** One kernel turn, as an entry point does it: prepare (cached after the first), then execute. */
async function kernelTurn(
  h: KernelHarness,
  sessionKey: string,
  turn: number,
): Promise<{ outcome: TurnOutcome; prepareWallMs: number }> {
  const prepareStarted = performance.now();
  const prepared: PreparedSession = await h.kernel.prepareSession({
    sessionKey,
    runOptions: { entryPoint: "bench" },
  });
  const prepareWallMs = performance.now() - prepareStarted;
  const outcome = await h.kernel.executeTurn(prepared, { prompt: `turn ${turn}`, timeoutMs: 0 });
  return { outcome, prepareWallMs };
}

/** The target of the concurrent kernel cases (issue 24). */
const THROUGHPUT_TARGET = { minSpeedup: 0.9, label: "turns/s ≥ 0.9× the executor called directly" };

/** A kernel whose sessions exist (prepared once, untimed), as the baseline's contexts do. */
async function preparedHarness(kernel: Partial<KernelOptions>): Promise<KernelHarness> {
  const h = await harness(kernel);
  for (const sessionKey of sessionKeys(SESSIONS)) {
    await h.kernel.prepareSession({ sessionKey, runOptions: { entryPoint: "bench" } });
  }
  return h;
}

/**
 * The store as a third party's without leases would be (no `fencedRuns`): the kernel then holds no
 * cross-process lease per turn. Not a mode to run a gateway in — it measures, in the same run, what the
 * one-writer-per-session guarantee costs (lease reuse, the fencing reads before each run and transcript write).
 */
function withoutLeases(store: SqliteSessionStore): SessionStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === "fencedRuns") return undefined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** `preparedHarness` with a kernel over `withoutLeases(store)`. */
async function preparedHarnessWithoutLeases(kernel: Partial<KernelOptions>): Promise<KernelHarness> {
  const h = await harness();
  const unleased = createKernel({
    config: h.config,
    store: withoutLeases(h.store),
    nativeProviders: [h.faux.provider],
    paths: { env: {}, homeDir: h.root, cwd: h.root },
    executorSettings: { transientRetryDelayMs: 0 },
    ...kernel,
  });
  for (const sessionKey of sessionKeys(SESSIONS)) {
    await unleased.prepareSession({ sessionKey, runOptions: { entryPoint: "bench" } });
  }
  return { ...h, kernel: unleased };
}

function concurrentKernelCase(
  name: string,
  kernel: Partial<KernelOptions>,
  target?: typeof THROUGHPUT_TARGET,
  leases = true,
) {
  const figures = new TurnFigures(true);
  return {
    name,
    ...(target === undefined ? {} : { target }),
    before: () => (leases ? preparedHarness(kernel) : preparedHarnessWithoutLeases(kernel)),
    run: async (h: KernelHarness) => {
      const turns = await Promise.all(
        sessionKeys(SESSIONS).flatMap((sessionKey) =>
          Array.from({ length: TURNS }, (_, turn) => kernelTurn(h, sessionKey, turn)),
        ),
      );
      figures.rounds += 1;
      if (figures.rounds <= WARMUP) return;
      for (const { outcome, prepareWallMs } of turns) figures.add(outcome, prepareWallMs);
    },
    after: async (h: KernelHarness) => {
      await h.close();
      if (figures.rounds === WARMUP + ITERATIONS) console.log(figures.report(name));
    },
  };
}

const serialFigures = new TurnFigures();

export default [
  defineSuite({
    name: `${SESSIONS} sessions × ${TURNS} turns at once, pi faux provider`,
    baseline: "executor directly (per session sequential)",
    iterations: ITERATIONS,
    warmup: WARMUP,
    itemsPerIteration: SESSIONS * TURNS,
    cases: [
      {
        name: "executor directly (per session sequential)",
        before: () => executorContexts(SESSIONS),
        run: async ({ contexts }: { contexts: TurnContext[] }) => {
          await Promise.all(
            contexts.map(async (context) => {
              for (let turn = 0; turn < TURNS; turn++) await executorTurn(context, turn);
            }),
          );
        },
        after: ({ h }: { h: KernelHarness }) => h.close(),
      },
      concurrentKernelCase(
        `kernel, cap ${SESSIONS} (as many at once as the baseline)`,
        { maxConcurrent: SESSIONS },
        THROUGHPUT_TARGET,
      ),
      concurrentKernelCase("kernel, default cap max(8, 4 × CPUs)", {}),
      // A bound, not a target: the same cap-200 case without cross-process leases (see `withoutLeases`).
      concurrentKernelCase(
        `kernel, cap ${SESSIONS}, without session leases (what one writer per session costs)`,
        { maxConcurrent: SESSIONS },
        undefined,
        false,
      ),
    ],
  }),
  defineSuite({
    name: `${SERIAL_SESSIONS} sessions × ${TURNS} turns one at a time, pi faux provider`,
    baseline: "executor directly, one turn at a time",
    iterations: ITERATIONS,
    warmup: WARMUP,
    itemsPerIteration: SERIAL_SESSIONS * TURNS,
    cases: [
      {
        name: "executor directly, one turn at a time",
        before: () => executorContexts(SERIAL_SESSIONS),
        run: async ({ contexts }: { contexts: TurnContext[] }) => {
          for (const context of contexts) {
            for (let turn = 0; turn < TURNS; turn++) await executorTurn(context, turn);
          }
        },
        after: ({ h }: { h: KernelHarness }) => h.close(),
      },
      {
        name: "kernel, one turn at a time",
        before: () => harness(),
        run: async (h: KernelHarness) => {
          serialFigures.rounds += 1;
          for (const sessionKey of sessionKeys(SERIAL_SESSIONS)) {
            for (let turn = 0; turn < TURNS; turn++) {
              const { outcome, prepareWallMs } = await kernelTurn(h, sessionKey, turn);
              if (serialFigures.rounds > WARMUP) serialFigures.add(outcome, prepareWallMs);
            }
          }
        },
        after: async (h: KernelHarness) => {
          await h.close();
          if (serialFigures.rounds === WARMUP + ITERATIONS) {
            console.log(serialFigures.report("kernel, one turn at a time (no other turn to interleave)"));
          }
        },
      },
    ],
  }),
];
