// The example config that `agent-kernel-config check` accepts (examples/agent-kernel.config.json5) is
// accepted by cron too: its jobs load, with the announce delivery naming both the channel and the chat.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfigText } from "@agent-kernel/config";
import { describe, expect, it } from "vitest";
import { loadCronJobs } from "./jobs.ts";

const EXAMPLE = join(import.meta.dirname, "..", "..", "..", "examples", "agent-kernel.config.json5");

describe("the example config", () => {
  it("passes cron's job checks", () => {
    const config = parseConfigText(readFileSync(EXAMPLE, "utf8"), {
      env: { TELEGRAM_BOT_TOKEN: "123:abc" },
      cpuCount: 2,
    });
    const jobs = loadCronJobs({ config, stateDir: undefined, jobsFile: false });
    expect(jobs.map(({ job }) => [job.id, job.delivery])).toEqual([
      ["morning-brief", { mode: "announce", channel: "telegram", to: "123456789" }],
    ]);
  });
});
