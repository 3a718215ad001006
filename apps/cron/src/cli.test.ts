// `agent-cron` in-process against tooling/fake-llm: tick runs what is due, history and list read it back, and
// bad input exits with a clear message and its code.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { type CronHarness, createCronHarness, runBinary } from "../test/harness.ts";
import { EXIT, runCronCli } from "./cli.ts";

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void): Promise<CronHarness> {
  const h = await createCronHarness();
  onTestFinished(() => h.close());
  return h;
}

async function run(h: CronHarness, args: readonly string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runCronCli([...args, "--config", h.configPath, "--state-dir", h.stateDir], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    cwd: h.root,
  });
  return { code, stdout, stderr };
}

describe.concurrent("agent-cron", () => {
  it("tick runs a due one-shot job once; history and list show it", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.writeConfig(`{ jobs: [{ id: "once", name: "One shot", schedule: { kind: "at", at: "2020-01-01T00:00:00Z" },
      payload: { message: "hello" } }] }`);
    h.llm.enqueue(reply("did it"));
    const ticked = await run(h, ["tick", "--json"]);
    expect(ticked.stderr).toBe("");
    expect(ticked.code).toBe(EXIT.ok);
    const report = JSON.parse(ticked.stdout) as {
      runs: { jobId: string; status: string; text: string; catchUp: boolean }[];
    };
    expect(report.runs).toEqual([
      expect.objectContaining({ jobId: "once", status: "ok", text: "did it", catchUp: true }),
    ]);

    const again = await run(h, ["tick"]);
    expect(again.stdout).toBe("nothing due\n");

    const history = await run(h, ["history", "once", "--json"]);
    const runs = JSON.parse(history.stdout) as { status: string; entryPoint: string; sessionKey: string }[];
    expect(runs).toEqual([
      expect.objectContaining({
        status: "succeeded",
        entryPoint: "cron",
        sessionKey: "agent:main:cron:once",
      }),
    ]);
    const text = await run(h, ["history", "once"]);
    expect(text.stdout).toMatch(/^\S+Z {2}succeeded {2}\S+ {2}session \S+\n$/);

    const list = await run(h, ["list"]);
    expect(list.stdout).toMatch(
      /^once {2}at 2020-01-01T00:00:00Z {2}agent main {2}next - {2}last \S+Z ok\n$/,
    );
  });

  it("exits 3 for an unknown job, 2 for a bad command, flag or jobs file", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.writeConfig(
      `{ jobs: [{ id: "a", schedule: { kind: "every", everySeconds: 60 }, payload: { message: "m" } }] }`,
    );
    expect(await run(h, ["history", "b"])).toEqual({
      code: EXIT.notFound,
      stdout: "",
      stderr: 'agent-cron: no cron job "b" (jobs: a)\n',
    });
    expect((await run(h, ["explode"])).stderr).toBe(
      'agent-cron: unknown command "explode" (commands: list, history, run, tick, start). Run `agent-cron --help` for usage.\n',
    );
    expect((await run(h, ["history", "a", "--limit", "0"])).code).toBe(EXIT.usage);
    expect((await run(h, ["list", "--bogus"])).code).toBe(EXIT.usage);
    mkdirSync(join(h.stateDir, "cron"), { recursive: true });
    writeFileSync(
      join(h.stateDir, "cron", "jobs.json"),
      `{ "jobs": [{ "id": "a", "schedule": { "kind": "every", "everySeconds": 60 }, "payload": { "message": "m" } }] }`,
    );
    const duplicate = await run(h, ["list"]);
    expect(duplicate.code).toBe(EXIT.usage);
    expect(duplicate.stderr).toContain('jobs[0].id: duplicate cron job id "a" (also in config)');
  });

  it("the agent-cron binary runs `tick` and `list` as a subprocess", async ({ onTestFinished }) => {
    const h = await harness(onTestFinished);
    h.writeConfig(
      `{ jobs: [{ id: "bin", schedule: { kind: "at", at: "2020-01-01T00:00:00Z" }, payload: { message: "hi" } }] }`,
    );
    h.llm.enqueue(reply("from the binary"));
    const common = ["--config", h.configPath, "--state-dir", h.stateDir];
    const ticked = await runBinary(["tick", ...common]);
    expect(ticked.stderr).toBe("");
    expect(ticked.code).toBe(EXIT.ok);
    expect(ticked.stdout).toMatch(/^bin: ok run \S+\n$/);
    const bad = await runBinary(["history", "nope", ...common]);
    expect(bad).toEqual({
      code: EXIT.notFound,
      stdout: "",
      stderr: 'agent-cron: no cron job "nope" (jobs: bin)\n',
    });
  });
});
