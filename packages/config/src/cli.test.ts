import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
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
    const { code, stdout, stderr } = run("check", EXAMPLE);
    expect(code).toBe(0);
    expect(stdout).toBe(
      `config OK: ${EXAMPLE}\n  agents: main, ops\n  channels: telegram, webchat\n  cron jobs: 1\n`,
    );
    expect(stderr).toBe("");
  });

  describe.skipIf(process.platform === "win32")("check: literal secrets in a file others can read", () => {
    const LITERAL =
      "{ auth: { profiles: { 'openai:a': { provider: 'openai', mode: 'api_key', apiKey: 'sk-secret' } } },\n" +
      "  models: { providers: { local: { baseUrl: 'http://127.0.0.1:8787/v1', api: 'openai-completions',\n" +
      "    headers: { authorization: 'Bearer ${LOCAL_TOKEN:-unset}' }, models: [{ id: 'm' }] } } } }";
    const configFile = (mode: number) => {
      const file = join(mkdtempSync(join(tmpdir(), "cfg-")), "c.json5");
      writeFileSync(file, LITERAL);
      chmodSync(file, mode);
      return file;
    };

    it("mode 0644: warns on stderr and still exits 0", () => {
      const file = configFile(0o644);
      const { code, stdout, stderr } = run("check", file);
      expect(code).toBe(0);
      expect(stdout).toMatch(/^config OK: /);
      expect(stderr).toBe(
        `warning: config file ${file} is readable by its group and all users (mode 0644) and holds a literal ` +
          `secret at auth.profiles["openai:a"].apiKey; run \`chmod 600 ${file}\`, or move each value to an ` +
          "environment variable referenced as ${NAME}\n",
      );
      expect(stderr).not.toContain("sk-secret");
    });

    it("mode 0600: no warning", () => {
      const { code, stdout, stderr } = run("check", configFile(0o600));
      expect(code).toBe(0);
      expect(stdout).toMatch(/^config OK: /);
      expect(stderr).toBe("");
    });
  });

  it("check: warns about agents whose non-owner sessions run exec unsandboxed, and still exits 0", () => {
    const file = join(mkdtempSync(join(tmpdir(), "cfg-")), "c.json5");
    writeFileSync(
      file,
      "{ tools: { nonOwnerHostTools: true }, channels: { telegram: { dmPolicy: 'open', allowFrom: ['*'] } } }",
    );
    chmodSync(file, 0o600);
    const { code, stdout, stderr } = run("check", file);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^config OK: /);
    const lines = stderr.split("\n").filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warning: agent "main" .*tools\.nonOwnerHostTools is true/);
    expect(lines[0]).toContain("channels.telegram.dmPolicy");
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

  it("print: hides provider headers and secret-shaped values under any key", () => {
    const file = join(mkdtempSync(join(tmpdir(), "cfg-")), "c.json5");
    const bearer = "FAKEbearer0123456789";
    const telegram = "123456789:AAFakeFakeFakeFakeFakeFakeFake01234";
    writeFileSync(
      file,
      `{ models: { providers: { local: { baseUrl: 'https://u:pr0xy-FAKE@llm.internal/v1', api: 'openai-completions',
           headers: { authorization: 'Bearer ${bearer}', 'X-Title': 'kernel' }, models: [{ id: 'qwen3-coder' }] } } },
         channels: { telegram: { botToken: '\${TELEGRAM_BOT_TOKEN}' } },
         store: { driver: 'postgres', postgres: { url: 'postgres://k:hunter2-FAKE@db:5432/k' } } }`,
    );
    const result = spawnSync(process.execPath, [CLI, "print", file], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        HOME: mkdtempSync(join(tmpdir(), "home-")),
        TELEGRAM_BOT_TOKEN: telegram,
      },
    });
    expect(result.status).toBe(0);
    for (const secret of [bearer, telegram, "pr0xy-FAKE", "hunter2-FAKE"])
      expect(result.stdout).not.toContain(secret);
    const printed = JSON.parse(result.stdout);
    expect(printed.models.providers.local.headers).toEqual({
      authorization: "[redacted]",
      "X-Title": "[redacted]",
    });
    expect(printed.models.providers.local.baseUrl).toBe("https://u:[redacted]@llm.internal/v1");
    expect(printed.models.providers.local.models[0].id).toBe("qwen3-coder");
    expect(printed.store.postgres.url).toBe("postgres://k:[redacted]@db:5432/k");
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
