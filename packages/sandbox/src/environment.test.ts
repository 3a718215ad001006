// Tests of the environment allowlist: only listed names pass, patterns never pass credential-shaped names,
// and a variable holding a known secret value is dropped whatever its name.
import { describe, expect, it } from "vitest";
import { collectSecretValues, DEFAULT_ENV_ALLOW, scrubEnvironment } from "./environment.ts";

const SOURCE = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/gateway",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  LC_API_TOKEN: "not-a-locale-but-a-token",
  TERM: "xterm",
  ANTHROPIC_API_KEY: "sk-ant-secret-value-1234",
  OPENAI_API_KEY: "sk-secret-value-5678",
  TELEGRAM_BOT_TOKEN: "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef",
  AGENT_KERNEL_STATE_DIR: "/var/lib/agent-kernel",
  GIT_AUTHOR_NAME: "Gateway",
  UNSET: undefined,
};

describe("scrubEnvironment", () => {
  it("passes only the default allowlist", () => {
    expect(scrubEnvironment(SOURCE)).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/gateway",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      TERM: "xterm",
    });
    expect(DEFAULT_ENV_ALLOW).toContain("PATH");
  });

  it("adds configured names and patterns, but a pattern never lets a credential-shaped name through", () => {
    const env = scrubEnvironment(SOURCE, { allow: [...DEFAULT_ENV_ALLOW, "GIT_*", "TELEGRAM_*"] });
    expect(env.GIT_AUTHOR_NAME).toBe("Gateway");
    expect(env.TELEGRAM_BOT_TOKEN).toBeUndefined();
    expect(env.LC_API_TOKEN).toBeUndefined();
  });

  it("lets a credential through only by its exact name", () => {
    const env = scrubEnvironment(SOURCE, { allow: ["OPENAI_API_KEY"] });
    expect(env).toEqual({ OPENAI_API_KEY: "sk-secret-value-5678" });
  });

  it("drops a variable whose value the config holds, even when allowed by name", () => {
    const secrets = collectSecretValues({ auth: { profiles: { a: { apiKey: "sk-secret-value-5678" } } } });
    const env = scrubEnvironment(SOURCE, { allow: ["OPENAI_API_KEY", "PATH"], secretValues: secrets });
    expect(env).toEqual({ PATH: "/usr/bin:/bin" });
  });

  it("sets variables after scrubbing", () => {
    expect(scrubEnvironment(SOURCE, { allow: ["PATH"], set: { PATH: "/bin", X: "1" } })).toEqual({
      PATH: "/bin",
      X: "1",
    });
  });
});

describe("collectSecretValues", () => {
  it("keeps strings long enough to be keys, not paths or short words", () => {
    const values = collectSecretValues({
      a: "sk-0123456789",
      b: ["short", "/home/gateway/workspace", "~/x/y/z/w", { c: "xoxb-1234-abcd" }],
      d: 12345678,
    });
    expect([...values].sort()).toEqual(["sk-0123456789", "xoxb-1234-abcd"]);
  });
});
