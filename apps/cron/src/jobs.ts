// Which jobs exist: `cron.jobs` from the config plus, optionally, a jobs file in the state dir
// (`<stateDir>/cron/jobs.json`, `{ "jobs": [...] }`, each job in the config's own `cron.jobs[]` shape, validated by
// the config's schema) and jobs passed in by a program. Owns merging those sources and rejecting what cannot
// run (a duplicate id, an unknown agent, a bad expression or time zone, delivery without a target) with
// one error listing every problem. Does not own the job shape (config) or run state (the store's cron_state).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type ConfigIssue,
  configSchema,
  defaultAgentId,
  formatConfigIssues,
  issuesFromZod,
  type KernelConfig,
  knownKeysOf,
  listAgentIds,
} from "@agent-kernel/config";
import { CronScheduleError, checkSchedule } from "./schedule.ts";

/** One job as the config holds it (defaults filled). */
export type CronJob = KernelConfig["cron"]["jobs"][number];

/** A job and where it came from, with the agent it runs as. */
export interface ResolvedCronJob {
  readonly job: CronJob;
  readonly agentId: string;
  /** `config`, the jobs file's path, or `program`. */
  readonly source: string;
}

/** The jobs cannot be used; `message` lists every problem, one per line, with where it is. */
export class CronJobsError extends Error {
  override readonly name = "CronJobsError";
  readonly issues: readonly ConfigIssue[];

  constructor(source: string, issues: readonly ConfigIssue[]) {
    super(formatConfigIssues(source, issues));
    this.issues = issues;
  }
}

/** The file a state dir's jobs live in. */
export function jobsFilePath(stateDir: string): string {
  return join(stateDir, "cron", "jobs.json");
}

const cronSection = configSchema.shape.cron;
const cronKnownKeys = knownKeysOf(cronSection);

/** Validates `{ jobs: [...] }` (a jobs file's content) against the config's `cron.jobs` schema. */
export function parseJobsDocument(input: unknown, source: string): CronJob[] {
  if (typeof input !== "object" || input === null || Array.isArray(input) || !("jobs" in input)) {
    throw new CronJobsError(source, [
      { kind: "invalid", path: [], message: 'expected an object { "jobs": [ ... ] }' },
    ]);
  }
  const parsed = cronSection.safeParse({ jobs: (input as { jobs: unknown }).jobs }, { reportInput: true });
  if (!parsed.success) throw new CronJobsError(source, issuesFromZod(parsed.error.issues, cronKnownKeys));
  return parsed.data.jobs;
}

function readJobsFile(path: string): CronJob[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new CronJobsError(path, [{ kind: "syntax", path: [], message: `not valid JSON: ${why}` }]);
  }
  return parseJobsDocument(raw, path);
}

export interface LoadCronJobsOptions {
  readonly config: KernelConfig;
  /** A jobs file to read; default `<stateDir>/cron/jobs.json` when it exists; `false`: none. */
  readonly jobsFile?: string | false | undefined;
  readonly stateDir?: string | undefined;
  /** Jobs a program adds (same shape as the file's `jobs`). */
  readonly jobs?: readonly unknown[] | undefined;
}

/** Every job of the config, the jobs file and the program, checked together. */
export function loadCronJobs(options: LoadCronJobsOptions): ResolvedCronJob[] {
  const { config } = options;
  const sources: { source: string; path: (string | number)[]; jobs: CronJob[] }[] = [
    { source: "config", path: ["cron", "jobs"], jobs: config.cron.jobs },
  ];
  const filePath =
    options.jobsFile === false
      ? undefined
      : (options.jobsFile ?? (options.stateDir === undefined ? undefined : jobsFilePath(options.stateDir)));
  if (filePath !== undefined && (options.jobsFile !== undefined || existsSync(filePath))) {
    if (!existsSync(filePath)) {
      throw new CronJobsError(filePath, [
        { kind: "file", path: [], message: `jobs file ${filePath} does not exist` },
      ]);
    }
    sources.push({ source: filePath, path: ["jobs"], jobs: readJobsFile(filePath) });
  }
  if (options.jobs !== undefined) {
    sources.push({
      source: "program",
      path: ["jobs"],
      jobs: parseJobsDocument({ jobs: options.jobs }, "program jobs"),
    });
  }

  const agents = listAgentIds(config);
  const knownAgents = agents.length > 0 ? agents : [defaultAgentId(config)];
  const seen = new Map<string, string>();
  const resolved: ResolvedCronJob[] = [];
  const problems: { source: string; issue: ConfigIssue }[] = [];
  const problem = (source: string, path: (string | number)[], message: string) =>
    problems.push({ source, issue: { kind: "invalid", path, message } });
  for (const { source, path, jobs } of sources) {
    jobs.forEach((job, index) => {
      const at = [...path, index];
      const key = job.id.toLowerCase();
      const first = seen.get(key);
      if (first !== undefined)
        problem(source, [...at, "id"], `duplicate cron job id "${job.id}" (also in ${first})`);
      else seen.set(key, source);
      const agentId = job.agentId ?? defaultAgentId(config);
      if (!knownAgents.includes(agentId)) {
        problem(source, [...at, "agentId"], `unknown agent "${agentId}" (agents: ${knownAgents.join(", ")})`);
      }
      try {
        checkSchedule(job.schedule);
      } catch (error) {
        if (!(error instanceof CronScheduleError)) throw error;
        problem(source, [...at, "schedule"], error.message);
      }
      const delivery = job.delivery;
      if (delivery?.mode === "announce" && (delivery.channel === undefined || delivery.to === undefined)) {
        problem(
          source,
          [...at, "delivery"],
          'delivery mode "announce" needs both "channel" and "to" (or set mode "none")',
        );
      }
      resolved.push({ job, agentId, source });
    });
  }
  if (problems.length > 0) {
    const where = [...new Set(problems.map((entry) => entry.source))];
    throw new CronJobsError(
      `cron jobs (${where.join(", ")})`,
      problems.map(({ source, issue }) =>
        where.length > 1 ? { ...issue, message: `${issue.message} [${source}]` } : issue,
      ),
    );
  }
  return resolved;
}
