// The hybrid planner: one planner turn, then the plan's steps, every turn through the kernel's
// prepareSession/executeTurn. Owns: the planner turn's settings (tools off, the `<final>` tag enforced, thinking
// high, the minimal system prompt plus fixed planning instructions), reading its answer into a plan and refusing
// an invalid one before anything runs, running the steps in order in one session with each step's tool limits
// as an extra policy layer, stopping a step at its tool-call limit, and the result. Does not own turns, tool
// policy or sessions (the kernel) nor the plan's shape (plan-schema.ts).
import { randomUUID } from "node:crypto";
import { defaultAgentId, type KernelConfig } from "@agent-kernel/config";
import {
  type AnyKernelStore,
  createKernel,
  type Kernel,
  type KernelOptions,
  openKernelStore,
  type PreparedSession,
  type TurnOutcome,
} from "@agent-kernel/kernel";
import { withNarrowedTools } from "./narrow-policy.ts";
import { type Plan, type PlanProblem, readPlan, type ToolsInConfig } from "./plan-schema.ts";

/** Recorded on every run of a plan, the planner turn and the steps alike. */
export const PLANNER_ENTRY_POINT = "hybrid-planner";
export const DEFAULT_MAX_STEPS = 8;

/** The planner turn's session: a new one per plan. */
export function plannerSessionKey(agentId: string, planId: string): string {
  return `agent:${agentId}:planner:${planId}`;
}

/** The session the steps of a plan run in, one after another (a step sees the ones before it). */
export function planStepsSessionKey(agentId: string, planId: string): string {
  return `agent:${agentId}:plan:${planId}`;
}

export interface HybridPlanOptions {
  readonly config: KernelConfig;
  /** The goal to plan for: the planner turn's prompt. */
  readonly goal: string;
  /** Default the config's default agent. */
  readonly agentId?: string | undefined;
  /** Names the plan's sessions; default a random id. Letters, digits, `-` and `_`. */
  readonly planId?: string | undefined;
  /** Plans with more steps are invalid; default 8. */
  readonly maxSteps?: number | undefined;
  /** The state dir holding the store; default the config's `store.stateDir`. */
  readonly stateDir?: string | undefined;
  /** A store to use (not closed here); default one opened under `stateDir` and closed at the end. */
  readonly store?: AnyKernelStore | undefined;
  readonly kernelOptions?: Omit<KernelOptions, "config" | "store"> | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Called as each step ends. */
  readonly onStep?: ((step: StepResult) => void) | undefined;
}

export interface PlannerTurn {
  readonly runId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly status: TurnOutcome["status"];
  /** The text inside `<final>` (what was parsed). */
  readonly finalText: string;
  /** The whole answer, reasoning tags and all. */
  readonly rawText: string;
}

export interface StepResult {
  readonly id: string;
  readonly runId: string;
  /** `tool-limit`: stopped at a tool call beyond the step's `maxToolCalls` (or the plan's budget). */
  readonly status: TurnOutcome["status"] | "tool-limit";
  readonly text: string;
  readonly toolCalls: number;
  /** The tools the step could use (config narrowed by the step). */
  readonly tools: readonly string[];
  readonly error?: string;
}

export type HybridPlanResult =
  | {
      readonly status: "ok";
      readonly planId: string;
      readonly planner: PlannerTurn;
      readonly plan: Plan;
      readonly steps: readonly StepResult[];
    }
  | {
      /** The planner's answer is no usable plan: nothing ran after the planner turn. */
      readonly status: "invalid-plan";
      readonly planId: string;
      readonly planner: PlannerTurn;
      readonly problems: readonly PlanProblem[];
    }
  | {
      readonly status: "planner-failed";
      readonly planId: string;
      readonly planner: PlannerTurn;
      readonly error: string;
    }
  | {
      /** A step failed or hit its tool limit; the steps after it did not run. */
      readonly status: "step-failed";
      readonly planId: string;
      readonly planner: PlannerTurn;
      readonly plan: Plan;
      readonly steps: readonly StepResult[];
      readonly failedStep: string;
      readonly error: string;
    };

/** An input the planner cannot start with (a bad plan id, no store). */
export class HybridPlanInputError extends Error {
  override readonly name = "HybridPlanInputError";
}

function planningInstructions(tools: readonly string[], maxSteps: number): string {
  return [
    "You are the planner. You cannot call tools in this turn. Think the task through, then answer with only a",
    "JSON plan inside <final>...</final>, nothing else inside the tags. The plan's shape:",
    '{"steps":[{"id":"inspect","prompt":"what this step must do","tools":{"allow":["read"],"deny":["write"]},"maxToolCalls":3}],"limits":{"maxToolCalls":10}}',
    `Rules: 1 to ${maxSteps} steps, run in order in one session; each id unique (letters, digits, "_" or "-");`,
    `"tools", "maxToolCalls" and "limits" are optional; a step can only narrow its tools, naming exact tools from: ${tools.length > 0 ? tools.join(", ") : "(none)"}.`,
  ].join("\n");
}

function finalTextOf(outcome: TurnOutcome): string {
  return outcome.result.payloads
    .filter((payload) => !payload.isError)
    .map((payload) => payload.text ?? "")
    .join("\n")
    .trim();
}

function outcomeError(outcome: TurnOutcome): string {
  return [outcome.status, outcome.result.reason, outcome.result.errorMessage].filter(Boolean).join(": ");
}

/** The tools the config lets this agent use, read off a preparation's policy. */
function toolsInConfig(prepared: PreparedSession): ToolsInConfig & { readonly allowed: readonly string[] } {
  const offered = prepared.toolDecisions.map((decision) => decision.normalized);
  return {
    offered,
    allowed: prepared.toolDecisions
      .filter((decision) => decision.allowed)
      .map((decision) => decision.normalized),
    decide: (name) => prepared.toolPolicy.decide(name),
  };
}

/** Plans `goal` with a planner turn, then runs the plan's steps; an invalid plan never runs. */
export async function runHybridPlan(options: HybridPlanOptions): Promise<HybridPlanResult> {
  const planId = options.planId ?? randomUUID().slice(0, 8);
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/i.test(planId)) {
    throw new HybridPlanInputError(`plan id "${planId}" is not usable (letters, digits, "_" or "-")`);
  }
  if (options.goal.trim() === "") throw new HybridPlanInputError("the goal is empty: say what to plan for");
  const stateDir = options.stateDir ?? options.config.store.stateDir;
  if (options.store === undefined && stateDir === undefined) {
    throw new HybridPlanInputError(
      "runHybridPlan needs a store or a state dir (options.stateDir or config.store.stateDir)",
    );
  }
  const store =
    options.store ?? (await openKernelStore({ stateDir: stateDir ?? "", config: options.config }));
  try {
    const kernel = createKernel({
      // Each planner turn forces a new session; the prewarm cache would hand back the previous preparation.
      prewarm: false,
      ...(options.kernelOptions ?? {}),
      config: options.config,
      store,
    });
    return await runWithKernel(kernel, options, planId);
  } finally {
    if (options.store === undefined) await store.close();
  }
}

async function runWithKernel(
  kernel: Kernel,
  options: HybridPlanOptions,
  planId: string,
): Promise<HybridPlanResult> {
  const agentId = (options.agentId ?? defaultAgentId(options.config)).toLowerCase();
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const signal = options.signal;

  // ── the planner turn ────────────────────────────────────────────────────────────────────────────────
  const plannerPrepared = await kernel
    .prepareSession({
      agentId,
      sessionKey: plannerSessionKey(agentId, planId),
      runOptions: {
        entryPoint: PLANNER_ENTRY_POINT,
        forceNewSession: true,
        thinking: "high",
        enforceFinalTag: true,
        promptMode: "minimal",
      },
    })
    .catch((error: unknown) => {
      // What the caller asked for cannot run (an unknown agent, a model the config cannot resolve).
      throw new HybridPlanInputError(
        `cannot prepare the planner turn: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  const configTools = toolsInConfig(plannerPrepared);
  const plannerOutcome = await kernel.executeTurn(
    withNarrowedTools(plannerPrepared, {
      name: "hybrid-planner",
      allow: [],
      allowRule: "tools are off in the planner turn",
    }),
    {
      prompt: options.goal,
      extraSystemPrompt: planningInstructions(configTools.allowed, maxSteps),
      ...(signal === undefined ? {} : { signal }),
    },
  );
  const planner: PlannerTurn = {
    runId: plannerOutcome.runId,
    sessionKey: plannerSessionKey(agentId, planId),
    sessionId: plannerPrepared.transcript.sessionId,
    status: plannerOutcome.status,
    finalText: finalTextOf(plannerOutcome),
    rawText: plannerOutcome.result.assistantText,
  };
  if (plannerOutcome.status !== "ok") {
    return { status: "planner-failed", planId, planner, error: outcomeError(plannerOutcome) };
  }
  const reading = readPlan(planner.finalText, configTools, { maxSteps });
  if (!reading.ok) return { status: "invalid-plan", planId, planner, problems: reading.problems };
  const plan = reading.plan;

  // ── the steps ───────────────────────────────────────────────────────────────────────────────────────
  const steps: StepResult[] = [];
  let budget = plan.limits?.maxToolCalls;
  for (const [index, step] of plan.steps.entries()) {
    const prepared = await kernel.prepareSession({
      agentId,
      sessionKey: planStepsSessionKey(agentId, planId),
      runOptions: {
        entryPoint: PLANNER_ENTRY_POINT,
        ...(plan.limits?.timeoutSeconds === undefined ? {} : { timeoutSeconds: plan.limits.timeoutSeconds }),
      },
    });
    const narrowed = withNarrowedTools(prepared, {
      name: `plan.steps[${index}].tools`,
      allow: step.tools?.allow,
      deny: step.tools?.deny,
    });
    const limit =
      step.maxToolCalls === undefined
        ? budget
        : budget === undefined
          ? step.maxToolCalls
          : Math.min(step.maxToolCalls, budget);
    const stop = new AbortController();
    const onCallerAbort = () => stop.abort();
    signal?.addEventListener("abort", onCallerAbort, { once: true });
    if (signal?.aborted) stop.abort();
    let toolCalls = 0;
    let overLimit = false;
    let outcome: TurnOutcome;
    try {
      outcome = await kernel.executeTurn(narrowed, {
        prompt: `[plan ${planId} step ${index + 1}/${plan.steps.length}: ${step.id}] ${step.prompt}`,
        signal: stop.signal,
        callbacks: {
          onAgentEvent: (event) => {
            if (event.stream !== "tool" || event.data.phase !== "start") return;
            toolCalls += 1;
            if (limit !== undefined && toolCalls > limit && !overLimit) {
              overLimit = true;
              stop.abort();
            }
          },
        },
      });
    } finally {
      signal?.removeEventListener("abort", onCallerAbort);
    }
    if (budget !== undefined) budget = Math.max(0, budget - Math.min(toolCalls, limit ?? toolCalls));
    const error = overLimit
      ? `step "${step.id}" made more than ${limit} tool call${limit === 1 ? "" : "s"} and was stopped`
      : outcome.status === "ok"
        ? undefined
        : outcomeError(outcome);
    const result: StepResult = {
      id: step.id,
      runId: outcome.runId,
      status: overLimit ? "tool-limit" : outcome.status,
      text: finalTextOf(outcome),
      toolCalls,
      tools: narrowed.toolDecisions
        .filter((decision) => decision.allowed)
        .map((decision) => decision.normalized),
      ...(error === undefined ? {} : { error }),
    };
    steps.push(result);
    options.onStep?.(result);
    if (error !== undefined) {
      return { status: "step-failed", planId, planner, plan, steps, failedStep: step.id, error };
    }
  }
  return { status: "ok", planId, planner, plan, steps };
}
