// Running the matrix: every scenario through every app, each cell in its own scratch dir on one shared
// fake-llm server. Per cell: the app's delivery, the kernel-level outcome read back from its store, the
// scenario's expected statuses, the app's declared policy, and the golden (the kernel outcome must equal the
// scenario's one golden kernel outcome — the same for every app — and the delivery that app's golden
// delivery). Owns the verdict of a cell. Does not own running an app (apps/*.ts) or the report (report.ts).
import { isDeepStrictEqual } from "node:util";
import type { FakeLlm } from "@agent-kernel/fake-llm";
import type { AppAdapter } from "./apps/adapter.ts";
import { prepareCell } from "./cell.ts";
import { checkDelivery } from "./delivery-check.ts";
import { type Golden, readGolden, writeGolden } from "./goldens.ts";
import { type KernelOutcome, readKernelOutcome, recoveryView } from "./kernel-outcome.ts";
import type { CellResult, Delivered, ParityScenario } from "./types.ts";

/** The path and both sides of the first difference between two JSON values. */
export function firstDifference(expected: unknown, actual: unknown, path = "$"): string | undefined {
  if (isDeepStrictEqual(expected, actual)) return undefined;
  if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      const found = firstDifference(expected[i], actual[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
  } else if (
    typeof expected === "object" &&
    expected !== null &&
    typeof actual === "object" &&
    actual !== null &&
    !Array.isArray(expected) &&
    !Array.isArray(actual)
  ) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const key of [...keys].sort()) {
      const found = firstDifference(
        (expected as Record<string, unknown>)[key],
        (actual as Record<string, unknown>)[key],
        `${path}.${key}`,
      );
      if (found !== undefined) return found;
    }
  }
  const show = (value: unknown) => {
    const text = JSON.stringify(value);
    return text === undefined ? "(absent)" : text.length > 300 ? `${text.slice(0, 300)}…` : text;
  };
  return `${path}: expected ${show(expected)}, got ${show(actual)}`;
}

interface RawCell {
  readonly app: AppAdapter;
  readonly result?: {
    readonly kernel: KernelOutcome;
    readonly delivered: readonly Delivered[];
    readonly notes: readonly string[];
  };
  readonly skipped?: { readonly status: "not wired" | "not applicable"; readonly why: string };
  readonly crash?: string;
  readonly ms: number;
}

async function runCell(
  app: AppAdapter,
  scenario: ParityScenario,
  index: number,
  baseDir: string,
  llm: FakeLlm,
): Promise<RawCell> {
  const started = performance.now();
  if (app.notWired !== undefined) return { app, skipped: { status: "not wired", why: app.notWired }, ms: 0 };
  if (scenario.needsMessageTool && !app.policy.messageTool)
    return {
      app,
      skipped: {
        status: "not applicable",
        why: `${app.name} offers no message tool (no conversation to send to)`,
      },
      ms: 0,
    };
  if (app.kernelDifferences?.fixedRunOptions !== undefined && scenarioCallsTools(scenario))
    return {
      app,
      skipped: {
        status: "not applicable",
        why: `${app.name} fixes its run options (${app.kernelDifferences.fixedRunOptions}); this scenario's model calls tools`,
      },
      ms: 0,
    };
  if (app.kernelDifferences?.isolatedSessions === true && scenario.inbound.length > 1)
    return {
      app,
      skipped: {
        status: "not applicable",
        why: `${app.name} runs every turn in a new session; this scenario needs one session across turns`,
      },
      ms: 0,
    };
  try {
    const cell = prepareCell({ scenario, app: app.name, index, baseDir, llm });
    const run = await app.run(cell);
    const unshape = app.kernelDifferences?.unshapePrompt;
    const kernel = await readKernelOutcome(cell, unshape === undefined ? {} : { unshapePrompt: unshape });
    return {
      app,
      result: { kernel, delivered: run.delivered, notes: run.notes ?? [] },
      ms: performance.now() - started,
    };
  } catch (error) {
    return {
      app,
      crash: error instanceof Error ? (error.stack ?? error.message) : String(error),
      ms: performance.now() - started,
    };
  }
}

/** Whether the scripted model calls a tool anywhere in the scenario. */
export function scenarioCallsTools(scenario: ParityScenario): boolean {
  return scenario.model.some((rule) =>
    rule.steps.some((step) => {
      if (typeof step !== "object" || step === null) return false;
      const fields = step as { toolCalls?: unknown[]; content?: { type?: string }[] };
      return (
        (fields.toolCalls?.length ?? 0) > 0 ||
        (fields.content ?? []).some((block) => block.type === "toolCall")
      );
    }),
  );
}

function statusesOf(kernel: KernelOutcome): string[] {
  return kernel.runs.map((run) => String((run as { record?: { status?: unknown } }).record?.status ?? ""));
}

function blockStreamingOn(scenario: ParityScenario): boolean {
  const agents = scenario.config?.agents as { defaults?: { blockStreamingDefault?: unknown } } | undefined;
  return agents?.defaults?.blockStreamingDefault === "on";
}

export interface ScenarioRunOptions {
  readonly apps: readonly AppAdapter[];
  readonly llm: FakeLlm;
  readonly baseDir: string;
  /** A number unique to this scenario among the ones sharing `llm` (cells' keys derive from it). */
  readonly index: number;
  readonly updateGoldens: boolean;
  readonly goldensDir?: string;
}

/** Runs one scenario through every app (at once) and judges each cell. */
export async function runScenario(
  scenario: ParityScenario,
  options: ScenarioRunOptions,
): Promise<CellResult[]> {
  const raw = await Promise.all(
    options.apps.map((app, appIndex) =>
      runCell(app, scenario, options.index * 100 + appIndex, options.baseDir, options.llm),
    ),
  );
  let golden = readGolden(scenario.name, options.goldensDir);
  if (options.updateGoldens) {
    // The reference kernel outcome is the first app's that ran (the CLI); every other app must equal it.
    const reference = raw.find((cell) => cell.result !== undefined)?.result?.kernel;
    if (reference !== undefined) {
      const delivery: Record<string, readonly Delivered[]> = { ...(golden?.delivery ?? {}) };
      for (const cell of raw) if (cell.result) delivery[cell.app.name] = cell.result.delivered;
      golden = { scenario: scenario.name, kernel: reference, delivery } satisfies Golden;
      writeGolden(golden, options.goldensDir);
    }
  }
  return raw.map((cell): CellResult => {
    const base = { scenario: scenario.name, app: cell.app.name, ms: Math.round(cell.ms) };
    if (cell.skipped)
      return { ...base, status: cell.skipped.status, problems: [], notes: [cell.skipped.why] };
    if (cell.result === undefined)
      return {
        ...base,
        status: "fail",
        problems: [`the app failed: ${cell.crash ?? "no result"}`],
        notes: [],
      };
    const { kernel, delivered, notes } = cell.result;
    const problems: string[] = [];
    const statuses = statusesOf(kernel);
    if (!isDeepStrictEqual(statuses, scenario.expectStatuses))
      problems.push(
        `run statuses: expected ${JSON.stringify(scenario.expectStatuses)}, got ${JSON.stringify(statuses)}`,
      );
    problems.push(
      ...checkDelivery(cell.app.policy, kernel, delivered, { blockStreaming: blockStreamingOn(scenario) }),
    );
    if (golden === undefined) {
      problems.push(`no golden for ${scenario.name}: record it with UPDATE_GOLDENS=1 and review the file`);
    } else {
      const recoveryOnly = cell.app.kernelDifferences?.fixedRunOptions !== undefined;
      const kernelDiff = recoveryOnly
        ? firstDifference(recoveryView(golden.kernel), recoveryView(kernel))
        : firstDifference(golden.kernel, kernel);
      if (kernelDiff !== undefined)
        problems.push(
          `kernel outcome${recoveryOnly ? " (recovery view)" : ""} differs from the scenario's golden: ${kernelDiff}`,
        );
      const expectedDelivery = golden.delivery[cell.app.name];
      if (expectedDelivery === undefined)
        problems.push(`no golden delivery for ${cell.app.name}: record it with UPDATE_GOLDENS=1`);
      else {
        const deliveryDiff = firstDifference(expectedDelivery, delivered);
        if (deliveryDiff !== undefined) problems.push(`delivery differs from the golden: ${deliveryDiff}`);
      }
    }
    return { ...base, status: problems.length === 0 ? "pass" : "fail", problems, notes, kernel, delivered };
  });
}
