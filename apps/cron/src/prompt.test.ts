// The cron prompt against OpenClaw 2026.9.6: the time block recorded from its `formatUserTime` (24-hour) over
// instants around DST changes in five zones (tooling/parity/record/cron.mjs), and the `[cron:<id> <name>]` shape.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cronPrompt, cronTimeLine } from "./prompt.ts";

interface TimeLineCase {
  readonly at: string;
  readonly timeZone: string;
  readonly timeLine: string;
}

const fixture = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "fixtures", "openclaw", "cron-time-line.json"), "utf8"),
) as { cases: TimeLineCase[] };

describe("cron prompt", () => {
  it("matches OpenClaw's time block for every recorded instant and zone", () => {
    expect(fixture.cases.length).toBeGreaterThanOrEqual(60);
    for (const { at, timeZone, timeLine } of fixture.cases) {
      expect(cronTimeLine(Date.parse(at), timeZone), `${at} in ${timeZone}`).toBe(timeLine);
    }
  });

  it("prefixes the message with [cron:<id> <name>], the id standing in for a missing name", () => {
    const job = {
      id: "digest",
      enabled: true,
      missedRuns: "run-once",
      schedule: { kind: "cron", expr: "0 9 * * *", tz: "Asia/Tokyo" },
      payload: { message: "summarise  " },
    } as const;
    expect(cronPrompt(job, Date.parse("2026-01-01T00:00:00Z"))).toBe(
      "[cron:digest digest] summarise\nCurrent time: Thursday, January 1st, 2026 - 09:00 (Asia/Tokyo)\nReference UTC: 2026-01-01 00:00 UTC",
    );
    expect(cronPrompt({ ...job, name: "Daily digest" }, 0).split("\n")[0]).toBe(
      "[cron:digest Daily digest] summarise",
    );
  });
});
