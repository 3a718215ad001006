// Cron job run state: next and last run, last status and error, consecutive errors, a running marker. Owns:
// storing it per job id with optimistic concurrency. Does not own: schedules or running jobs (apps/cron).
import type { Kysely, Selectable } from "kysely";
import { SessionConflictError } from "./errors.ts";
import type { ControlPlaneDatabase, CronStateTable } from "./schema.ts";

export interface CronJobStats {
  readonly agentId?: string;
  readonly nextRunAt?: number;
  readonly lastRunAt?: number;
  readonly lastStatus?: string;
  readonly lastError?: string;
  readonly lastRunId?: string;
  readonly lastDurationMs?: number;
  /** Set while a run of the job is in flight. */
  readonly runningSince?: number;
  readonly consecutiveErrors: number;
}

export interface CronJobState extends CronJobStats {
  readonly jobId: string;
  readonly version: number;
  readonly updatedAt: number;
}

/** Read-apply-write attempts of `update` before `SessionConflictError`. */
export const CRON_UPDATE_MAX_ATTEMPTS = 5;

/** The state a job without a row starts from. */
export const EMPTY_CRON_JOB_STATS: CronJobStats = { consecutiveErrors: 0 };

export interface CronStateApi {
  get(jobId: string): Promise<CronJobState | undefined>;
  list(): Promise<CronJobState[]>;
  /** Creates the row from `{ consecutiveErrors: 0 }` when missing; retries on a concurrent change. */
  update(
    jobId: string,
    updater: (current: CronJobStats) => CronJobStats,
    options?: { readonly now?: number; readonly maxAttempts?: number },
  ): Promise<CronJobState>;
  delete(jobId: string): Promise<boolean>;
}

export class KyselyCronState implements CronStateApi {
  readonly #db: Kysely<ControlPlaneDatabase>;

  constructor(db: Kysely<ControlPlaneDatabase>) {
    this.#db = db;
  }

  async get(jobId: string): Promise<CronJobState | undefined> {
    const row = await this.#db
      .selectFrom("cron_state")
      .selectAll()
      .where("job_id", "=", jobId)
      .executeTakeFirst();
    return row === undefined ? undefined : toCronJobState(row);
  }

  async list(): Promise<CronJobState[]> {
    return (await this.#db.selectFrom("cron_state").selectAll().orderBy("job_id").execute()).map(
      toCronJobState,
    );
  }

  async update(
    jobId: string,
    updater: (current: CronJobStats) => CronJobStats,
    options: { readonly now?: number; readonly maxAttempts?: number } = {},
  ): Promise<CronJobState> {
    const maxAttempts = Math.max(1, options.maxAttempts ?? CRON_UPDATE_MAX_ATTEMPTS);
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const now = options.now ?? Date.now();
      const current = await this.get(jobId);
      const next = updater(current ?? EMPTY_CRON_JOB_STATS);
      const columns = toCronColumns(next, now);
      const version = (current?.version ?? 0) + 1;
      const result =
        current === undefined
          ? await this.#db
              .insertInto("cron_state")
              .values({ job_id: jobId, version, ...columns })
              .onConflict((conflict) => conflict.doNothing())
              .executeTakeFirst()
              .then((r) => Number(r.numInsertedOrUpdatedRows ?? 0n))
          : await this.#db
              .updateTable("cron_state")
              .set({ ...columns, version })
              .where("job_id", "=", jobId)
              .where("version", "=", current.version)
              .executeTakeFirst()
              .then((r) => Number(r.numUpdatedRows));
      if (result === 1) return { ...next, jobId, version, updatedAt: now };
    }
    throw cronConflict(jobId, maxAttempts);
  }

  async delete(jobId: string): Promise<boolean> {
    const result = await this.#db.deleteFrom("cron_state").where("job_id", "=", jobId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

export function toCronJobState(row: Selectable<CronStateTable>): CronJobState {
  return {
    jobId: row.job_id,
    version: row.version,
    updatedAt: row.updated_at,
    consecutiveErrors: row.consecutive_errors,
    ...(row.agent_id === null ? {} : { agentId: row.agent_id }),
    ...(row.next_run_at === null ? {} : { nextRunAt: row.next_run_at }),
    ...(row.last_run_at === null ? {} : { lastRunAt: row.last_run_at }),
    ...(row.last_status === null ? {} : { lastStatus: row.last_status }),
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    ...(row.last_run_id === null ? {} : { lastRunId: row.last_run_id }),
    ...(row.last_duration_ms === null ? {} : { lastDurationMs: row.last_duration_ms }),
    ...(row.running_since === null ? {} : { runningSince: row.running_since }),
  };
}

export function toCronColumns(stats: CronJobStats, now: number) {
  return {
    agent_id: stats.agentId ?? null,
    next_run_at: stats.nextRunAt ?? null,
    last_run_at: stats.lastRunAt ?? null,
    last_status: stats.lastStatus ?? null,
    last_error: stats.lastError ?? null,
    last_run_id: stats.lastRunId ?? null,
    last_duration_ms: stats.lastDurationMs ?? null,
    running_since: stats.runningSince ?? null,
    consecutive_errors: stats.consecutiveErrors,
    updated_at: now,
  };
}

export function cronConflict(jobId: string, attempts: number): SessionConflictError {
  return new SessionConflictError(`cron job ${jobId} state changed concurrently ${attempts} times in a row`);
}
