// The `agent` command on a PostgreSQL store (`store.driver: "postgres"`): a real server, a real turn against
// tooling/fake-llm, then the inspection commands and the doctor read that same store, and nothing is written
// to SQLite under the state dir.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { type PostgresTestServer, startPostgresServer } from "@agent-kernel/kernel/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

let server: PostgresTestServer | undefined;
let h: CliHarness;
let runId = "";

beforeAll(async () => {
  server = await startPostgresServer();
  const url = await server.createDatabase();
  h = await createCliHarness(`store: { driver: "postgres", postgres: { url: ${JSON.stringify(url)} } },`);
  h.llm.enqueue(reply("stored in postgres"));
  const turn = await h.run(["-m", "hello", "--session-key", "pg"]);
  expect(turn.stderr).toBe("");
  expect(turn.code).toBe(EXIT.ok);
  expect(turn.stdout).toContain("stored in postgres");
}, 120_000);

afterAll(async () => {
  await h?.close();
  server?.stop();
});

describe("the agent command on PostgreSQL", () => {
  it("lists and shows the session and the run it stored there", async () => {
    const sessions = JSON.parse((await h.run(["sessions", "list", "--json"])).stdout) as {
      sessionKey: string;
    }[];
    expect(sessions.map((session) => session.sessionKey)).toEqual(["agent:main:pg"]);
    const show = await h.run(["sessions", "show", "pg"]);
    expect(show.code).toBe(EXIT.ok);
    expect(show.stdout).toMatch(/user\s+hello/);

    const runs = JSON.parse((await h.run(["runs", "list", "--json"])).stdout) as {
      runId: string;
      status: string;
    }[];
    expect(runs).toHaveLength(1);
    expect(runs[0]?.status).toBe("succeeded");
    runId = runs[0]?.runId ?? "";
    const run = await h.run(["runs", "show", runId]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain(`Run ${runId}`);
  });

  it("the doctor checks the PostgreSQL store, and a missing run is named with it", async () => {
    const doctor = await h.run(["doctor"]);
    expect(doctor.stdout).toContain("postgres:");
    expect(doctor.code).toBe(EXIT.ok);
    const missing = await h.run(["runs", "show", "no-such-run"]);
    expect(missing.code).toBe(EXIT.notFound);
    expect(missing.stderr).toContain("PostgreSQL");
  });

  it("writes nothing to SQLite under the state dir", () => {
    const state = join(h.stateDir, "state");
    const files = existsSync(state) ? readdirSync(state) : [];
    expect(files.filter((name) => name.endsWith(".sqlite"))).toEqual([]);
  });
});
