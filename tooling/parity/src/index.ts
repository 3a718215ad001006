// @agent-kernel/parity: the CI parity harness — scenarios run through every app's programmatic entry on one
// fake-llm server; the kernel-level outcome must be the same for every app and each app's delivery must obey
// its declared policy and match its golden. (The OpenClaw fixture recorders live in record/, plain .mjs.)
export { type AppAdapter, abortWhenRequested, type KernelDifferences } from "./apps/adapter.ts";
export { AGENT_POLICY, agentApp } from "./apps/agent.ts";
export { AUTO_REPLY_POLICY, autoReplyApp } from "./apps/auto-reply.ts";
export { CRON_POLICY, cronApp, unshapeCronPrompt } from "./apps/cron.ts";
export { FOLLOWUP_POLICY, followupApp } from "./apps/followup.ts";
export { HYBRID_PLANNER_POLICY, hybridPlannerApp } from "./apps/hybrid-planner.ts";
export { APPS } from "./apps/index.ts";
export { type Cell, deepMerge, prepareCell, rawConfigFor } from "./cell.ts";
export { checkDelivery } from "./delivery-check.ts";
export {
  formatJson,
  GOLDENS_DIR,
  type Golden,
  goldenUpdateRequested,
  readGolden,
  writeGolden,
} from "./goldens.ts";
export {
  type KernelOutcome,
  normaliseText,
  normaliseValue,
  readKernelOutcome,
  recoveryView,
} from "./kernel-outcome.ts";
export { type MatrixOptions, type MatrixResult, runMatrix } from "./matrix.ts";
export { REPORT_DIR, reportMarkdown, writeReport } from "./report.ts";
export { firstDifference, runScenario, type ScenarioRunOptions, scenarioCallsTools } from "./run.ts";
export { loadScenarios, ParityScenarioError, parseScenario, SCENARIOS_DIR } from "./scenarios.ts";
export type * from "./types.ts";
