// The CI parity suite: every scenario × every app, one test per cell. The matrix runs once (one fake-llm
// server, a few scenarios at a time); each test then asserts its cell: the kernel-level outcome equals the
// scenario's golden (the same for every app), the delivery obeys the app's declared policy and equals its
// golden. An app whose programmatic entry is not there yet is skipped and reported "not wired".
import { beforeAll, describe, expect, it } from "vitest";
import { APPS } from "../src/apps/index.ts";
import { type MatrixResult, runMatrix } from "../src/matrix.ts";
import { scenarioCallsTools } from "../src/run.ts";
import { loadScenarios } from "../src/scenarios.ts";

const scenarios = loadScenarios();
let matrix: MatrixResult;

beforeAll(async () => {
  matrix = await runMatrix({ scenarios });
}, 240_000);

describe("the parity matrix", () => {
  it("has at least 25 scenarios and every app", () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(25);
    expect(APPS.map((app) => app.name)).toEqual([
      "agent",
      "auto-reply",
      "followup",
      "cron",
      "hybrid-planner",
    ]);
  });
});

for (const scenario of scenarios) {
  describe(scenario.name, () => {
    for (const app of APPS) {
      const inapplicable =
        (scenario.needsMessageTool === true && !app.policy.messageTool) ||
        (app.kernelDifferences?.isolatedSessions === true && scenario.inbound.length > 1) ||
        (app.kernelDifferences?.fixedRunOptions !== undefined && scenarioCallsTools(scenario));
      it.skipIf(app.notWired !== undefined || inapplicable)(app.name, () => {
        const cell = matrix.cells.find((c) => c.scenario === scenario.name && c.app === app.name);
        expect(cell?.problems ?? ["no result"]).toEqual([]);
        expect(cell?.status).toBe("pass");
      });
    }
  });
}
