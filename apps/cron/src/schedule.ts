// When a job runs next: cron expressions in an IANA time zone (croner), fixed intervals and one-shot times.
// Owns only the arithmetic of slots. Does not own state, leases or missed-run policy (scheduler.ts).
import type { KernelConfig } from "@agent-kernel/config";
import { Cron } from "croner";

export type CronSchedule = KernelConfig["cron"]["jobs"][number]["schedule"];

/** A schedule that cannot produce times (a bad expression or time zone); the message names which. */
export class CronScheduleError extends Error {
  override readonly name = "CronScheduleError";
}

const patterns = new Map<string, Cron>();

function cronFor(expr: string, tz: string | undefined): Cron {
  const key = `${tz ?? ""}\u0000${expr}`;
  let cron = patterns.get(key);
  if (cron === undefined) {
    try {
      // No callback: croner only computes times, it never starts a timer of its own.
      cron = new Cron(expr, { paused: true, ...(tz === undefined ? { timezone: "UTC" } : { timezone: tz }) });
      cron.nextRun(new Date(0));
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new CronScheduleError(
        `cron expression "${expr}"${tz === undefined ? "" : ` in time zone "${tz}"`} is not usable: ${why}`,
      );
    }
    patterns.set(key, cron);
  }
  return cron;
}

/** Throws `CronScheduleError` when the schedule cannot produce times. */
export function checkSchedule(schedule: CronSchedule): void {
  if (schedule.kind === "cron") {
    if (schedule.tz !== undefined) {
      try {
        new Intl.DateTimeFormat("en-US", { timeZone: schedule.tz });
      } catch {
        throw new CronScheduleError(
          `unknown time zone "${schedule.tz}" (expected an IANA name like "Europe/Berlin")`,
        );
      }
    }
    cronFor(schedule.expr, schedule.tz);
  }
}

/**
 * The first slot strictly after `afterMs`, or undefined when there is none (a one-shot time already past).
 * `anchorMs` places the grid of an `every` schedule (a previous slot); without it the grid starts at `afterMs`.
 * A cron expression without `tz` is read in UTC, so a schedule means the same on every host.
 */
export function nextRunAfter(schedule: CronSchedule, afterMs: number, anchorMs?: number): number | undefined {
  switch (schedule.kind) {
    case "cron": {
      const next = cronFor(schedule.expr, schedule.tz).nextRun(new Date(afterMs));
      return next === null ? undefined : next.getTime();
    }
    case "every": {
      const everyMs = schedule.everySeconds * 1000;
      const anchor = anchorMs ?? afterMs;
      if (anchor > afterMs) return anchor;
      return anchor + (Math.floor((afterMs - anchor) / everyMs) + 1) * everyMs;
    }
    case "at": {
      const at = Date.parse(schedule.at);
      return at > afterMs ? at : undefined;
    }
  }
}
