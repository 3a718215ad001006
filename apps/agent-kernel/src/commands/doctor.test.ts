// `agent-kernel doctor`: every section against real parts — the config, the keys, a channel probed against
// tooling/fake-telegram, the custom provider's server (tooling/fake-llm) reached, the store checked by the
// agent app's doctor — and `--fix` making a config file that holds a secret owner-only and creating a
// missing workspace.
import { chmodSync, existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeTelegram, startFakeTelegram } from "@agent-kernel/fake-telegram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configText, createHarness, type Harness } from "../../test/harness.ts";
import { EXIT } from "../errors.ts";

let h: Harness;
let telegram: FakeTelegram;
beforeAll(async () => {
  telegram = await startFakeTelegram();
  h = await createHarness(
    `channels: { telegram: { enabled: true, botToken: ${JSON.stringify(telegram.token)}, apiBaseUrl: ${JSON.stringify(telegram.url)} } },`,
  );
}, 60_000);
afterAll(async () => {
  await h?.close();
  await telegram?.close();
});

interface Check {
  area: string;
  status: string;
  message: string;
}

describe("agent-kernel doctor", () => {
  it("reports every section ok for a working set-up", async () => {
    const run = await h.run(["doctor", "--json"]);
    const report = JSON.parse(run.stdout) as { ok: boolean; checks: Check[] };
    expect(report.checks.filter((check) => check.status !== "ok")).toEqual([]);
    const areas = new Set(report.checks.map((check) => check.area));
    expect([...areas].sort()).toEqual(["channels", "config", "keys", "models", "store"]);
    expect(report.checks).toContainEqual({
      area: "channels",
      status: "ok",
      message: `telegram: bot @${telegram.bot.username}`,
    });
    expect(report.checks.find((check) => check.area === "models")?.message).toMatch(
      /^scripted: http:\/\/127\.0\.0\.1:\d+\/v1 answers/,
    );
    expect(run.code).toBe(EXIT.ok);
  }, 120_000);

  it("finds problems — a missing key, a server that does not answer, a secret in a readable file — and --fix fixes what is safe", async () => {
    const config = join(h.root, "broken.json5");
    const workspace = join(h.root, "gone");
    const text = configText(
      "http://127.0.0.1:9/v1",
      workspace,
      'auth: { profiles: { "openai:x": { provider: "openai", mode: "api_key", apiKey: "sk-literal-secret-0123456789" } } },',
    ).replace('model: "scripted/m1"', 'model: "anthropic/claude-sonnet-4-5"');
    writeFileSync(config, text);
    chmodSync(config, 0o644);
    rmSync(workspace, { recursive: true, force: true });

    const run = await h.run(["doctor", "--json", "--config", config]);
    expect(run.code).toBe(EXIT.failed);
    const problems = (JSON.parse(run.stdout) as { checks: Check[] }).checks.filter(
      (check) => check.status === "problem",
    );
    // keys: the primary of both agents (main and ops share the defaults); one workspace for both
    expect(problems.map((check) => check.area).sort()).toEqual([
      "config",
      "keys",
      "keys",
      "models",
      "workspace",
    ]);
    expect(problems.find((check) => check.area === "keys")?.message).toContain("set ANTHROPIC_API_KEY");

    const fixed = await h.run(["doctor", "--fix", "--offline", "--json", "--config", config], {
      ANTHROPIC_API_KEY: "sk-ant-x",
    });
    const checks = (JSON.parse(fixed.stdout) as { checks: Check[] }).checks;
    expect(
      checks
        .filter((check) => check.status === "fixed")
        .map((check) => check.area)
        .sort(),
    ).toEqual(["config", "workspace"]);
    expect(statSync(config).mode & 0o777).toBe(0o600);
    expect(existsSync(workspace)).toBe(true);
    expect(checks.filter((check) => check.status === "problem")).toEqual([]);
    expect(fixed.code).toBe(EXIT.ok);
  }, 120_000);

  it("an invalid config is one problem and exit 1, not a crash", async () => {
    const config = join(h.root, "invalid.json5");
    writeFileSync(config, "{ session: { dmScope: 'everyone' } }");
    const run = await h.run(["doctor", "--config", config]);
    expect(run.code).toBe(EXIT.failed);
    expect(run.stdout).toMatch(/^problem config +Invalid config .*session\.dmScope/s);
  });
});
