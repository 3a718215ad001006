// How a failed recurring job backs off: OpenClaw's floor after consecutive failures. Owns the table and the
// arithmetic; the scheduler decides when a run failed.
import type { CronJob } from "./jobs.ts";

/** OpenClaw's retry floor after consecutive failed runs: 30 s, 1 min, 5 min, 15 min, then hourly. */
export const ERROR_BACKOFF_MS = [30_000, 60_000, 300_000, 900_000, 3_600_000] as const;

/** The next slot, pushed back to the error backoff after a failed run (recurring schedules only). */
export function withErrorBackoff(
  job: CronJob,
  next: number | undefined,
  status: "ok" | "error",
  endedAt: number,
  consecutiveErrors: number,
): number | undefined {
  if (next === undefined || status === "ok" || job.schedule.kind === "at") return next;
  const backoff = ERROR_BACKOFF_MS[Math.min(consecutiveErrors, ERROR_BACKOFF_MS.length) - 1] ?? 0;
  return Math.max(next, endedAt + backoff);
}
