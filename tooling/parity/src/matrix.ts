// The whole matrix in one call: loads the scenarios, starts one fake-llm server for all of them, runs a few
// scenarios at a time (each through every app at once), and writes the report. What the vitest suite and a
// by-hand run (`UPDATE_GOLDENS=1`) share. Owns the scheduling. Does not own a cell's verdict (run.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm } from "@agent-kernel/fake-llm";
import type { AppAdapter } from "./apps/adapter.ts";
import { APPS } from "./apps/index.ts";
import { goldenUpdateRequested } from "./goldens.ts";
import { writeReport } from "./report.ts";
import { runScenario } from "./run.ts";
import { loadScenarios } from "./scenarios.ts";
import type { CellResult, ParityScenario } from "./types.ts";

export interface MatrixOptions {
  readonly scenarios?: readonly ParityScenario[];
  readonly apps?: readonly AppAdapter[];
  /** Scenarios in flight at once (each runs its apps at once). Default 4. */
  readonly parallel?: number;
  readonly updateGoldens?: boolean;
  readonly goldensDir?: string;
  /** Where to write the report; `false`: not written. */
  readonly reportDir?: string | false;
  readonly keepDirs?: boolean;
}

export interface MatrixResult {
  readonly scenarios: readonly ParityScenario[];
  readonly apps: readonly AppAdapter[];
  readonly cells: readonly CellResult[];
}

export async function runMatrix(options: MatrixOptions = {}): Promise<MatrixResult> {
  const scenarios = options.scenarios ?? loadScenarios();
  const apps = options.apps ?? APPS;
  const updateGoldens = options.updateGoldens ?? goldenUpdateRequested();
  const baseDir = mkdtempSync(join(tmpdir(), "parity-"));
  const llm = await startFakeLlm();
  const cells: CellResult[] = [];
  try {
    let next = 0;
    const worker = async () => {
      while (next < scenarios.length) {
        const index = next++;
        const scenario = scenarios[index];
        if (scenario === undefined) return;
        cells.push(
          ...(await runScenario(scenario, {
            apps,
            llm,
            baseDir,
            index,
            updateGoldens,
            ...(options.goldensDir === undefined ? {} : { goldensDir: options.goldensDir }),
          })),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.parallel ?? 4) }, worker));
  } finally {
    await llm.close();
    if (!options.keepDirs) rmSync(baseDir, { recursive: true, force: true });
  }
  const order = new Map(scenarios.map((scenario, index) => [scenario.name, index]));
  const appOrder = new Map(apps.map((app, index) => [app.name, index]));
  cells.sort(
    (a, b) =>
      (order.get(a.scenario) ?? 0) - (order.get(b.scenario) ?? 0) ||
      (appOrder.get(a.app) ?? 0) - (appOrder.get(b.app) ?? 0),
  );
  if (options.reportDir !== false)
    writeReport(
      scenarios,
      apps.map((app) => app.name),
      cells,
      options.reportDir,
    );
  return { scenarios, apps, cells };
}
