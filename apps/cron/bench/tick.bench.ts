// What a scheduler tick costs when nothing is due: 50 jobs looked at through `tick()` (state read, slot check)
// against the bare store reads of the same 50 state rows (the baseline): the scheduler's own overhead per look.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSuite } from "@agent-kernel/bench";
import { parseConfig } from "@agent-kernel/config";
import { openKernelStore } from "@agent-kernel/kernel";
import { ManualClock } from "../src/clock.ts";
import { createCronScheduler } from "../src/scheduler.ts";

const JOBS = 50;
const root = mkdtempSync(join(tmpdir(), "cron-bench-"));
const stateDir = join(root, "state");
const config = parseConfig(
  {
    cron: {
      jobs: Array.from({ length: JOBS }, (_, index) => ({
        id: `job-${index}`,
        schedule: { kind: "cron", expr: `${index % 60} 9 * * *`, tz: "Europe/Berlin" },
        payload: { message: "report" },
      })),
    },
    store: { stateDir },
  },
  { env: {}, cpuCount: 2 },
);
const clock = new ManualClock(Date.parse("2026-03-02T10:00:00Z"));
const scheduler = createCronScheduler({ config, stateDir, clock });
await scheduler.tick(); // creates every job's state row
const store = await openKernelStore({ stateDir });
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

export default defineSuite({
  name: `a tick over ${JOBS} jobs, none due`,
  baseline: "store reads only",
  iterations: 20,
  itemsPerIteration: JOBS,
  cases: [
    {
      name: "store reads only",
      run: async () => {
        for (let index = 0; index < JOBS; index++) await store.cron.get(`job-${index}`);
      },
    },
    { name: "scheduler.tick()", run: () => scheduler.tick() },
  ],
});
