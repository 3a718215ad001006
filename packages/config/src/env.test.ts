import { describe, expect, it } from "vitest";
import { substituteEnv } from "./env.ts";
import { parseConfig, safeParseConfig } from "./load.ts";

describe("${ENV} substitution", () => {
  it("replaces references in string values, anywhere in the tree", () => {
    const { value, issues } = substituteEnv(
      { a: "${HOST}:${PORT}", list: ["x-${HOST}"], n: 5, flag: true, none: null },
      { HOST: "example.org", PORT: "8080" },
    );
    expect(issues).toEqual([]);
    expect(value).toEqual({ a: "example.org:8080", list: ["x-example.org"], n: 5, flag: true, none: null });
  });

  it("uses the fallback after :- when the variable is unset or empty", () => {
    const { value } = substituteEnv({ a: "${A:-one}", b: "${B:-}", c: "${C:-x}" }, { C: "", A: undefined });
    expect(value).toEqual({ a: "one", b: "", c: "x" });
  });

  it("turns $${NAME} into the literal text ${NAME}", () => {
    expect(substituteEnv("cost: $${PRICE}", { PRICE: "9" }).value).toBe("cost: ${PRICE}");
  });

  it("leaves lower-case and malformed references alone", () => {
    expect(substituteEnv("${name} ${1X} $HOME", { name: "n", HOME: "/h" }).value).toBe("${name} ${1X} $HOME");
  });

  it("does not substitute inside object keys", () => {
    expect(substituteEnv({ "${K}": "v" }, { K: "key" }).value).toEqual({ "${K}": "v" });
  });

  it("reports each unset variable with the config path that uses it", () => {
    const result = safeParseConfig(
      {
        auth: {
          profiles: { "openai:main": { provider: "openai", mode: "api_key", apiKey: "${OPENAI_API_KEY}" } },
        },
      },
      { env: {}, sourceName: "cfg" },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toBe(
      [
        "Invalid config cfg (1 problem):",
        '  - auth.profiles["openai:main"].apiKey: environment variable OPENAI_API_KEY is not set (referenced as ${OPENAI_API_KEY}; use ${OPENAI_API_KEY:-default} for a fallback)',
      ].join("\n"),
    );
  });

  it("treats an empty variable as unset", () => {
    const result = safeParseConfig({ store: { stateDir: "${STATE}" } }, { env: { STATE: "" } });
    expect(result.ok).toBe(false);
  });

  it("validates the substituted value, not the reference", () => {
    const config = parseConfig({ store: { driver: "${DRIVER}" } }, { env: { DRIVER: "postgres" } });
    expect(config.store.driver).toBe("postgres");
    const bad = safeParseConfig({ store: { driver: "${DRIVER}" } }, { env: { DRIVER: "mysql" } });
    expect(bad.ok ? [] : bad.error.issues.map((issue) => issue.message)).toEqual([
      'expected one of "sqlite", "postgres", found "mysql"',
    ]);
  });

  it("keeps substituted values strings: numbers cannot come from the environment", () => {
    const result = safeParseConfig({ channels: { webchat: { port: "${PORT}" } } }, { env: { PORT: "8080" } });
    expect(result.ok ? [] : result.error.issues.map((issue) => issue.message)).toEqual([
      'expected a number, found "8080"',
    ]);
  });

  it("defaults to process.env", () => {
    process.env.AGENT_KERNEL_TEST_WORKSPACE = "/tmp/from-env";
    try {
      expect(
        parseConfig({ agents: { defaults: { workspace: "${AGENT_KERNEL_TEST_WORKSPACE}" } } }).agents.defaults
          .workspace,
      ).toBe("/tmp/from-env");
    } finally {
      delete process.env.AGENT_KERNEL_TEST_WORKSPACE;
    }
  });
});
