// Jobs edited under a running scheduler: `reload()` and the jobs-file watch against the real kernel, a real
// SQLite store, real pi and tooling/fake-llm, time moved by a manual clock (the watch itself polls the file in
// real time, so its test waits for the callback, not for a duration).
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { type CronHarness, createCronHarness } from "../test/harness.ts";
import { ManualClock } from "./clock.ts";
import type { CronJobsReload } from "./job-reload.ts";
import { CronJobsError, jobsFilePath } from "./jobs.ts";
import { createCronScheduler } from "./scheduler.ts";
import type { CronRunResult } from "./scheduler-types.ts";

const at = (iso: string) => Date.parse(iso);
const every = (id: string, seconds: number) => ({
  id,
  schedule: { kind: "every", everySeconds: seconds },
  payload: { message: `run ${id}` },
});

/** Replaces the jobs file the way `agent-kernel cron add` does: a new file renamed over the old one. */
function writeJobs(h: CronHarness, jobs: unknown[] | string): void {
  const path = jobsFilePath(h.stateDir);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp`, typeof jobs === "string" ? jobs : JSON.stringify({ jobs }));
  renameSync(`${path}.tmp`, path);
}

async function setUp(onTestFinished: (fn: OnTestFinishedHandler) => void, watchJobsFileMs?: number) {
  const h = await createCronHarness();
  onTestFinished(() => h.close());
  writeJobs(h, [every("digest", 300)]);
  const clock = new ManualClock(at("2026-03-02T10:00:00Z"));
  const runs: CronRunResult[] = [];
  const reloads: (CronJobsReload | Error)[] = [];
  let announce: (() => void) | undefined;
  const scheduler = createCronScheduler({
    config: h.config("{}"),
    stateDir: h.stateDir,
    clock,
    maxSleepMs: 6 * 3_600_000,
    onRunFinished: (run) => runs.push(run),
    ...(watchJobsFileMs === undefined ? {} : { watchJobsFileMs }),
    onJobsReloaded: (result) => {
      reloads.push(result);
      announce?.();
    },
  });
  onTestFinished(() => scheduler.stop());
  const nextReload = () =>
    new Promise<void>((resolve) => {
      announce = resolve;
    });
  return { h, clock, scheduler, runs, reloads, nextReload };
}

describe.concurrent("cron jobs reloaded under a running scheduler", () => {
  it("starts an added job, reschedules a changed one from its new schedule and stops starting a removed one", async ({
    onTestFinished,
  }) => {
    const { h, clock, scheduler, runs } = await setUp(onTestFinished);
    h.llm.enqueue(reply("one"), reply("two"), reply("three"), reply("four"));
    scheduler.start();
    await scheduler.settled();
    expect((await scheduler.list()).map((job) => [job.id, job.state?.nextRunAt])).toEqual([
      ["digest", at("2026-03-02T10:05:00Z")],
    ]);

    writeJobs(h, [every("digest", 1800), every("ping", 60)]);
    const reload = await scheduler.reload();
    expect(reload).toEqual({ added: ["ping"], removed: [], changed: ["digest"], rescheduled: ["digest"] });
    await scheduler.settled();
    const listed = new Map((await scheduler.list()).map((job) => [job.id, job.state?.nextRunAt]));
    expect(listed.get("digest")).toBe(at("2026-03-02T10:30:00Z"));
    expect(listed.get("ping")).toBe(at("2026-03-02T10:01:00Z"));

    await clock.advanceTo(at("2026-03-02T10:02:30Z"), () => scheduler.idle());
    expect(runs.map((run) => run.jobId)).toEqual(["ping", "ping"]);

    writeJobs(h, [every("digest", 1800)]);
    expect(await scheduler.reload()).toEqual({ added: [], removed: ["ping"], changed: [], rescheduled: [] });
    await clock.advanceTo(at("2026-03-02T10:31:00Z"), () => scheduler.idle());
    // ping's 10:03 … 10:31 slots are not run; digest runs at its new 10:30 slot, not at 10:05.
    expect(runs.map((run) => [run.jobId, new Date(run.scheduledAt).toISOString()])).toEqual([
      ["ping", "2026-03-02T10:01:00.000Z"],
      ["ping", "2026-03-02T10:02:00.000Z"],
      ["digest", "2026-03-02T10:30:00.000Z"],
    ]);
  });

  it("keeps the jobs it has when the edited file does not load, naming the file and the problem", async ({
    onTestFinished,
  }) => {
    const { h, scheduler } = await setUp(onTestFinished);
    writeJobs(h, '{ "jobs": [ { "id": "digest" ');
    const failed = await scheduler.reload().catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(CronJobsError);
    expect(String((failed as Error).message)).toContain(jobsFilePath(h.stateDir));
    expect(String((failed as Error).message)).toContain("not valid JSON");
    writeJobs(h, [
      { id: "digest", schedule: { kind: "every", everySeconds: -5 }, payload: { message: "x" } },
    ]);
    await expect(scheduler.reload()).rejects.toThrow(/everySeconds/);
    expect((await scheduler.list()).map((job) => [job.id, job.schedule])).toEqual([
      ["digest", { kind: "every", everySeconds: 300 }],
    ]);
  });

  it("watches the jobs file while started: a job added by rename is picked up, a broken file is reported", async ({
    onTestFinished,
  }) => {
    const { h, scheduler, reloads, nextReload } = await setUp(onTestFinished, 20);
    scheduler.start();
    await scheduler.settled();

    let reloaded = nextReload();
    writeJobs(h, [every("digest", 300), every("ping", 60)]);
    await reloaded;
    expect(reloads.at(-1)).toEqual({ added: ["ping"], removed: [], changed: [], rescheduled: [] });
    expect((await scheduler.list()).map((job) => job.id)).toEqual(["digest", "ping"]);

    reloaded = nextReload();
    writeJobs(h, "not json at all");
    await reloaded;
    expect(reloads.at(-1)).toBeInstanceOf(CronJobsError);
    expect((await scheduler.list()).map((job) => job.id)).toEqual(["digest", "ping"]);

    await scheduler.stop();
    const count = reloads.length;
    writeJobs(h, [every("digest", 300)]);
    // Stopped: no watch. Give a poll interval many times over to prove nothing comes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reloads).toHaveLength(count);
  });
});
