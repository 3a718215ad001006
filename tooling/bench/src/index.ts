// @agent-kernel/bench: the benchmark harness every package's bench/*.bench.ts uses.
export {
  type BenchCase,
  type BenchSuite,
  type CaseResult,
  defineSuite,
  formatSuite,
  median,
  runSuite,
  type SuiteResult,
} from "./harness.ts";
