// The config of the end-to-end tests: one custom provider per wire format pointing at tooling/fake-llm, two
// models (primary and fallback) and two API-key profiles in a fixed order. Shared by the tests and the child
// process of the restart test, so both resolve exactly the same runtime.
import type { WireProvider } from "@agent-kernel/fake-llm";

export const PROVIDER_OF: Readonly<Record<WireProvider, string>> = { openai: "oai", anthropic: "ant" };
export const KEYS = { a: "sk-test-profile-aaaa", b: "sk-test-profile-bbbb" } as const;

export function wireConfig(
  wire: WireProvider,
  baseUrl: string,
  options: { profiles?: readonly ("a" | "b")[]; fallback?: boolean; contextWindow?: number } = {},
): Record<string, unknown> {
  const provider = PROVIDER_OF[wire];
  const profiles = options.profiles ?? ["a", "b"];
  const model = (id: string) => ({
    id,
    contextWindow: options.contextWindow ?? 100_000,
    maxTokens: 1024,
  });
  return {
    models: {
      providers: {
        [provider]: {
          baseUrl,
          api: wire === "openai" ? "openai-completions" : "anthropic-messages",
          models: [model("m1"), model("m2")],
        },
      },
    },
    auth: {
      profiles: Object.fromEntries(
        profiles.map((name) => [`${provider}:${name}`, { provider, mode: "api_key", apiKey: KEYS[name] }]),
      ),
      order: { [provider]: profiles.map((name) => `${provider}:${name}`) },
    },
    agents: {
      defaults: {
        model:
          options.fallback === false
            ? `${provider}/m1`
            : { primary: `${provider}/m1`, fallbacks: [`${provider}/m2`] },
      },
    },
    tools: { profile: "full" },
  };
}
