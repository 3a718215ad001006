// What the kernel adds to a turn: 200 sessions × 5 turns with pi's faux provider (no network, no model
// latency), through the real executor. Baseline: turn-pipeline's `executeTurn` called directly with the same
// prepared contexts, each session's turns one after another, all sessions at once. Kernel: every one of the
// 1000 turns handed to `kernel.prepareSession` + `kernel.executeTurn` at once (lanes order them per session,
// the default cap max(8, 4 × CPUs) bounds how many run). Besides the table, it prints the kernel's
// own overhead per turn (executeTurn wall time − lane/cap wait − executor time), p50 and p99.
import { defineSuite, median } from "@agent-kernel/bench";
import { executeTurn, ModelRuntimePool, type TurnContext } from "@agent-kernel/turn-pipeline";
import { createKernelHarness, type KernelHarness } from "../test/harness.ts";

const SESSIONS = 200;
const TURNS = 5;
const ITERATIONS = 3;
const WARMUP = 1;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const overheads: number[] = [];
const executorShares: number[] = [];
let kernelRounds = 0;

async function harness(): Promise<KernelHarness> {
  const h = await createKernelHarness({
    config: { agents: { defaults: { skipBootstrap: true } } },
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

const sessionKeys = Array.from({ length: SESSIONS }, (_, index) => `bench-${index}`);

export default defineSuite({
  name: `${SESSIONS} sessions × ${TURNS} turns, pi faux provider`,
  baseline: "executor directly (per session sequential)",
  iterations: ITERATIONS,
  warmup: WARMUP,
  itemsPerIteration: SESSIONS * TURNS,
  cases: [
    {
      name: "executor directly (per session sequential)",
      before: async () => {
        const h = await harness();
        const models = new ModelRuntimePool({ config: h.config, nativeProviders: [h.faux.provider] });
        const contexts: TurnContext[] = [];
        for (const sessionKey of sessionKeys) {
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
      },
      run: async ({ contexts }: { contexts: TurnContext[] }) => {
        await Promise.all(
          contexts.map(async (context) => {
            for (let turn = 0; turn < TURNS; turn++) {
              const result = await executeTurn(context, {
                prompt: `turn ${turn}`,
                timeoutMs: 0,
                entryPoint: "bench",
              });
              if (result.status !== "ok") throw new Error(`baseline turn failed: ${result.errorMessage}`);
            }
          }),
        );
      },
      after: ({ h }: { h: KernelHarness }) => h.close(),
    },
    {
      name: "kernel: prepareSession + executeTurn, all at once",
      before: harness,
      run: async (h: KernelHarness) => {
        const outcomes = await Promise.all(
          sessionKeys.flatMap((sessionKey) =>
            Array.from({ length: TURNS }, async (_, turn) => {
              const prepared = await h.kernel.prepareSession({
                sessionKey,
                runOptions: { entryPoint: "bench" },
              });
              return h.kernel.executeTurn(prepared, { prompt: `turn ${turn}`, timeoutMs: 0 });
            }),
          ),
        );
        kernelRounds += 1;
        if (kernelRounds <= WARMUP) return;
        for (const outcome of outcomes) {
          if (outcome.status !== "ok") throw new Error(`kernel turn failed: ${outcome.result.errorMessage}`);
          overheads.push(outcome.timings.overheadMs);
          executorShares.push(outcome.timings.executorMs);
        }
      },
      after: async (h: KernelHarness) => {
        await h.close();
        if (kernelRounds === WARMUP + ITERATIONS) {
          console.log(
            [
              `kernel overhead per turn over ${overheads.length} turns (executeTurn wall − queue wait − executor):`,
              `  p50 ${percentile(overheads, 50).toFixed(3)} ms, p99 ${percentile(overheads, 99).toFixed(3)} ms, max ${Math.max(...overheads).toFixed(3)} ms`,
              `  executor time per turn: median ${median(executorShares).toFixed(3)} ms`,
              "",
            ].join("\n"),
          );
        }
      },
    },
  ],
});
