import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const CLI = join(import.meta.dirname, "cli.ts");
const EXAMPLE = join(import.meta.dirname, "..", "..", "..", "examples", "agent-kernel.config.json5");

function run(...args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: mkdtempSync(join(tmpdir(), "home-")) },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("agent-kernel-config", () => {
  it("check: summarises a valid config and exits 0", () => {
    const { code, stdout } = run("check", EXAMPLE);
    expect(code).toBe(0);
    expect(stdout).toBe(
      `config OK: ${EXAMPLE}\n  agents: main, ops\n  channels: telegram, webchat\n  cron jobs: 1\n`,
    );
  });

  it("check: prints the problems, no stack trace, and exits 2", () => {
    const file = join(mkdtempSync(join(tmpdir(), "cfg-")), "bad.json5");
    writeFileSync(file, "{ agents: { defaults: { timeoutSeconds: 'soon' } }, sesion: {} }");
    const { code, stdout, stderr } = run("check", file);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      `Invalid config ${file} (2 problems):\n` +
        `  - agents.defaults.timeoutSeconds: expected a number, found "soon"\n` +
        `  - sesion: unknown key; did you mean "session"?\n`,
    );
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("print: prints the resolved config as JSON with secrets redacted", () => {
    const file = join(mkdtempSync(join(tmpdir(), "cfg-")), "c.json5");
    writeFileSync(
      file,
      "{ auth: { profiles: { 'openai:a': { provider: 'openai', mode: 'api_key', apiKey: 'sk-secret' } } } }",
    );
    const { code, stdout } = run("print", file);
    expect(code).toBe(0);
    expect(stdout).not.toContain("sk-secret");
    const printed = JSON.parse(stdout);
    expect(printed.auth.profiles["openai:a"].apiKey).toBe("[redacted]");
    expect(printed.agents.defaults.timeoutSeconds).toBe(172_800);
  });

  it("schema: prints the JSON Schema", () => {
    const { code, stdout } = run("schema");
    expect(code).toBe(0);
    expect(JSON.parse(stdout).title).toBe("Agent Session Kernel config");
  });

  it("rejects an unknown command with usage and exit 2", () => {
    const { code, stderr } = run("validate");
    expect(code).toBe(2);
    expect(stderr).toMatch(/^unknown command "validate"\n\nusage: agent-kernel-config/);
  });
});
