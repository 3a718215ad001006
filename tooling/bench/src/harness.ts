// The benchmark harness. Owns: timing each case of a suite in one process
// run, the statistics, and the ratio of every case against the suite's
// baseline case (speed is reported relative to a baseline measured in the
// same run, never as absolute targets in tests). Does not own: what is
// measured (each package's bench/*.bench.ts) or aggregating packages
// (the root `pnpm bench`, aggregate.ts).
import { performance } from "node:perf_hooks";

/** A figure a case must reach, as a ratio against the suite's baseline (the only kind of target we state). */
export interface BenchTarget {
  /** `× baseline` must be at least this: 5 = five times faster; 0.8 = at most 1.25× the baseline's time. */
  readonly minSpeedup: number;
  /** How the target reads in the issue or docs, e.g. "≤ 1.25× bare pi". */
  readonly label?: string;
}

export interface BenchCase<State = unknown> {
  readonly name: string;
  /** The figure this case must reach; reported with whether it was met. */
  readonly target?: BenchTarget;
  /** Untimed, before every iteration: fresh state for the timed part (a new database, a new stream). */
  readonly before?: () => State | Promise<State>;
  /** The timed work. */
  readonly run: (state: State) => unknown | Promise<unknown>;
  /**
   * A figure other than time, read after `run` (e.g. heap bytes it left held): it replaces the elapsed time
   * as the iteration's sample, so lower is better as with time. Every case of a suite that measures must
   * measure the same thing, in the suite's `unit`.
   */
  readonly measure?: (state: State) => number | Promise<number>;
  /** Untimed, after every iteration. */
  readonly after?: (state: State) => unknown | Promise<unknown>;
}

export interface BenchSuite {
  readonly name: string;
  /** The case every other case is compared with; must be one of `cases`. */
  readonly baseline: string;
  // biome-ignore lint/suspicious/noExplicitAny: each case has its own state type
  readonly cases: readonly BenchCase<any>[];
  /** Timed iterations per case (default 10). */
  readonly iterations?: number;
  /** Untimed iterations first, to warm the JIT and caches (default 2). */
  readonly warmup?: number;
  /** Bytes one iteration processes, to report MB/s. */
  readonly bytesPerIteration?: number;
  /** Items one iteration processes (entries, tools), to report items/s. */
  readonly itemsPerIteration?: number;
  /** What the cases' samples are in when they `measure` something other than time (default "ms"). */
  readonly unit?: string;
}

/** Declares a suite; the identity function, for type checking in bench files. */
export function defineSuite(suite: BenchSuite): BenchSuite {
  if (!suite.cases.some((c) => c.name === suite.baseline)) {
    throw new Error(`bench suite "${suite.name}": baseline "${suite.baseline}" is not one of its cases`);
  }
  return suite;
}

export interface CaseResult {
  readonly name: string;
  readonly iterations: number;
  readonly meanMs: number;
  readonly medianMs: number;
  readonly minMs: number;
  readonly maxMs: number;
  /** Median time of the baseline divided by this case's median time: > 1 means faster than the baseline. */
  readonly speedupVsBaseline: number;
  readonly mbPerSecond?: number;
  readonly itemsPerSecond?: number;
  readonly target?: BenchTarget;
  /** Present with `target`: whether `speedupVsBaseline` reached it. */
  readonly targetMet?: boolean;
}

export interface SuiteResult {
  readonly suite: string;
  readonly baseline: string;
  /** The samples' unit when not milliseconds (then `medianMs`, `minMs`… hold figures in it). */
  readonly unit?: string;
  readonly cases: readonly CaseResult[];
}

/** `now` replaces the clock (milliseconds), so the harness's arithmetic can be tested without timing anything. */
export async function runSuite(
  suite: BenchSuite,
  options: { readonly now?: () => number } = {},
): Promise<SuiteResult> {
  const now = options.now ?? (() => performance.now());
  const iterations = suite.iterations ?? 10;
  const warmup = suite.warmup ?? 2;
  const timings = new Map<string, number[]>();
  // Cases are interleaved iteration by iteration, so a slow phase of the
  // machine (another process, GC of an earlier case) hits every case alike.
  for (let round = 0; round < warmup + iterations; round++) {
    for (const benchCase of suite.cases) {
      const state = await benchCase.before?.();
      const start = now();
      await benchCase.run(state);
      const elapsed = benchCase.measure === undefined ? now() - start : await benchCase.measure(state);
      await benchCase.after?.(state);
      if (round >= warmup) {
        const list = timings.get(benchCase.name) ?? [];
        list.push(elapsed);
        timings.set(benchCase.name, list);
      }
    }
  }
  const baselineMedian = median(timings.get(suite.baseline) ?? []);
  const cases = suite.cases.map((benchCase): CaseResult => {
    const samples = timings.get(benchCase.name) ?? [];
    const medianMs = median(samples);
    const seconds = medianMs / 1000;
    return {
      name: benchCase.name,
      iterations: samples.length,
      meanMs: samples.reduce((sum, value) => sum + value, 0) / samples.length,
      medianMs,
      minMs: Math.min(...samples),
      maxMs: Math.max(...samples),
      speedupVsBaseline: baselineMedian / medianMs,
      ...(suite.bytesPerIteration === undefined
        ? {}
        : { mbPerSecond: suite.bytesPerIteration / 1e6 / seconds }),
      ...(suite.itemsPerIteration === undefined ? {} : { itemsPerSecond: suite.itemsPerIteration / seconds }),
      ...(benchCase.target === undefined
        ? {}
        : {
            target: benchCase.target,
            targetMet: baselineMedian / medianMs >= benchCase.target.minSpeedup,
          }),
    };
  });
  return { suite: suite.name, baseline: suite.baseline, ...(suite.unit ? { unit: suite.unit } : {}), cases };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A Markdown table of one suite, ratios against its baseline. */
export function formatSuite(result: SuiteResult): string {
  const hasMb = result.cases.some((c) => c.mbPerSecond !== undefined);
  const hasItems = result.cases.some((c) => c.itemsPerSecond !== undefined);
  const hasTarget = result.cases.some((c) => c.target !== undefined);
  const unit = result.unit ?? "ms";
  const header = [
    "case",
    `median ${unit}`,
    `min ${unit}`,
    "× baseline",
    ...(hasMb ? ["MB/s"] : []),
    ...(hasItems ? ["items/s"] : []),
    ...(hasTarget ? ["target", "met?"] : []),
  ];
  const rows = result.cases.map((c) => [
    c.name === result.baseline ? `${c.name} (baseline)` : c.name,
    c.medianMs.toFixed(3),
    c.minMs.toFixed(3),
    `${c.speedupVsBaseline.toFixed(2)}×`,
    ...(hasMb ? [c.mbPerSecond?.toFixed(2) ?? ""] : []),
    ...(hasItems ? [c.itemsPerSecond === undefined ? "" : Math.round(c.itemsPerSecond).toString()] : []),
    ...(hasTarget
      ? [formatTarget(c.target), c.targetMet === undefined ? "" : c.targetMet ? "yes" : "**no**"]
      : []),
  ]);
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [
    `### ${result.suite}`,
    "",
    line(header),
    line(header.map(() => "---")),
    ...rows.map(line),
    "",
    "`× baseline` > 1 means faster than the baseline (median over the iterations).",
  ].join("\n");
}

/** `≥ 0.80× (≤ 1.25× bare pi)`; empty without a target. */
export function formatTarget(target: BenchTarget | undefined): string {
  if (target === undefined) return "";
  const ratio = `≥ ${target.minSpeedup.toFixed(2)}×`;
  return target.label === undefined ? ratio : `${ratio} (${target.label})`;
}
