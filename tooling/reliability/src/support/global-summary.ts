// The reliability suite's global setup: gives the test files a folder to record their counts in
// (summary.ts) and, once every file ran, prints the summary — per suite and in total, one line each:
// `reliability: <trials> trials, <faults> faults, <inputs> inputs, <lost> lost` — and writes it to
// `reliability-summary.json` beside the package (docs/benchmarks.md quotes it). Owns the adding up only.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { COUNTS_FILE } from "./summary.ts";

interface Totals {
  trials: number;
  faults: number;
  inputs: number;
  lost: number;
}

const PACKAGE_DIR = join(import.meta.dirname, "..", "..");

function line(name: string, totals: Totals): string {
  const n = (value: number) => value.toLocaleString("en-US");
  return `${name}: ${n(totals.trials)} trials, ${n(totals.faults)} faults, ${n(totals.inputs)} inputs, ${n(totals.lost)} lost`;
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), "agent-kernel-reliability-summary-"));
  project.provide("reliabilitySummaryDir", dir);
  return () => {
    let text = "";
    try {
      text = readFileSync(join(dir, COUNTS_FILE), "utf8");
    } catch {
      // no file recorded anything (a filtered run)
    }
    rmSync(dir, { recursive: true, force: true });
    const bySuite = new Map<string, Totals>();
    for (const row of text.split("\n").filter(Boolean)) {
      const {
        suite,
        trials = 0,
        faults = 0,
        inputs = 0,
        lost = 0,
      } = JSON.parse(row) as Partial<Totals> & {
        suite: string;
      };
      const totals = bySuite.get(suite) ?? { trials: 0, faults: 0, inputs: 0, lost: 0 };
      totals.trials += trials;
      totals.faults += faults;
      totals.inputs += inputs;
      totals.lost += lost;
      bySuite.set(suite, totals);
    }
    if (bySuite.size === 0) return;
    const all: Totals = { trials: 0, faults: 0, inputs: 0, lost: 0 };
    for (const totals of bySuite.values()) {
      all.trials += totals.trials;
      all.faults += totals.faults;
      all.inputs += totals.inputs;
      all.lost += totals.lost;
    }
    const suites = [...bySuite.entries()].sort(([a], [b]) => a.localeCompare(b));
    const report = [...suites.map(([suite, totals]) => `  ${line(suite, totals)}`), line("reliability", all)];
    console.log(report.join("\n"));
    writeFileSync(
      join(PACKAGE_DIR, "reliability-summary.json"),
      `${JSON.stringify({ total: all, suites: Object.fromEntries(suites) }, null, 2)}\n`,
    );
  };
}
