import { describe, expect, it } from "vitest";
import { classifyFailover } from "./classify-error.ts";
import { missingCredentialMessage, providerKeyEnvVars } from "./provider-credentials.ts";
import { planRecovery } from "./recovery.ts";
import { retryAfterMs } from "./retry-after.ts";

describe("providerKeyEnvVars", () => {
  it("names the variables pi-ai reads, an …_API_KEY first, whatever the environment holds", () => {
    expect(providerKeyEnvVars("openai")).toEqual(["OPENAI_API_KEY"]);
    expect(providerKeyEnvVars("anthropic")[0]).toBe("ANTHROPIC_API_KEY");
    expect(providerKeyEnvVars("anthropic")).toContain("ANTHROPIC_OAUTH_TOKEN");
    expect(providerKeyEnvVars("google")).toEqual(["GEMINI_API_KEY"]);
    expect(providerKeyEnvVars("my-custom-server")).toEqual([]);
  });
});

describe("missingCredentialMessage", () => {
  it("names the provider, the variable and the profile to set, and is an auth failure", () => {
    const message = missingCredentialMessage({ provider: "openai" });
    expect(message).toBe(
      'no API key found for provider "openai": set OPENAI_API_KEY in the environment, or add an auth profile for "openai" (auth.profiles in the config, or auth-profiles.json in the agent dir)',
    );
    expect(message).not.toMatch(/\/login/);
    expect(classifyFailover({ message, provider: "openai" })).toBe("auth");
    expect(planRecovery({ message, provider: "openai" }).steps.map((s) => s.kind)).toContain(
      "fallback_model",
    );
  });

  it("names the auth profile that has no key", () => {
    const message = missingCredentialMessage({ provider: "anthropic", profileId: "work" });
    expect(message).toMatch(/^no API key found for provider "anthropic" \(auth profile "work" has none\)/);
    expect(message).toContain("set ANTHROPIC_API_KEY (or ");
    expect(classifyFailover({ message })).toBe("auth");
  });

  it("a provider with no variable is told to get an auth profile only", () => {
    expect(missingCredentialMessage({ provider: "scripted" })).toBe(
      'no API key found for provider "scripted": add an auth profile for "scripted" (auth.profiles in the config, or auth-profiles.json in the agent dir)',
    );
  });
});

describe("retryAfterMs", () => {
  const headers = (values: Record<string, string>) => new Headers(values);
  it("reads retry-after-ms first, then retry-after in seconds or as an HTTP date", () => {
    expect(retryAfterMs(headers({ "retry-after": "1" }))).toBe(1000);
    expect(retryAfterMs(headers({ "retry-after": "0.25" }))).toBe(250);
    expect(retryAfterMs(headers({ "retry-after-ms": "1500", "retry-after": "9" }))).toBe(1500);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }), now)).toBe(5000);
  });
  it("is undefined without a usable header", () => {
    expect(retryAfterMs(headers({}))).toBeUndefined();
    expect(retryAfterMs(headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(headers({ "retry-after": "-3" }))).toBeUndefined();
  });
});
