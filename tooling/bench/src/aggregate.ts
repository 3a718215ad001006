// The repository-wide benchmark report: every package's `bench-results.json` (what cli.ts writes) gathered into
// one JSON report and one Markdown table — package, suite, case, median, × baseline, target, met? — with the
// targets a bench file states on its cases, or else those the aggregating script supplies by name. Owns the
// report's shape and its Markdown; running the packages is tooling/scripts/bench-all.mjs.
import { type BenchTarget, type CaseResult, formatTarget, type SuiteResult } from "./harness.ts";

/** One package's `bench-results.json`. */
export interface PackageResults {
  readonly package: string;
  readonly node: string;
  readonly date: string;
  readonly suites: readonly SuiteResult[];
}

/** A target for cases of a package whose bench file does not state it: matched by suite and case name. */
export interface KnownTarget extends BenchTarget {
  readonly package: string;
  /** Matches the suite name; absent: any suite of the package. */
  readonly suite?: RegExp;
  readonly case: RegExp;
  /** Matches the suite's baseline name (a ratio against another baseline means something else). */
  readonly baseline?: RegExp;
}

/**
 * A target the report no longer checks, with the measurement that bounds it: listed under the table so a
 * reader sees why it went (and what replaced it), not silently dropped.
 */
export interface RetiredTarget {
  readonly package: string;
  /** The target as it read, e.g. "branch read ≥ 5× pi opening its file (issue 3)". */
  readonly label: string;
  /** What bounds it, measured (and what replaced it). */
  readonly bound: string;
}

/** A package's run: its results, or why there are none. */
export type PackageRun =
  | { readonly package: string; readonly dir: string; readonly ok: true; readonly results: PackageResults }
  | { readonly package: string; readonly dir: string; readonly ok: false; readonly error: string };

export interface ReportRow {
  readonly package: string;
  readonly suite: string;
  readonly case: string;
  readonly baseline: boolean;
  readonly medianMs: number;
  /** The median's unit when not milliseconds (a suite that measures something else, e.g. KiB). */
  readonly unit?: string;
  readonly speedupVsBaseline: number;
  readonly target?: BenchTarget;
  readonly targetMet?: boolean;
}

export interface BenchReport {
  readonly generatedAt: string;
  readonly command: string;
  readonly node: string;
  readonly packages: readonly {
    readonly package: string;
    readonly dir: string;
    readonly ok: boolean;
    readonly error?: string;
    readonly date?: string;
  }[];
  readonly rows: readonly ReportRow[];
  /** Targets no longer checked, with what bounds them (empty: none). */
  readonly retired: readonly RetiredTarget[];
  readonly summary: {
    readonly packages: number;
    readonly failedPackages: number;
    readonly cases: number;
    readonly targets: number;
    readonly targetsMet: number;
  };
}

function targetFor(
  packageName: string,
  suite: SuiteResult,
  result: CaseResult,
  known: readonly KnownTarget[],
): BenchTarget | undefined {
  if (result.target !== undefined) return result.target;
  const match = known.find(
    (target) =>
      target.package === packageName &&
      (target.suite === undefined || target.suite.test(suite.suite)) &&
      (target.baseline === undefined || target.baseline.test(suite.baseline)) &&
      target.case.test(result.name),
  );
  if (match === undefined) return undefined;
  return { minSpeedup: match.minSpeedup, ...(match.label === undefined ? {} : { label: match.label }) };
}

export function buildReport(
  runs: readonly PackageRun[],
  options: {
    readonly command: string;
    readonly node: string;
    readonly now?: Date;
    readonly known?: readonly KnownTarget[];
    readonly retired?: readonly RetiredTarget[];
  },
): BenchReport {
  const rows: ReportRow[] = [];
  for (const run of runs) {
    if (!run.ok) continue;
    for (const suite of run.results.suites) {
      for (const result of suite.cases) {
        const target = targetFor(run.package, suite, result, options.known ?? []);
        rows.push({
          package: run.package,
          suite: suite.suite,
          case: result.name,
          baseline: result.name === suite.baseline,
          medianMs: result.medianMs,
          ...(suite.unit === undefined ? {} : { unit: suite.unit }),
          speedupVsBaseline: result.speedupVsBaseline,
          ...(target === undefined
            ? {}
            : { target, targetMet: result.targetMet ?? result.speedupVsBaseline >= target.minSpeedup }),
        });
      }
    }
  }
  const targeted = rows.filter((row) => row.target !== undefined);
  return {
    generatedAt: (options.now ?? new Date()).toISOString(),
    command: options.command,
    node: options.node,
    packages: runs.map((run) =>
      run.ok
        ? { package: run.package, dir: run.dir, ok: true, date: run.results.date }
        : { package: run.package, dir: run.dir, ok: false, error: run.error },
    ),
    rows,
    retired: options.retired ?? [],
    summary: {
      packages: runs.length,
      failedPackages: runs.filter((run) => !run.ok).length,
      cases: rows.length,
      targets: targeted.length,
      targetsMet: targeted.filter((row) => row.targetMet === true).length,
    },
  };
}

/** Table cells must not break the table. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  return ms >= 100 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
}

export function formatReportMarkdown(report: BenchReport): string {
  const { summary } = report;
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  const header = ["package", "suite", "case", "median ms", "× baseline", "target", "met?"];
  const lines = [
    "# Benchmark report",
    "",
    `Generated ${report.generatedAt} by \`${report.command}\` on Node ${report.node}. Every figure is a ratio`,
    "against the suite's baseline case measured in the same run (`× baseline` > 1: faster than the baseline).",
    "",
    `${summary.packages} packages (${summary.failedPackages} failed), ${summary.cases} cases, ` +
      `${summary.targetsMet} of ${summary.targets} targets met.`,
    "",
    line(header),
    line(header.map(() => "---")),
    ...report.rows.map((row) =>
      line([
        cell(row.package),
        cell(row.suite),
        cell(row.baseline ? `${row.case} (baseline)` : row.case),
        row.unit === undefined ? formatMs(row.medianMs) : `${formatMs(row.medianMs)} ${row.unit}`,
        `${row.speedupVsBaseline.toFixed(2)}×`,
        cell(formatTarget(row.target)),
        row.targetMet === undefined ? "" : row.targetMet ? "yes" : "**no**",
      ]),
    ),
  ];
  if (report.retired.length > 0) {
    lines.push("", "## Targets retired, with the measurement that bounds them", "");
    for (const entry of report.retired)
      lines.push(`- \`${entry.package}\`, ${cell(entry.label)}: ${cell(entry.bound)}`);
  }
  const measured = report.packages.filter((entry) => entry.ok);
  if (measured.length > 0) {
    lines.push("", "## When each package was measured", "");
    for (const entry of measured)
      lines.push(`- \`${entry.package}\` (${entry.dir}): ${entry.date ?? "unknown"}`);
  }
  const failed = report.packages.filter((entry) => !entry.ok);
  if (failed.length > 0) {
    lines.push("", "## Packages whose benchmarks failed", "");
    for (const entry of failed)
      lines.push(`- \`${entry.package}\` (${entry.dir}): ${cell(entry.error ?? "")}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Reads a `bench-results.json` text; throws naming the file when it is not one. */
export function parsePackageResults(text: string, file: string): PackageResults {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const record = value as Partial<PackageResults> | null;
  if (
    record === null ||
    typeof record !== "object" ||
    typeof record.package !== "string" ||
    !Array.isArray(record.suites)
  ) {
    throw new Error(`${file}: not a bench-results.json (expected { package, suites: [...] })`);
  }
  return {
    package: record.package,
    node: typeof record.node === "string" ? record.node : "",
    date: typeof record.date === "string" ? record.date : "",
    suites: record.suites,
  };
}
