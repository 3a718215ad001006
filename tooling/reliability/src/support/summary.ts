// The reliability suite's summary: what every file tried and whether anything was lost. Owns: recording one
// file's counts (from a test worker) and adding them up once every file ran (global-summary.ts, the vitest
// global setup). Does not own: the checks (each test file decides what a trial, a fault, an input and a loss
// are, and fails itself when something was lost; the summary only reports what passed through).
//
// What the words mean: a **trial** is one whole scenario run end to end (a child killed, a turn under a fault,
// a process racing another); a **fault** is one failure injected (a kill, an HTTP error, a full disk, a
// corrupt row); an **input** is one generated value fed to a parser or an API; **lost** counts what a trial
// found missing or changed that had been committed (always 0 in a passing run: the file fails otherwise).
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, inject } from "vitest";

export interface ReliabilityCounts {
  readonly trials?: number;
  readonly faults?: number;
  readonly inputs?: number;
  readonly lost?: number;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Where test files record their counts; set by global-summary.ts. */
    reliabilitySummaryDir: string;
  }
}

export const COUNTS_FILE = "counts.jsonl";

/** Adds `counts` to the summary under `suite` (a file or scenario name). */
export function recordReliability(suite: string, counts: ReliabilityCounts): void {
  const dir = inject("reliabilitySummaryDir");
  if (typeof dir !== "string" || dir === "") return;
  appendFileSync(join(dir, COUNTS_FILE), `${JSON.stringify({ suite, ...counts })}\n`);
}

/**
 * For a file of property tests: `const inputs = countInputs("fuzz")`, then `{ numRuns: inputs(RUNS) }` at each
 * property. The number of generated inputs is recorded once the file's tests ran.
 */
export function countInputs(suite: string): (numRuns: number) => number {
  let total = 0;
  afterAll(() => {
    if (total > 0) recordReliability(suite, { inputs: total, lost: 0 });
  });
  return (numRuns) => {
    total += numRuns;
    return numRuns;
  };
}
