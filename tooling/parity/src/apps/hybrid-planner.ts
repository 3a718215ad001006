// The hybrid planner through `runHybridPlan`: each inbound message is a goal; the planner turn runs with the
// run options the app fixes (tools off, `<final>` enforced, thinking `high`, the minimal prompt, the planning
// instructions as extra system prompt, a new session per plan). Those are declared kernel-level
// differences, so this app is compared on the **recovery view** of the outcome — run statuses, attempts and
// their recovery actions, fallback chain, model replies, the run's end and the transcript's messages —
// without the decisions those options change (thinking level, tool-policy lines, defaults). Scenarios whose
// model calls tools, or that need one session across turns, do not apply. Delivery: the plan result (its
// status; a scripted reply that is not a plan is `invalid-plan`, a failed planner turn `planner-failed`).
import { runHybridPlan } from "@agent-kernel/hybrid-planner";
import type { Cell } from "../cell.ts";
import { normaliseValue } from "../kernel-outcome.ts";
import type { AppDeliveryPolicy, CellRun, Delivered } from "../types.ts";
import { type AppAdapter, abortWhenRequested } from "./adapter.ts";

export const HYBRID_PLANNER_POLICY: AppDeliveryPolicy = {
  app: "hybrid-planner",
  streaming: "none",
  final: "json",
  errors: "null-plan",
  silent: "suppressed",
  messagingToolDedupe: false,
  replyThreading: false,
  typing: false,
  messageTool: false,
};

export const hybridPlannerApp: AppAdapter = {
  name: "hybrid-planner",
  policy: HYBRID_PLANNER_POLICY,
  kernelDifferences: {
    isolatedSessions: true,
    fixedRunOptions: "tools off, <final> enforced, thinking high, minimal prompt with planning instructions",
  },
  async run(cell: Cell): Promise<CellRun> {
    const delivered: Delivered[] = [];
    for (const [index, inbound] of cell.scenario.inbound.entries()) {
      const controller = new AbortController();
      const stopWatching = abortWhenRequested(cell, () => controller.abort());
      try {
        const result = await runHybridPlan({
          config: cell.config,
          goal: inbound.text,
          planId: `parity-${index + 1}`,
          stateDir: cell.stateDir,
          kernelOptions: { executorSettings: { transientRetryDelayMs: 1 } },
          signal: controller.signal,
        });
        delivered.push({
          kind: "result",
          value: normaliseValue(
            {
              status: result.status,
              planner: result.planner.status,
              ...(result.status === "planner-failed" ? { error: result.error } : {}),
              ...(result.status === "invalid-plan" ? { problems: result.problems.length } : {}),
            },
            cell,
          ),
        });
      } finally {
        stopWatching();
      }
    }
    return { stateDir: cell.stateDir, delivered };
  },
};
