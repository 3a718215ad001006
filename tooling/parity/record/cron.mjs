// Records OpenClaw 2026.9.6's cron prompt time block for apps/cron: `formatUserTime` (24-hour, the kernel's
// fixed choice; OpenClaw picks 12 or 24 from the host) and `resolveCronStyleNow`'s time line built from it, over
// instants around DST changes in several zones. Writes apps/cron/fixtures/openclaw/cron-time-line.json.
//
// Record (manual; the fixture is committed):
//   OPENCLAW_DIST=/work/openclaw-env/openclaw/package/dist /work/openclaw-env/node24/package/bin/node tooling/parity/record/cron.mjs
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { get } from "../load-openclaw.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, "..", "..", "..", "apps", "cron", "fixtures", "openclaw", "cron-time-line.json");

const formatUserTime = await get("formatUserTime");
const instants = [
  "2026-03-28T08:00:00Z",
  "2026-03-29T07:00:00Z",
  "2026-03-01T00:05:00Z",
  "2026-03-06T13:30:00Z",
  "2026-03-09T12:30:00Z",
  "2026-10-25T08:00:00Z",
  "2026-11-01T06:30:00Z",
  "2026-12-31T23:59:00Z",
  "2026-01-02T00:00:00Z",
  "2026-06-22T12:03:00Z",
  "2026-06-23T12:03:00Z",
  "2026-07-11T18:45:00Z",
];
const zones = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"];
const cases = [];
for (const at of instants) {
  for (const timeZone of zones) {
    const date = new Date(at);
    const formatted = formatUserTime(date, timeZone, "24") ?? date.toISOString();
    const timeLine = `Current time: ${formatted} (${timeZone})\nReference UTC: ${date.toISOString().replace("T", " ").slice(0, 16)} UTC`;
    cases.push({ at, timeZone, formatted, timeLine });
  }
}
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(
  out,
  `${JSON.stringify({ openclaw: "2026.9.6", source: 'formatUserTime(date, tz, "24")', cases }, null, 2)}\n`,
);
console.log(`wrote ${cases.length} cases to ${out}`);
