// @agent-kernel/reliability: the reliability suite (kill -9 crash trials on SQLite, the fault matrix under load,
// fuzzing of every outside-input parser, security checks), run by `vitest run` in this package. The face exports
// the helpers the suites share, for other packages' crash or fault tests; it owns no product code.
export { type ChildExit, compileCacheEnv, type LineChild, startLineChild } from "./support/child-process.ts";
export { clearErrorOrResult } from "./support/expect-clear.ts";
export { randomInt, runSeed, seededRandom } from "./support/random.ts";
export { fillLeaving, makeReadOnly, mountSmallDisk, withDatabase } from "./support/storage-faults.ts";
export { countUserMessages, treeProblems, userMessages } from "./support/transcript-checks.ts";
export {
  crashTrialStep,
  type FakeLlmConfigOptions,
  fakeLlmConfig,
  lastIsToolResult,
  lastUserText,
  MODEL_REF,
} from "./support/turn-setup.ts";
