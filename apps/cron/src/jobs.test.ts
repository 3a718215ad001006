// Where jobs come from and how bad ones are reported: the config's cron.jobs, the state dir's jobs file and a
// program's jobs, validated together with one error naming every problem and where it is.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { type CronHarness, createCronHarness } from "../test/harness.ts";
import { CronJobsError, jobsFilePath, loadCronJobs } from "./jobs.ts";

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void): Promise<CronHarness> {
  const h = await createCronHarness();
  onTestFinished(() => h.close());
  return h;
}

function writeJobsFile(stateDir: string, content: string): string {
  const path = jobsFilePath(stateDir);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}

const job = (id: string, extra = "") =>
  `{ "id": "${id}", "schedule": { "kind": "every", "everySeconds": 60 }, "payload": { "message": "hi" }${extra} }`;

describe("loadCronJobs", () => {
  it("merges the config's jobs with the jobs file and a program's jobs, with defaults filled", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(`{ jobs: [${job("from-config")}] }`);
    const path = writeJobsFile(h.stateDir, `{ "jobs": [${job("from-file", ', "agentId": "ops"')}] }`);
    const jobs = loadCronJobs({ config, stateDir: h.stateDir, jobs: [JSON.parse(job("from-program"))] });
    expect(jobs.map((entry) => [entry.job.id, entry.agentId, entry.source])).toEqual([
      ["from-config", "main", "config"],
      ["from-file", "ops", path],
      ["from-program", "main", "program"],
    ]);
    expect(jobs[1]?.job).toMatchObject({ enabled: true, missedRuns: "run-once" });
  });

  it("reports every problem of a jobs file with its path: bad JSON, schema errors, unknown agent, bad zone, duplicate id, delivery without a target", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config(`{ jobs: [${job("same")}] }`);
    const path = writeJobsFile(h.stateDir, "{ jobs: [");
    expect(() => loadCronJobs({ config, stateDir: h.stateDir })).toThrow(CronJobsError);
    expect(() => loadCronJobs({ config, stateDir: h.stateDir })).toThrow(`${path} (1 problem)`);
    expect(() => loadCronJobs({ config, stateDir: h.stateDir })).toThrow(/not valid JSON/);

    writeJobsFile(
      h.stateDir,
      `{ "jobs": [{ "id": "x", "schedule": { "kind": "cron", "expr": "0 9 * *" }, "payload": {} }] }`,
    );
    const schema = captured(() => loadCronJobs({ config, stateDir: h.stateDir }));
    expect(schema).toContain("jobs[0].schedule.expr");
    expect(schema).toContain('expected a cron expression with 5 or 6 fields, like "0 9 * * 1-5"');
    expect(schema).toContain("jobs[0].payload.message");

    writeJobsFile(
      h.stateDir,
      `{ "jobs": [
        ${job("same")},
        ${job("ghost", ', "agentId": "nobody"')},
        { "id": "zoned", "schedule": { "kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Atlantis" }, "payload": { "message": "m" } },
        ${job("loud", ', "delivery": { "channel": "telegram" }')}
      ] }`,
    );
    const merged = captured(() => loadCronJobs({ config, stateDir: h.stateDir }));
    expect(merged).toContain("(4 problems)");
    expect(merged).toContain('jobs[0].id: duplicate cron job id "same" (also in config)');
    expect(merged).toContain('jobs[1].agentId: unknown agent "nobody" (agents: main, ops)');
    expect(merged).toContain('jobs[2].schedule: unknown time zone "Europe/Atlantis"');
    expect(merged).toContain('jobs[3].delivery: delivery mode "announce" needs both "channel" and "to"');
  });

  it("a named jobs file that does not exist is an error; `false` ignores the state dir's file", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished);
    const config = h.config("{}");
    expect(() => loadCronJobs({ config, jobsFile: `${h.root}/missing.json` })).toThrow(/does not exist/);
    writeJobsFile(h.stateDir, "not json");
    expect(loadCronJobs({ config, stateDir: h.stateDir, jobsFile: false })).toEqual([]);
  });
});

function captured(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error("expected an error");
}
