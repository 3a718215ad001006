// Bad flags and bad config: one clear paragraph on stderr, no stack trace, the documented non-zero exit code.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, type CliResult, createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";

let h: CliHarness;
beforeAll(async () => {
  h = await createCliHarness();
});
afterAll(async () => {
  await h?.close();
});

function expectUsage(result: CliResult, pattern: RegExp): void {
  expect(result.code).toBe(EXIT.usage);
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(/^agent: /);
  expect(result.stderr).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at \S/);
}

describe.concurrent("usage errors exit 2 with one message", () => {
  it("an unknown flag, with a suggestion", async () => {
    expectUsage(
      await h.run(["-m", "hi", "--sesion-key", "x"]),
      /unknown option '--sesion-key'.*--session-key/s,
    );
  });
  it("--timeout that is not a positive whole number", async () => {
    expectUsage(
      await h.run(["-m", "hi", "--timeout", "0"]),
      /--timeout expects a positive whole number, got "0"/,
    );
    expectUsage(await h.run(["-m", "hi", "--timeout", "1.5"]), /--timeout expects a positive whole number/);
  });
  it("no --message and no command, or an empty message", async () => {
    expectUsage(await h.run([]), /nothing to do: pass --message/);
    expectUsage(await h.run(["-m", "  "]), /--message is empty/);
  });
  it("a flag missing its value", async () => {
    expectUsage(await h.run(["--config", h.configPath, "-m"], { bare: true }), /argument missing/);
  });
  it("an unknown agent, a key of another agent, an unknown thinking level, an unknown model", async () => {
    expectUsage(await h.run(["-m", "hi", "--agent", "mian"]), /unknown agent "mian"; did you mean "main"\?/);
    expectUsage(
      await h.run(["-m", "hi", "--agent", "ops", "--session-key", "agent:main:x"]),
      /belongs to agent "main", not to the given agent "ops"/,
    );
    expectUsage(await h.run(["-m", "hi", "--thinking", "loud"]), /--thinking "loud" is not a thinking level/);
    expectUsage(await h.run(["-m", "hi", "--model", "nope/none"]), /cannot run this turn: .*nope/);
    expect(h.llm.requests).toHaveLength(0);
  });
  it("a subcommand without its subcommand or argument", async () => {
    expectUsage(await h.run(["runs"]), /needs a subcommand/);
    expectUsage(await h.run(["runs", "show"]), /missing required argument 'runId'/);
  });
});

describe.concurrent("config errors exit 2 and name the file and the problem", () => {
  it("an invalid config lists every problem with its path", async () => {
    const bad = join(h.root, "bad.json5");
    writeFileSync(bad, "{ agents: { defaults: { timeoutSeconds: -5, thinkingDefalt: 'low' } } }");
    const result = await h.run(["-m", "hi", "--config", bad, "--state-dir", h.stateDir], { bare: true });
    expectUsage(result, /Invalid config .*bad\.json5/);
    expect(result.stderr).toContain("agents.defaults.timeoutSeconds");
    expect(result.stderr).toContain('did you mean "thinkingDefault"');
  });
  it("a config file that does not exist, from --config or $AGENT_KERNEL_CONFIG", async () => {
    const missing = join(h.root, "missing.json5");
    expectUsage(
      await h.run(["sessions", "list", "--config", missing], { bare: true }),
      /missing\.json5.*does not exist/,
    );
    expectUsage(
      await h.run(["sessions", "list"], { bare: true, env: { AGENT_KERNEL_CONFIG: missing } }),
      /AGENT_KERNEL_CONFIG/,
    );
  });
  it("JSON5 that does not parse", async () => {
    const broken = join(h.root, "broken.json5");
    writeFileSync(broken, "{ agents: ");
    expectUsage(await h.run(["sessions", "list", "--config", broken], { bare: true }), /broken\.json5/);
  });
  it("a state dir that is not a store exits 5", async () => {
    const notStore = join(h.root, "not-a-store");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(notStore, "state"), { recursive: true });
    writeFileSync(
      join(notStore, "state", "kernel.sqlite"),
      "this is not sqlite at all, just text".repeat(200),
    );
    const result = await h.run(["sessions", "list", "--config", h.configPath, "--state-dir", notStore], {
      bare: true,
    });
    expect(result.code).toBe(EXIT.store);
    expect(result.stderr).toMatch(/^agent: cannot open the store in /);
  });
});
