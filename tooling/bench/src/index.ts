// @agent-kernel/bench: the benchmark harness every package's bench/*.bench.ts uses.
export {
  type BenchReport,
  buildReport,
  formatReportMarkdown,
  type KnownTarget,
  type PackageResults,
  type PackageRun,
  parsePackageResults,
  type ReportRow,
  type RetiredTarget,
} from "./aggregate.ts";
export {
  type BenchCase,
  type BenchSuite,
  type BenchTarget,
  type CaseResult,
  defineSuite,
  formatSuite,
  formatTarget,
  median,
  runSuite,
  type SuiteResult,
} from "./harness.ts";
