// The `agent-cron` command line: `list`, `history <jobId>`, `run <jobId>`, `tick` and `start`, over the same
// scheduler a program gets from `createCronScheduler`. Owns flag parsing (node:util parseArgs), the config and
// state-dir precedence (as the `agent` command: `--config`, $AGENT_KERNEL_CONFIG, ~/.agent-kernel/config.json5;
// `--state-dir`, $AGENT_KERNEL_STATE_DIR, `store.stateDir`, ~/.agent-kernel), output and exit codes. Does not
// own scheduling (scheduler.ts). The command has no channel adapters: a job with delivery fails its delivery
// (recorded on the job) — deliver from a program that passes `channels`.
import { parseArgs } from "node:util";
import { applyStateDir, ConfigError, type KernelConfig, loadConfig } from "@agent-kernel/config";
import { CronJobsError } from "./jobs.ts";
import { CronJobNotFoundError, type CronScheduler, createCronScheduler } from "./scheduler.ts";
import type { CronRunResult } from "./scheduler-types.ts";

export const EXIT = { ok: 0, failed: 1, usage: 2, notFound: 3, store: 5, interrupted: 130 } as const;
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

const HELP = `Usage: agent-cron <command> [options]

Scheduled isolated agent runs through the Agent Session Kernel.

Commands:
  list                 every job: schedule, next and last run, status
  history <jobId>      the job's runs from the kernel's run records, newest first (--limit n)
  run <jobId>          run a job now, outside its schedule (no delivery adapters in this command)
  tick                 start the jobs that are due, wait for them, and exit (for a system cron)
  start                run the scheduler in the foreground until Ctrl-C

Options:
  --config <file>      config file (default: $AGENT_KERNEL_CONFIG, else ~/.agent-kernel/config.json5)
  --state-dir <dir>    state dir (default: $AGENT_KERNEL_STATE_DIR, else store.stateDir, else ~/.agent-kernel)
  --json               print JSON
  --limit <n>          history: at most n runs (default 20)
  -h, --help           this help

Jobs: cron.jobs in the config, and <state-dir>/cron/jobs.json ({ "jobs": [ ... ] }, same shape) when present.

Exit codes: 0 ok; 1 a run failed; 2 usage, invalid config or jobs; 3 no such job; 5 the store cannot be opened;
130 interrupted.`;

class UsageError extends Error {}

function loadContext(flags: { config?: string | undefined; "state-dir"?: string | undefined }, io: CliIo) {
  const loaded = loadConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { path: flags.config }),
  });
  return applyStateDir(loaded.config, flags["state-dir"], { env: io.env, cwd: io.cwd });
}

const iso = (ms: number | undefined) => (ms === undefined ? "-" : new Date(ms).toISOString());

function describeSchedule(schedule: KernelConfig["cron"]["jobs"][number]["schedule"]): string {
  if (schedule.kind === "cron") return `cron "${schedule.expr}"${schedule.tz ? ` ${schedule.tz}` : " UTC"}`;
  if (schedule.kind === "every") return `every ${schedule.everySeconds}s`;
  return `at ${schedule.at}`;
}

function runLine(run: CronRunResult): string {
  return `${run.jobId}: ${run.status}${run.runId ? ` run ${run.runId}` : ""}${run.error ? ` (${run.error})` : ""}`;
}

function runJson(run: CronRunResult) {
  const { outcome, ...rest } = run;
  return { ...rest, ...(outcome === undefined ? {} : { text: outcome.result.assistantText }) };
}

/** Parses `argv` (without node and the script) and runs the command; resolves to the exit code. */
export async function runCronCli(
  argv: readonly string[],
  io: CliIo = processIo(),
  signal?: AbortSignal,
): Promise<ExitCode> {
  const write = (text: string) => io.stdout.write(`${text}\n`);
  let scheduler: CronScheduler | undefined;
  try {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(argv);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const { values, positionals } = parsed;
    if (values.help || positionals.length === 0) {
      (values.help ? io.stdout : io.stderr).write(`${HELP}\n`);
      return values.help ? EXIT.ok : EXIT.usage;
    }
    const [command, ...rest] = positionals;
    const needsJob = command === "history" || command === "run";
    if (!["list", "history", "run", "tick", "start"].includes(command ?? "")) {
      throw new UsageError(`unknown command "${command}" (commands: list, history, run, tick, start)`);
    }
    if (needsJob && rest.length !== 1) throw new UsageError(`${command} needs exactly one job id`);
    if (!needsJob && rest.length > 0)
      throw new UsageError(`${command} takes no arguments, got "${rest.join(" ")}"`);
    let limit: number | undefined;
    if (values.limit !== undefined) {
      limit = Number(values.limit);
      if (!/^\d+$/.test(values.limit) || limit <= 0) {
        throw new UsageError(`--limit expects a positive whole number, got "${values.limit}"`);
      }
    }
    const { config, stateDir } = loadContext(values, io);
    const finished: CronRunResult[] = [];
    scheduler = createCronScheduler({
      config,
      stateDir,
      onRunFinished: (run) => {
        finished.push(run);
        if (command === "start") io.stderr.write(`[agent-cron] ${runLine(run)}\n`);
      },
      ...(command === "start"
        ? {
            watchJobsFileMs: 1000,
            onJobsReloaded: (result) =>
              io.stderr.write(
                result instanceof Error
                  ? `[agent-cron] jobs not reloaded, the previous ones stay: ${result.message}\n`
                  : `[agent-cron] jobs reloaded (added: ${result.added.join(", ") || "-"}; changed: ${result.changed.join(", ") || "-"}; removed: ${result.removed.join(", ") || "-"})\n`,
              ),
          }
        : {}),
    });
    const jobId = rest[0] ?? "";
    switch (command) {
      case "list": {
        const jobs = await scheduler.list();
        if (values.json) write(JSON.stringify(jobs, null, 2));
        else if (jobs.length === 0) write("no cron jobs (add cron.jobs to the config)");
        else {
          for (const job of jobs) {
            const state = job.state;
            write(
              `${job.id}  ${describeSchedule(job.schedule)}  agent ${job.agentId}${job.enabled ? "" : "  (disabled)"}  next ${iso(state?.nextRunAt)}  last ${iso(state?.lastRunAt)} ${state?.lastStatus ?? ""}${state?.runningSince === undefined ? "" : "  running"}`.trimEnd(),
            );
          }
        }
        return EXIT.ok;
      }
      case "history": {
        const runs = await scheduler.history(jobId, limit === undefined ? {} : { limit });
        if (values.json) write(JSON.stringify(runs, null, 2));
        else if (runs.length === 0) write(`no runs of ${jobId} yet`);
        else {
          for (const run of runs) {
            write(
              `${iso(run.startedAt)}  ${run.status}  ${run.runId}  session ${run.sessionId}${run.errorMessage ? `  (${run.errorMessage})` : ""}`,
            );
          }
        }
        return EXIT.ok;
      }
      case "run": {
        // Ctrl-C aborts the turn (stored as aborted) and the command exits 130, as `start` does.
        const running = scheduler;
        const onAbort = () => void running.stop();
        signal?.addEventListener("abort", onAbort, { once: true });
        if (signal?.aborted) onAbort();
        const run = await scheduler
          .runNow(jobId)
          .finally(() => signal?.removeEventListener("abort", onAbort));
        write(values.json ? JSON.stringify(runJson(run), null, 2) : runLine(run));
        if (signal?.aborted) return EXIT.interrupted;
        return run.status === "ok" ? EXIT.ok : EXIT.failed;
      }
      case "tick": {
        const report = await scheduler.tick();
        await scheduler.idle();
        if (values.json) write(JSON.stringify({ ...report, runs: finished.map(runJson) }, null, 2));
        else {
          for (const run of finished) write(runLine(run));
          for (const skipped of report.skipped)
            write(`${skipped.jobId}: skipped the slot missed at ${iso(skipped.missedAt)}`);
          for (const busy of report.busy) write(`${busy}: still running, not started again`);
          if (finished.length + report.skipped.length + report.busy.length === 0) write("nothing due");
        }
        return finished.every((run) => run.status === "ok") ? EXIT.ok : EXIT.failed;
      }
      default: {
        scheduler.start();
        io.stderr.write(`[agent-cron] started: ${(await scheduler.list()).length} job(s); Ctrl-C stops\n`);
        // Held open until the signal, whatever the jobs: with none enabled (or `cron.enabled: false`) no
        // timer is armed, and a pending promise alone does not keep Node running.
        const keepAlive = setInterval(() => {}, 1 << 30);
        await new Promise<void>((done) => {
          if (signal === undefined || signal.aborted) return done();
          signal.addEventListener("abort", () => done(), { once: true });
        }).finally(() => clearInterval(keepAlive));
        return EXIT.interrupted;
      }
    }
  } catch (error) {
    return report(error, io);
  } finally {
    await scheduler?.stop();
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: "string" },
      "state-dir": { type: "string" },
      json: { type: "boolean" },
      limit: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

function report(error: unknown, io: CliIo): ExitCode {
  const say = (text: string) => io.stderr.write(`agent-cron: ${text}\n`);
  if (error instanceof UsageError) {
    say(`${error.message}. Run \`agent-cron --help\` for usage.`);
    return EXIT.usage;
  }
  if (error instanceof ConfigError || error instanceof CronJobsError) {
    say(error.message);
    return EXIT.usage;
  }
  if (error instanceof CronJobNotFoundError) {
    say(error.message);
    return EXIT.notFound;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/SQLITE|store|database/i.test(message)) {
    say(`cannot open the store: ${message}`);
    return EXIT.store;
  }
  say(`unexpected failure: ${message}`);
  return EXIT.failed;
}
