// The SQLite implementation of the cron-state API: every call as a better-sqlite3 statement prepared once per
// store, with the same rules and errors as `KyselyCronState` (cron-state.ts, the PostgreSQL path). Owns:
// those statements. Does not own: schedules or running jobs (apps/cron).
//
// `update` reads, applies the (synchronous) updater and writes without yielding; the version column still
// guards against another process, with the same retries.
import type Database from "better-sqlite3";
import type { Selectable } from "kysely";
import {
  CRON_UPDATE_MAX_ATTEMPTS,
  type CronJobState,
  type CronJobStats,
  type CronStateApi,
  cronConflict,
  EMPTY_CRON_JOB_STATS,
  toCronColumns,
  toCronJobState,
} from "../cron-state.ts";
import type { CronStateTable } from "../schema.ts";

type CronRow = Selectable<CronStateTable>;
type CronWrite = ReturnType<typeof toCronColumns> & { job_id: string; version: number };

const STATE_COLUMNS = [
  "agent_id",
  "next_run_at",
  "last_run_at",
  "last_status",
  "last_error",
  "last_run_id",
  "last_duration_ms",
  "running_since",
  "consecutive_errors",
  "updated_at",
] as const;

export class SqliteCronState implements CronStateApi {
  readonly #one: Database.Statement<[string], CronRow>;
  readonly #all: Database.Statement<[], CronRow>;
  readonly #insert: Database.Statement<[CronWrite]>;
  /** Binds `version` as the new version; the row must be at `version - 1`. */
  readonly #updateIfVersion: Database.Statement<[CronWrite]>;
  readonly #delete: Database.Statement<[string]>;

  constructor(raw: Database.Database) {
    this.#one = raw.prepare("SELECT * FROM cron_state WHERE job_id = ?");
    this.#all = raw.prepare("SELECT * FROM cron_state ORDER BY job_id");
    const columns = ["job_id", "version", ...STATE_COLUMNS];
    this.#insert = raw.prepare(
      `INSERT INTO cron_state (${columns.join(", ")}) ` +
        `VALUES (${columns.map((c) => `@${c}`).join(", ")}) ON CONFLICT DO NOTHING`,
    );
    this.#updateIfVersion = raw.prepare(
      `UPDATE cron_state SET ${STATE_COLUMNS.map((c) => `${c} = @${c}`).join(", ")}, version = @version ` +
        "WHERE job_id = @job_id AND version = @version - 1",
    );
    this.#delete = raw.prepare("DELETE FROM cron_state WHERE job_id = ?");
  }

  async get(jobId: string): Promise<CronJobState | undefined> {
    const row = this.#one.get(jobId);
    return row === undefined ? undefined : toCronJobState(row);
  }

  async list(): Promise<CronJobState[]> {
    return this.#all.all().map(toCronJobState);
  }

  async update(
    jobId: string,
    updater: (current: CronJobStats) => CronJobStats,
    options: { readonly now?: number; readonly maxAttempts?: number } = {},
  ): Promise<CronJobState> {
    const maxAttempts = Math.max(1, options.maxAttempts ?? CRON_UPDATE_MAX_ATTEMPTS);
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const now = options.now ?? Date.now();
      const row = this.#one.get(jobId);
      const current = row === undefined ? undefined : toCronJobState(row);
      const next = updater(current ?? EMPTY_CRON_JOB_STATS);
      const version = (current?.version ?? 0) + 1;
      const values: CronWrite = { ...toCronColumns(next, now), job_id: jobId, version };
      const written = (current === undefined ? this.#insert : this.#updateIfVersion).run(values).changes;
      if (written === 1) return { ...next, jobId, version, updatedAt: now };
    }
    throw cronConflict(jobId, maxAttempts);
  }

  async delete(jobId: string): Promise<boolean> {
    return this.#delete.run(jobId).changes > 0;
  }
}
