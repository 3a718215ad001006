// @agent-kernel/hybrid-planner: a planner turn (tools off, `<final>` enforced, thinking high) returns a plan that
// is validated and then run step by step as kernel turns with the plan's tool limits. The package's face for the
// `hybrid-planner` command, programs and the parity harness.
export { type NarrowingLayer, narrowToolPolicy, withNarrowedTools } from "./narrow-policy.ts";
export {
  type Plan,
  type PlanProblem,
  type PlanReading,
  type PlanStep,
  planSchema,
  planStepSchema,
  readPlan,
  type ToolsInConfig,
} from "./plan-schema.ts";
export {
  DEFAULT_MAX_STEPS,
  HybridPlanInputError,
  type HybridPlanOptions,
  type HybridPlanResult,
  PLANNER_ENTRY_POINT,
  type PlannerTurn,
  plannerSessionKey,
  planStepsSessionKey,
  runHybridPlan,
  type StepResult,
} from "./planner.ts";
