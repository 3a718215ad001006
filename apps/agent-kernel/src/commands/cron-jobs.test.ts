// `agent-kernel cron add|rm|enable|disable`: the jobs file written by command and read back by the cron app
// (`cron list`), an invalid job refused before anything is written, a config job left to the config.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../../test/harness.ts";
import { EXIT } from "../errors.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness('channels: { telegram: { enabled: false, botToken: "123456:TEST-token" } },');
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const jobsFile = () => join(h.stateDir, "cron", "jobs.json");
const listed = async () =>
  JSON.parse((await h.run(["cron", "list", "--json"])).stdout) as { id: string; enabled: boolean }[];

describe("agent-kernel cron", () => {
  it("add, disable, enable and rm change jobs.json, and the cron app sees each change", async () => {
    const added = await h.run(["cron", "add", "brief", "--every", "3600", "-m", "Summarise my inbox"]);
    expect(added.stderr).toBe("");
    expect(added.code).toBe(EXIT.ok);
    expect(JSON.parse(readFileSync(jobsFile(), "utf8"))).toEqual({
      jobs: [
        {
          id: "brief",
          enabled: true,
          schedule: { kind: "every", everySeconds: 3600 },
          payload: { message: "Summarise my inbox" },
          delivery: { mode: "none" },
        },
      ],
    });
    expect(await listed()).toMatchObject([{ id: "digest" }, { id: "brief", enabled: true }]);

    const withDelivery = await h.run([
      "cron",
      "add",
      "standup",
      "--cron",
      "0 9 * * 1-5",
      "--tz",
      "Europe/Berlin",
      "-m",
      "Plan my day",
      "--channel",
      "telegram",
      "--to",
      "5550001",
    ]);
    expect(withDelivery.code).toBe(EXIT.ok);

    expect((await h.run(["cron", "disable", "brief"])).code).toBe(EXIT.ok);
    expect((await listed()).find((job) => job.id === "brief")?.enabled).toBe(false);
    expect((await h.run(["cron", "enable", "brief"])).code).toBe(EXIT.ok);
    expect((await listed()).find((job) => job.id === "brief")?.enabled).toBe(true);
    expect((await h.run(["cron", "rm", "standup"])).code).toBe(EXIT.ok);
    expect((await listed()).map((job) => job.id)).toEqual(["digest", "brief"]);
  }, 120_000);

  it("an invalid job is refused and nothing is written; a config job and a missing one are said so", async () => {
    const before = readFileSync(jobsFile(), "utf8");
    const bad = await h.run(["cron", "add", "bad", "--cron", "99 * * * *", "-m", "x"]);
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toContain('cron expression "99 * * * *" is not usable');
    expect(bad.stderr).toContain(jobsFile());
    expect(readFileSync(jobsFile(), "utf8")).toBe(before);
    expect(existsSync(`${jobsFile()}.${process.pid}.tmp`)).toBe(false);

    const two = await h.run(["cron", "add", "x", "--every", "60", "--at", "2030-01-01T00:00:00Z", "-m", "x"]);
    expect(two.code).toBe(EXIT.usage);
    expect(two.stderr).toContain("exactly one of --every");
    const half = await h.run(["cron", "add", "x", "--every", "60", "-m", "x", "--channel", "telegram"]);
    expect(half.stderr).toContain("--channel and --to go together");
    const duplicate = await h.run(["cron", "add", "digest", "--every", "60", "-m", "x"]);
    expect(duplicate.stderr).toContain('a job "digest" is defined in the config file');

    const configJob = await h.run(["cron", "disable", "digest"]);
    expect(configJob.code).toBe(EXIT.usage);
    expect(configJob.stderr).toContain('job "digest" is defined in the config file (cron.jobs)');
    const missing = await h.run(["cron", "rm", "nope"]);
    expect(missing.code).toBe(EXIT.notFound);
    const unknown = await h.run(["cron", "remove", "brief"]);
    expect(unknown.code).toBe(EXIT.usage);
  }, 120_000);
});
