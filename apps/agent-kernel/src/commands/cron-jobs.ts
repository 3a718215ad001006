// `agent-kernel cron …`: the jobs file edited by command — `add`, `rm`, `enable`, `disable` — so nobody edits
// `<state-dir>/cron/jobs.json` by hand; `list`, `run`, `history`, `tick` and `start` are the cron app's own
// command line. Every change is checked with the cron app's own rules (loadCronJobs: the schema, a duplicate
// id against the config's jobs, an unknown agent, a bad schedule, delivery without a target) before the
// file is replaced, atomically and owner-only. Jobs written in the config (`cron.jobs`) are the config's:
// changing them here is refused with where to change them. Owns the four edits; not scheduling (apps/cron).
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { CronJobsError, jobsFilePath, loadCronJobs } from "@agent-kernel/cron";
import { runApp } from "../apps.ts";
import { COMMON_FLAGS_HELP, expectArgs, type Parsed, parseCommand, stringFlag } from "../args.ts";
import { loadOperationContext, type OperationContext } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import { type CliIo, line } from "../io.ts";

const EDITS = ["add", "rm", "enable", "disable"] as const;
const APP_COMMANDS = ["list", "run", "history", "tick", "start"];

const USAGE = `Usage:
  agent-kernel cron add <id> (--every <seconds> | --cron "<expr>" [--tz <zone>] | --at <ISO time>) -m <message>
                    [--agent <id>] [--channel <id> --to <recipient>] [--disabled]
  agent-kernel cron rm <id>
  agent-kernel cron enable <id>
  agent-kernel cron disable <id>
  agent-kernel cron list [--json]
  agent-kernel cron run <id>
  agent-kernel cron history <id> [--limit n] [--json]
  agent-kernel cron tick | start

add, rm, enable and disable change <state-dir>/cron/jobs.json (checked before it is written); jobs in the
config file (cron.jobs) are changed there. list, run, history, tick and start are the agent-cron command's.
With --channel and --to a job's reply is delivered there by the gateway (mode "announce").

Examples:
  agent-kernel cron add brief --every 3600 -m "Summarise my inbox"
  agent-kernel cron add standup --cron "0 9 * * 1-5" --tz Europe/Berlin -m "Plan my day" --channel telegram --to 5550001
  agent-kernel cron disable brief
  agent-kernel cron list --json

Exit codes: 0 ok; 1 a run failed; 2 usage, an invalid job or config; 3 no such job; 5 the store cannot be opened.

${COMMON_FLAGS_HELP}`;

const ADD_OPTIONS = {
  every: { type: "string" },
  cron: { type: "string" },
  tz: { type: "string" },
  at: { type: "string" },
  message: { type: "string", short: "m" },
  agent: { type: "string" },
  channel: { type: "string" },
  to: { type: "string" },
  name: { type: "string" },
  disabled: { type: "boolean" },
} as const;

/** `cron …`; resolves to the exit code. */
export async function runCron(argv: readonly string[], io: CliIo, signal?: AbortSignal): Promise<number> {
  const first = argv.find((arg) => !arg.startsWith("-"));
  const wantsHelp = argv.includes("--help") || argv.includes("-h");
  if (wantsHelp && (first === undefined || EDITS.includes(first as (typeof EDITS)[number]))) {
    line(io.stdout, USAGE);
    return EXIT.ok;
  }
  if (first === undefined)
    throw new CliError(
      EXIT.usage,
      `cron needs a subcommand (${[...EDITS, ...APP_COMMANDS].join(", ")})\n\n${USAGE}`,
    );
  if (!EDITS.includes(first as (typeof EDITS)[number])) {
    if (!APP_COMMANDS.includes(first)) {
      throw new CliError(
        EXIT.usage,
        `cron: unknown subcommand "${first}" (${[...EDITS, ...APP_COMMANDS].join(", ")})`,
      );
    }
    return runApp("cron", argv, io, signal);
  }
  const parsed = parseCommand(argv, ADD_OPTIONS, USAGE, io);
  if (parsed === undefined) return EXIT.ok;
  const [edit, ...rest] = parsed.positionals as [(typeof EDITS)[number], ...string[]];
  const [id] = expectArgs(rest, ["id"], `cron ${edit}`) as [string];
  const context = loadOperationContext(parsed.values, io);
  const file = jobsFilePath(context.stateDir);
  const jobs = readRawJobs(file);
  const index = jobs.findIndex((job) => String(job.id).toLowerCase() === id.toLowerCase());

  if (edit === "add") {
    if (index !== -1) throw new CliError(EXIT.usage, `a job "${id}" exists already in ${file}; rm it first`);
    if (context.config.cron.jobs.some((job) => job.id.toLowerCase() === id.toLowerCase())) {
      throw new CliError(
        EXIT.usage,
        `a job "${id}" is defined in the config file (cron.jobs); pick another id`,
      );
    }
    jobs.push(newJob(id, parsed));
  } else {
    if (index === -1) {
      const inConfig = context.config.cron.jobs.some((job) => job.id.toLowerCase() === id.toLowerCase());
      throw new CliError(
        inConfig ? EXIT.usage : EXIT.notFound,
        inConfig
          ? `job "${id}" is defined in the config file (cron.jobs), not in ${file}: change it there (agent-kernel config set, or an editor)`
          : `no job "${id}" in ${file}. See: agent-kernel cron list`,
      );
    }
    if (edit === "rm") jobs.splice(index, 1);
    else jobs[index] = { ...jobs[index], enabled: edit === "enable" };
  }
  checkAndWrite(context, file, jobs);
  const what = { add: "added", rm: "removed", enable: "enabled", disable: "disabled" }[edit];
  line(
    io.stdout,
    `Job "${id}" ${what} (${file}). A running gateway (or agent-cron start) picks it up within a few seconds.`,
  );
  return EXIT.ok;
}

type RawJob = Record<string, unknown>;

function readRawJobs(file: string): RawJob[] {
  if (!existsSync(file)) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new CliError(
      EXIT.usage,
      `${file} is not valid JSON (${(error as Error).message}); fix or remove it`,
    );
  }
  const jobs = (raw as { jobs?: unknown } | null)?.jobs;
  if (!Array.isArray(jobs)) throw new CliError(EXIT.usage, `${file}: expected an object { "jobs": [ ... ] }`);
  return jobs as RawJob[];
}

function newJob(id: string, parsed: Parsed): RawJob {
  const every = stringFlag(parsed, "every");
  const cron = stringFlag(parsed, "cron");
  const at = stringFlag(parsed, "at");
  const given = [every, cron, at].filter((value) => value !== undefined).length;
  if (given !== 1)
    throw new CliError(
      EXIT.usage,
      "cron add needs exactly one of --every <seconds>, --cron <expr>, --at <time>",
    );
  const tz = stringFlag(parsed, "tz");
  if (tz !== undefined && cron === undefined) throw new CliError(EXIT.usage, "--tz goes with --cron only");
  let schedule: RawJob;
  if (every !== undefined) {
    if (!/^\d+$/.test(every) || Number(every) <= 0) {
      throw new CliError(EXIT.usage, `--every expects a positive whole number of seconds, got "${every}"`);
    }
    schedule = { kind: "every", everySeconds: Number(every) };
  } else if (cron !== undefined) {
    schedule = { kind: "cron", expr: cron, ...(tz === undefined ? {} : { tz }) };
  } else {
    schedule = { kind: "at", at };
  }
  const message = stringFlag(parsed, "message");
  if (message === undefined || message.trim() === "")
    throw new CliError(EXIT.usage, "cron add needs -m <message>: what the job asks the agent");
  const channel = stringFlag(parsed, "channel");
  const to = stringFlag(parsed, "to");
  if ((channel === undefined) !== (to === undefined)) {
    throw new CliError(EXIT.usage, "--channel and --to go together: where the job's reply is delivered");
  }
  const agent = stringFlag(parsed, "agent");
  const name = stringFlag(parsed, "name");
  return {
    id,
    ...(name === undefined ? {} : { name }),
    ...(agent === undefined ? {} : { agentId: agent }),
    enabled: parsed.values.disabled !== true,
    schedule,
    payload: { message },
    delivery: channel === undefined ? { mode: "none" } : { mode: "announce", channel, to },
  };
}

/**
 * Writes the jobs to a temporary file beside `file`, checks it with the cron app's own rules (with the
 * config's jobs), and only then renames it over `file` (atomic, owner-only): nothing invalid is written.
 */
function checkAndWrite(context: OperationContext, file: string, jobs: readonly RawJob[]): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ jobs }, null, 2)}\n`, { mode: 0o600 });
  try {
    loadCronJobs({ config: context.config, jobsFile: temporary });
  } catch (error) {
    rmSync(temporary, { force: true });
    if (error instanceof CronJobsError) {
      const message = error.message.replaceAll(temporary, file);
      throw new CliError(
        EXIT.usage,
        `the change was not written, it would make the jobs invalid:\n${message}`,
      );
    }
    throw error;
  }
  renameSync(temporary, file);
}
