// The repository-wide report: a tiny synthetic suite (fake clock, exact figures) through buildReport and its
// Markdown, and the root `bench-all.mjs` end to end over a scratch workspace holding one tiny package.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type BenchReport, buildReport, formatReportMarkdown, parsePackageResults } from "./aggregate.ts";
import { defineSuite, formatSuite, runSuite } from "./harness.ts";

const BENCH_ALL = join(import.meta.dirname, "..", "..", "scripts", "bench-all.mjs");

async function syntheticResults() {
  let clock = 0;
  const takes = (ms: number) => () => {
    clock += ms;
  };
  const suite = defineSuite({
    name: "tiny",
    baseline: "slow",
    iterations: 3,
    warmup: 0,
    cases: [
      { name: "slow", run: takes(10) },
      { name: "fast", target: { minSpeedup: 4, label: "≥ 4× slow" }, run: takes(2) },
      { name: "medium", run: takes(5) },
      { name: "sluggish", run: takes(20) },
    ],
  });
  return runSuite(suite, { now: () => clock });
}

describe("the benchmark report", () => {
  it("states each case's ratio, its target (from the case or a known one) and whether it was met", async () => {
    const suite = await syntheticResults();
    expect(suite.cases[1]).toMatchObject({
      speedupVsBaseline: 5,
      target: { minSpeedup: 4 },
      targetMet: true,
    });
    // A package's own table shows the targets its cases state.
    expect(formatSuite(suite)).toContain("| fast | 2.000 | 2.000 | 5.00× | ≥ 4.00× (≥ 4× slow) | yes |");
    const report = buildReport(
      [
        {
          package: "@x/tiny",
          dir: "packages/tiny",
          ok: true,
          results: { package: "@x/tiny", node: "v22", date: "2026-01-01", suites: [suite] },
        },
        { package: "@x/broken", dir: "packages/broken", ok: false, error: "exit 1" },
      ],
      {
        command: "node bench-all.mjs",
        node: "v22",
        now: new Date(0),
        known: [
          { package: "@x/tiny", case: /^medium$/, minSpeedup: 3, label: "≥ 3×" },
          { package: "@x/tiny", case: /^sluggish$/, minSpeedup: 0.25 },
          { package: "@x/other", case: /./, minSpeedup: 100 },
        ],
        retired: [{ package: "@x/tiny", label: "slow ≥ 9× (old)", bound: "slow's floor | measured: 2×" }],
      },
    );
    expect(report.rows.map((row) => [row.case, row.speedupVsBaseline, row.targetMet])).toEqual([
      ["slow", 1, undefined],
      ["fast", 5, true],
      ["medium", 2, false],
      ["sluggish", 0.5, true],
    ]);
    expect(report.summary).toEqual({ packages: 2, failedPackages: 1, cases: 4, targets: 3, targetsMet: 2 });
    const markdown = formatReportMarkdown(report);
    expect(markdown).toContain("| package | suite | case | median ms | × baseline | target | met? |");
    expect(markdown).toContain("| @x/tiny | tiny | slow (baseline) | 10.00 | 1.00× |  |  |");
    expect(markdown).toContain("| @x/tiny | tiny | fast | 2.00 | 5.00× | ≥ 4.00× (≥ 4× slow) | yes |");
    expect(markdown).toContain("| @x/tiny | tiny | medium | 5.00 | 2.00× | ≥ 3.00× (≥ 3×) | **no** |");
    expect(markdown).toContain("2 of 3 targets met");
    expect(markdown).toContain("- `@x/broken` (packages/broken): exit 1");
    expect(markdown).toContain("- `@x/tiny` (packages/tiny): 2026-01-01");
    // a retired target is listed with what bounds it, and counts as no target
    expect(report.retired).toEqual([
      { package: "@x/tiny", label: "slow ≥ 9× (old)", bound: "slow's floor | measured: 2×" },
    ]);
    expect(markdown).toContain("## Targets retired, with the measurement that bounds them");
    expect(markdown).toContain("- `@x/tiny`, slow ≥ 9× (old): slow's floor \\| measured: 2×");
  });

  it("refuses a results file that is not one, naming it", () => {
    expect(() => parsePackageResults("{", "a.json")).toThrow(/^a\.json: not JSON/);
    expect(() => parsePackageResults("[]", "b.json")).toThrow("b.json: not a bench-results.json");
  });

  it("bench-all.mjs runs every package of a workspace and writes the JSON and Markdown report", () => {
    const root = mkdtempSync(join(tmpdir(), "bench-all-"));
    try {
      const tiny = join(root, "packages", "tiny");
      mkdirSync(join(tiny, "bench"), { recursive: true });
      writeFileSync(
        join(tiny, "package.json"),
        JSON.stringify({ name: "@x/tiny", type: "module", scripts: { bench: "agent-kernel-bench" } }),
      );
      const harness = join(import.meta.dirname, "harness.ts");
      writeFileSync(
        join(tiny, "bench", "tiny.bench.ts"),
        [
          `import { defineSuite } from ${JSON.stringify(harness)};`,
          "export default defineSuite({",
          '  name: "tiny sums", baseline: "sum 1000", iterations: 3, warmup: 0,',
          "  cases: [",
          '    { name: "sum 1000", run: () => { let s = 0; for (let i = 0; i < 1000; i++) s += i; return s; } },',
          '    { name: "sum 10", target: { minSpeedup: 0.001 }, run: () => { let s = 0; for (let i = 0; i < 10; i++) s += i; return s; } },',
          "  ],",
          "});",
        ].join("\n"),
      );
      // A folder without benchmarks is not a bench package.
      mkdirSync(join(root, "packages", "plain"));
      writeFileSync(join(root, "packages", "plain", "package.json"), JSON.stringify({ name: "@x/plain" }));
      const out = join(root, "report");
      const run = spawnSync(process.execPath, [BENCH_ALL, "--root", root, "--out", out], {
        encoding: "utf8",
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      const report = JSON.parse(readFileSync(`${out}.json`, "utf8")) as BenchReport;
      expect(report.packages).toEqual([
        expect.objectContaining({ package: "@x/tiny", dir: "packages/tiny", ok: true }),
      ]);
      expect(report.rows.map((row) => [row.suite, row.case, row.baseline, row.targetMet])).toEqual([
        ["tiny sums", "sum 1000", true, undefined],
        ["tiny sums", "sum 10", false, true],
      ]);
      expect(report.command).toContain("bench-all.mjs --root");
      const markdown = readFileSync(`${out}.md`, "utf8");
      expect(markdown).toContain("| @x/tiny | tiny sums | sum 1000 (baseline) |");
      expect(markdown).toContain("1 of 1 targets met");
      // The package's own bench-results.json is written as before.
      expect(JSON.parse(readFileSync(join(tiny, "bench-results.json"), "utf8"))).toMatchObject({
        package: "@x/tiny",
      });
      // Aggregating the last results without running gives the same rows.
      const again = spawnSync(process.execPath, [BENCH_ALL, "--root", root, "--out", out, "--from-results"], {
        encoding: "utf8",
      });
      expect(again.status, again.stderr).toBe(0);
      expect((JSON.parse(readFileSync(`${out}.json`, "utf8")) as BenchReport).rows).toHaveLength(2);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("bench-all.mjs exits non-zero when a package's benchmarks fail, and still writes the report", () => {
    const root = mkdtempSync(join(tmpdir(), "bench-all-"));
    try {
      const broken = join(root, "packages", "broken");
      mkdirSync(join(broken, "bench"), { recursive: true });
      writeFileSync(
        join(broken, "package.json"),
        JSON.stringify({ name: "@x/broken", scripts: { bench: "x" } }),
      );
      writeFileSync(join(broken, "bench", "broken.bench.ts"), 'throw new Error("bench file broken");\n');
      const out = join(root, "report");
      const run = spawnSync(process.execPath, [BENCH_ALL, "--root", root, "--out", out], {
        encoding: "utf8",
      });
      expect(run.status).toBe(1);
      const report = JSON.parse(readFileSync(`${out}.json`, "utf8")) as BenchReport;
      expect(report.packages).toEqual([expect.objectContaining({ package: "@x/broken", ok: false })]);
      expect(readFileSync(`${out}.md`, "utf8")).toContain("## Packages whose benchmarks failed");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
