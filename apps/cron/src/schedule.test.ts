// Slots of the three schedule kinds, computed by croner in IANA time zones: daily 09:00 in Europe/Berlin across
// both DST changes, weekday mornings in America/New_York, fixed intervals on their grid, one-shot times.
import { describe, expect, it } from "vitest";
import { CronScheduleError, checkSchedule, nextRunAfter } from "./schedule.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The next `count` slots after `start`. */
function slots(schedule: Parameters<typeof nextRunAfter>[0], start: string, count: number): string[] {
  const out: string[] = [];
  let after = at(start);
  let anchor: number | undefined;
  for (let i = 0; i < count; i++) {
    const next = nextRunAfter(schedule, after, anchor);
    if (next === undefined) break;
    out.push(new Date(next).toISOString());
    after = next;
    anchor = next;
  }
  return out;
}

describe("nextRunAfter", () => {
  it("daily 09:00 Europe/Berlin stays 09:00 local across the spring and autumn DST changes", () => {
    const berlin = { kind: "cron", expr: "0 9 * * *", tz: "Europe/Berlin" } as const;
    // Summer time starts on Sunday 2026-03-29: 09:00 is 08:00Z before and 07:00Z from that day on.
    expect(slots(berlin, "2026-03-27T12:00:00Z", 3)).toEqual([
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
      "2026-03-30T07:00:00.000Z",
    ]);
    // It ends on Sunday 2026-10-25.
    expect(slots(berlin, "2026-10-23T12:00:00Z", 3)).toEqual([
      "2026-10-24T07:00:00.000Z",
      "2026-10-25T08:00:00.000Z",
      "2026-10-26T08:00:00.000Z",
    ]);
  });

  it("weekdays 08:30 America/New_York skip the weekend and follow US DST (2026-03-08)", () => {
    const ny = { kind: "cron", expr: "30 8 * * 1-5", tz: "America/New_York" } as const;
    expect(slots(ny, "2026-03-05T20:00:00Z", 3)).toEqual([
      "2026-03-06T13:30:00.000Z", // Friday, EST (UTC-5)
      "2026-03-09T12:30:00.000Z", // Monday, EDT (UTC-4)
      "2026-03-10T12:30:00.000Z",
    ]);
  });

  it("reads an expression without a time zone in UTC, and a 6-field expression with seconds", () => {
    expect(iso(nextRunAfter({ kind: "cron", expr: "0 9 * * *" }, at("2026-06-01T10:00:00Z")))).toBe(
      "2026-06-02T09:00:00.000Z",
    );
    expect(iso(nextRunAfter({ kind: "cron", expr: "30 * * * * *" }, at("2026-06-01T10:00:00Z")))).toBe(
      "2026-06-01T10:00:30.000Z",
    );
  });

  it("keeps an interval on its grid: the first slot after a late finish, not finish + interval", () => {
    const every = { kind: "every", everySeconds: 300 } as const;
    expect(iso(nextRunAfter(every, at("2026-01-01T00:00:00Z")))).toBe("2026-01-01T00:05:00.000Z");
    // A run for the 00:05 slot that ended at 00:17 is next due at 00:20 (00:10 and 00:15 are not queued).
    expect(iso(nextRunAfter(every, at("2026-01-01T00:17:00Z"), at("2026-01-01T00:05:00Z")))).toBe(
      "2026-01-01T00:20:00.000Z",
    );
    expect(iso(nextRunAfter(every, at("2026-01-01T00:10:00Z"), at("2026-01-01T00:05:00Z")))).toBe(
      "2026-01-01T00:15:00.000Z",
    );
  });

  it("a one-shot time is a slot until it has passed", () => {
    const once = { kind: "at", at: "2026-05-01T12:00:00+02:00" } as const;
    expect(iso(nextRunAfter(once, at("2026-05-01T09:00:00Z")))).toBe("2026-05-01T10:00:00.000Z");
    expect(nextRunAfter(once, at("2026-05-01T10:00:00Z"))).toBeUndefined();
  });
});

describe("checkSchedule", () => {
  it("names an unknown time zone and an unusable expression", () => {
    expect(() => checkSchedule({ kind: "cron", expr: "0 9 * * *", tz: "Mars/Olympus" })).toThrow(
      new CronScheduleError('unknown time zone "Mars/Olympus" (expected an IANA name like "Europe/Berlin")'),
    );
    expect(() => checkSchedule({ kind: "cron", expr: "0 25 * * *" })).toThrow(
      /^cron expression "0 25 \* \* \*" is not usable: /,
    );
    expect(() => checkSchedule({ kind: "cron", expr: "*/15 * * * *", tz: "Asia/Tokyo" })).not.toThrow();
  });
});
