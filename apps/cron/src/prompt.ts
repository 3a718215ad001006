// What a cron run says to the model: OpenClaw's isolated-run shaping, `[cron:<id> <name>] <message>` and a
// current-time block (`Current time: … (<zone>)` / `Reference UTC: …`, OpenClaw's 24-hour format, pinned by
// fixtures/openclaw/cron-time-line.json). Owns the text only. Does not own
// which session or model the run uses (scheduler.ts, the kernel).
import type { CronJob } from "./jobs.ts";

const formatters = new Map<string, Intl.DateTimeFormat>();

function ordinal(day: number): string {
  if (day % 100 >= 11 && day % 100 <= 13) return "th";
  return ["th", "st", "nd", "rd"][day % 10] ?? "th";
}

/** OpenClaw's `formatUserTime` in its 24-hour form: `Sunday, March 29th, 2026 - 09:00`. */
export function formatCronTime(at: Date, timeZone: string): string {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      weekday: "long",
      year: "numeric",
      month: "long",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timeZone, formatter);
  }
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(at)) if (part.type !== "literal") parts[part.type] = part.value;
  const day = Number.parseInt(parts.day ?? "", 10);
  return `${parts.weekday}, ${parts.month} ${day}${ordinal(day)}, ${parts.year} - ${parts.hour}:${parts.minute}`;
}

/** The time block OpenClaw appends to cron prompts, in the job's time zone (UTC without one). */
export function cronTimeLine(nowMs: number, timeZone = "UTC"): string {
  const at = new Date(nowMs);
  const utc = `${at.toISOString().replace("T", " ").slice(0, 16)} UTC`;
  return `Current time: ${formatCronTime(at, timeZone)} (${timeZone})\nReference UTC: ${utc}`;
}

/** The prompt of one run of `job` at `nowMs`. */
export function cronPrompt(job: CronJob, nowMs: number): string {
  const zone = job.schedule.kind === "cron" ? job.schedule.tz : undefined;
  const base = `[cron:${job.id} ${job.name ?? job.id}] ${job.payload.message}`.trim();
  return `${base}\n${cronTimeLine(nowMs, zone)}`;
}
