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
    return row === undefined ? undefined : toState(row);
  }

  async list(): Promise<CronJobState[]> {
    return (await this.#db.selectFrom("cron_state").selectAll().orderBy("job_id").execute()).map(toState);
  }

  async update(
    jobId: string,
    updater: (current: CronJobStats) => CronJobStats,
    options: { readonly now?: number; readonly maxAttempts?: number } = {},
  ): Promise<CronJobState> {
    const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const now = options.now ?? Date.now();
      const current = await this.get(jobId);
      const next = updater(current ?? { consecutiveErrors: 0 });
      const columns = {
        agent_id: next.agentId ?? null,
        next_run_at: next.nextRunAt ?? null,
        last_run_at: next.lastRunAt ?? null,
        last_status: next.lastStatus ?? null,
        last_error: next.lastError ?? null,
        last_run_id: next.lastRunId ?? null,
        last_duration_ms: next.lastDurationMs ?? null,
        running_since: next.runningSince ?? null,
        consecutive_errors: next.consecutiveErrors,
        updated_at: now,
      };
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
    throw new SessionConflictError(
      `cron job ${jobId} state changed concurrently ${maxAttempts} times in a row`,
    );
  }

  async delete(jobId: string): Promise<boolean> {
    const result = await this.#db.deleteFrom("cron_state").where("job_id", "=", jobId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function toState(row: Selectable<CronStateTable>): CronJobState {
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
