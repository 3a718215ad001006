// The `hybrid-planner` command line: `hybrid-planner -m <goal>` plans, validates and runs the plan through
// `runHybridPlan`. Owns flag parsing (node:util parseArgs), the config and state-dir precedence (as the `agent`
// command: `--config`, $AGENT_KERNEL_CONFIG, ~/.agent-kernel/config.json5; `--state-dir`,
// $AGENT_KERNEL_STATE_DIR, `store.stateDir`, ~/.agent-kernel), output and exit codes. Does not own planning.
import { parseArgs } from "node:util";
import { applyStateDir, ConfigError, loadConfig } from "@agent-kernel/config";
import { KernelInputError } from "@agent-kernel/kernel";
import { HybridPlanInputError, type HybridPlanResult, runHybridPlan } from "./planner.ts";

export const EXIT = { ok: 0, failed: 1, usage: 2, invalidPlan: 3, interrupted: 130 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

const HELP = `Usage: hybrid-planner -m <goal> [options]

Plans the goal with one planner turn (tools off, <final> enforced, thinking high), checks the plan, then runs its
steps as agent turns with the plan's tool limits. An invalid plan is reported and never run.

Options:
  -m, --message <goal>   what to plan for (required)
  --agent <id>           the agent (default: the configured default agent)
  --plan-id <id>         names the plan's sessions (default: random)
  --max-steps <n>        plans with more steps are invalid (default 8)
  --json                 print the result as JSON
  --config <file>        config file (default: $AGENT_KERNEL_CONFIG, else ~/.agent-kernel/config.json5)
  --state-dir <dir>      state dir (default: $AGENT_KERNEL_STATE_DIR, else store.stateDir, else ~/.agent-kernel)
  -h, --help             this help

Exit codes: 0 ok; 1 the planner turn or a step failed; 2 usage or invalid config; 3 the plan is invalid (not
run); 130 interrupted.`;

class UsageError extends Error {}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      message: { type: "string", short: "m" },
      agent: { type: "string" },
      "plan-id": { type: "string" },
      "max-steps": { type: "string" },
      json: { type: "boolean" },
      config: { type: "string" },
      "state-dir": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

function printResult(result: HybridPlanResult, io: CliIo): void {
  const out = (text: string) => io.stdout.write(`${text}\n`);
  const err = (text: string) => io.stderr.write(`hybrid-planner: ${text}\n`);
  if (result.status === "invalid-plan") {
    const count = result.problems.length === 1 ? "1 problem" : `${result.problems.length} problems`;
    err(`the plan is invalid and was not run (${count}):`);
    for (const problem of result.problems) io.stderr.write(`  - ${problem.path}: ${problem.message}\n`);
    return;
  }
  if (result.status === "planner-failed") {
    err(`the planner turn failed (run ${result.planner.runId}): ${result.error}`);
    return;
  }
  for (const step of result.steps) out(`[${step.id}] ${step.text}`);
  if (result.status === "step-failed") err(`step "${result.failedStep}" failed: ${result.error}`);
}

/** Parses `argv` (without node and the script) and runs the plan; resolves to the exit code. */
export async function runPlannerCli(
  argv: readonly string[],
  io: CliIo = processIo(),
  signal?: AbortSignal,
): Promise<ExitCode> {
  try {
    let values: ReturnType<typeof parse>["values"];
    try {
      values = parse(argv).values;
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    if (values.help) {
      io.stdout.write(`${HELP}\n`);
      return EXIT.ok;
    }
    const goal = values.message?.trim();
    if (!goal)
      throw new UsageError(values.message === undefined ? "nothing to plan: pass -m <goal>" : "-m is empty");
    let maxSteps: number | undefined;
    if (values["max-steps"] !== undefined) {
      maxSteps = Number(values["max-steps"]);
      if (!/^\d+$/.test(values["max-steps"]) || maxSteps <= 0) {
        throw new UsageError(`--max-steps expects a positive whole number, got "${values["max-steps"]}"`);
      }
    }
    const loaded = loadConfig({
      env: io.env,
      cwd: io.cwd,
      ...(values.config === undefined ? {} : { path: values.config }),
    });
    const { config, stateDir } = applyStateDir(loaded.config, values["state-dir"], {
      env: io.env,
      cwd: io.cwd,
    });
    const result = await runHybridPlan({
      config,
      stateDir,
      goal,
      ...(values.agent === undefined ? {} : { agentId: values.agent }),
      ...(values["plan-id"] === undefined ? {} : { planId: values["plan-id"] }),
      ...(maxSteps === undefined ? {} : { maxSteps }),
      ...(signal === undefined ? {} : { signal }),
    });
    if (values.json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else printResult(result, io);
    if (result.status === "ok") return EXIT.ok;
    if (result.status === "invalid-plan") {
      if (values.json) printResult(result, io);
      return EXIT.invalidPlan;
    }
    return signal?.aborted ? EXIT.interrupted : EXIT.failed;
  } catch (error) {
    const say = (text: string) => io.stderr.write(`hybrid-planner: ${text}\n`);
    if (error instanceof UsageError) {
      say(`${error.message}. Run \`hybrid-planner --help\` for usage.`);
      return EXIT.usage;
    }
    if (
      error instanceof ConfigError ||
      error instanceof HybridPlanInputError ||
      error instanceof KernelInputError
    ) {
      say(error.message);
      return EXIT.usage;
    }
    say(`cannot plan: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.failed;
  }
}
