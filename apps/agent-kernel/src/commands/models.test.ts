// `agent-kernel models list|status`: which keys are set (an auth profile, a custom provider's own key or
// none needed, the environment variable pi-ai reads) and so which models are usable — from the config and
// the environment only.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../../test/harness.ts";
import { EXIT } from "../errors.ts";

let h: Harness;
beforeAll(async () => {
  // the ops agent runs on a hosted provider with a fallback on another: keys from the environment
  h = await createHarness();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe("agent-kernel models", () => {
  it("status says where each provider's key comes from, or what to set", async () => {
    const config = ["--config", h.configPath];
    const set = [
      "agents.list",
      '[{ id: "main", default: true }, { id: "ops", model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["openai/gpt-5-mini"] } }]',
    ];
    expect((await h.run(["config", "set", ...set, ...config])).code).toBe(EXIT.ok);

    const without = JSON.parse((await h.run(["models", "status", "--json"])).stdout).providers;
    expect(without).toEqual([
      {
        provider: "anthropic",
        usable: false,
        hint: 'set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_OAUTH_TOKEN), or add an auth profile for "anthropic" (auth.profiles)',
        custom: false,
      },
      {
        provider: "openai",
        usable: false,
        hint: 'set OPENAI_API_KEY, or add an auth profile for "openai" (auth.profiles)',
        custom: false,
      },
      {
        provider: "scripted",
        usable: true,
        source: "none needed by the config (a custom provider)",
        custom: true,
      },
    ]);

    // a profile whose key is a reference to the environment: the file holds the reference, never the key
    const keys = { ANTHROPIC_API_KEY: "sk-ant-test", WORK_OPENAI_KEY: "sk-work" };
    const profile =
      '{ "openai:work": { provider: "openai", mode: "api_key", apiKey: "${WORK_OPENAI_KEY}" } }';
    expect((await h.run(["config", "set", "auth.profiles", profile, ...config], keys)).code).toBe(EXIT.ok);
    expect(readFileSync(h.configPath, "utf8")).toContain("${WORK_OPENAI_KEY}");
    expect(readFileSync(h.configPath, "utf8")).not.toContain("sk-work");
    const withKeys = await h.run(["models", "status"], keys);
    expect(withKeys.code).toBe(EXIT.ok);
    expect(withKeys.stdout).toMatch(/^anthropic +key: env ANTHROPIC_API_KEY$/m);
    expect(withKeys.stdout).toMatch(/^openai +key: auth profile openai:work$/m);
  });

  it("list marks each agent's models usable or not", async () => {
    const list = JSON.parse(
      (await h.run(["models", "list", "--json"], { WORK_OPENAI_KEY: "sk-work" })).stdout,
    );
    expect(list.models).toEqual([
      { ref: "scripted/m1", role: "primary", agentId: "main", usable: true },
      { ref: "anthropic/claude-sonnet-4-5", role: "primary", agentId: "ops", usable: false },
      { ref: "openai/gpt-5-mini", role: "fallback", agentId: "ops", usable: true },
      { ref: "scripted/m2", role: "alias", alias: "sonnet", usable: true },
      { ref: "scripted/m1", role: "custom", usable: true },
      { ref: "scripted/m2", role: "custom", usable: true },
    ]);
    const unknown = await h.run(["models", "list", "--agent", "nobody"], { WORK_OPENAI_KEY: "sk-work" });
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.stderr).toBe('agent-kernel: no agent "nobody" in the config (agents: main, ops)\n');
  });
});
