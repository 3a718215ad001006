import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "./errors.ts";
import { loadConfig, parseConfigText } from "./load.ts";

const EXAMPLE = join(import.meta.dirname, "..", "..", "..", "examples", "agent-kernel.config.json5");

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "agent-kernel-config-"));
}

function thrown(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("loads the example config shipped in the repo", () => {
    const { config, path, origin } = loadConfig({ path: EXAMPLE, env: {} });
    expect(origin).toBe("argument");
    expect(path).toBe(EXAMPLE);
    expect(config.agents.list.map((agent) => agent.id)).toEqual(["main", "ops"]);
    expect(config.agents.list[1]?.model).toEqual({ primary: "openai/gpt-5-mini", fallbacks: [] });
    expect(config.models.providers.local?.baseUrl).toBe("http://127.0.0.1:8787/v1");
  });

  it("reads $AGENT_KERNEL_CONFIG when no path is given", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "c.json5"), "{ session: { dmScope: 'per-peer' } }");
    const loaded = loadConfig({ env: { AGENT_KERNEL_CONFIG: "c.json5" }, cwd: dir });
    expect(loaded.origin).toBe("env");
    expect(loaded.path).toBe(join(dir, "c.json5"));
    expect(loaded.config.session.dmScope).toBe("per-peer");
  });

  it("reads ~/.agent-kernel/config.json5 when nothing else is given", () => {
    const home = tempDir();
    mkdirSync(join(home, ".agent-kernel"));
    writeFileSync(join(home, ".agent-kernel", "config.json5"), "{ messages: { queue: { cap: 3 } } }");
    const loaded = loadConfig({ env: {}, homeDir: home });
    expect(loaded.origin).toBe("default-path");
    expect(loaded.config.messages.queue.cap).toBe(3);
  });

  it("uses defaults when the default file does not exist", () => {
    const loaded = loadConfig({ env: {}, homeDir: tempDir() });
    expect(loaded).toMatchObject({ origin: "defaults-only", path: undefined });
    expect(loaded.config.agents.defaults.timeoutSeconds).toBe(172_800);
  });

  it("expands ~ in an explicit path", () => {
    const home = tempDir();
    writeFileSync(join(home, "k.json5"), "{}");
    expect(loadConfig({ path: "~/k.json5", env: {}, homeDir: home }).path).toBe(join(home, "k.json5"));
  });

  it("fails clearly for an explicit file that does not exist", () => {
    const error = thrown(() => loadConfig({ path: "/nonexistent/agent.json5", env: {} }));
    expect(error.message).toBe(
      "Invalid config /nonexistent/agent.json5 (1 problem):\n  - config file /nonexistent/agent.json5 does not exist",
    );
  });

  it("names $AGENT_KERNEL_CONFIG when the file it points to is missing", () => {
    const error = thrown(() => loadConfig({ env: { AGENT_KERNEL_CONFIG: "/nope.json5" } }));
    expect(error.issues[0]?.message).toBe(
      "config file /nope.json5 (from $AGENT_KERNEL_CONFIG) does not exist",
    );
  });

  it("fails clearly for a directory", () => {
    const dir = tempDir();
    expect(thrown(() => loadConfig({ path: dir, env: {} })).issues[0]?.message).toBe(
      `${dir} is a directory, expected a file`,
    );
  });

  it("names the file in validation errors", () => {
    const dir = tempDir();
    const file = join(dir, "bad.json5");
    writeFileSync(file, "{ agents: { defaults: { timeoutSeconds: -1 } } }");
    expect(thrown(() => loadConfig({ path: file, env: {} })).message).toBe(
      `Invalid config ${file} (1 problem):\n  - agents.defaults.timeoutSeconds: expected a number >= 0, found -1`,
    );
  });
});

describe("JSON5 syntax errors", () => {
  it("shows line, column and the offending line with a caret", () => {
    const error = thrown(() =>
      parseConfigText('{\n  agents: {\n    defaults: { model: "a/b" x }\n  }\n}', {
        sourceName: "c.json5",
        env: {},
      }),
    );
    expect(error.message).toBe(
      [
        "Invalid config c.json5 (1 problem):",
        "  - JSON5 syntax error at line 3, column 30: invalid character 'x'",
        '          defaults: { model: "a/b" x }',
        `${" ".repeat(6 + 29)}^`,
      ].join("\n"),
    );
    expect(error.issues[0]?.kind).toBe("syntax");
  });

  it("reports an unterminated document", () => {
    const error = thrown(() => parseConfigText("{ agents: {", { env: {} }));
    expect(error.issues[0]?.message).toMatch(
      /^JSON5 syntax error at line 1, column 12: invalid end of input/,
    );
  });
});
