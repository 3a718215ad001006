import { describe, expect, it } from "vitest";
import { configJsonSchema } from "./json-schema.ts";
import { isCredentialKey, redactSecretText, secretPositionOf, secretSpans } from "./secrets.ts";

// Obviously fake values of each shape; never real credentials.
const FAKE = {
  anthropic: "sk-ant-api03-FAKEfake0123456789abcdefFAKE",
  openai: "sk-proj-FAKEfake0123456789abcdefFAKE",
  slackBot: "xoxb-0000000000-0000000000000-FAKEfakeFAKEfake",
  slackApp: "xapp-1-A0000000000-0000000000000-fakefakefake",
  github: "ghp_FAKEfakeFAKEfake0123456789abcdefABCD",
  google: "AIzaFAKEfakeFAKEfake0123456789abcdefghi",
  telegram: "123456789:AAFakeFakeFakeFakeFakeFakeFake01234",
  jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.ZmFrZS1zaWduYXR1cmU",
  bearer: "FAKEbearer0123456789",
  basic: "dXNlcjpwYXNzd29yZA==",
  password: "hunter2-FAKE",
} as const;

describe("isCredentialKey", () => {
  it("names exactly the credential keys of the real schema", () => {
    const keys = new Set<string>();
    const collect = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node !== null && typeof node === "object") {
        for (const [key, child] of Object.entries(node)) {
          if (key === "properties" && child !== null && typeof child === "object")
            for (const name of Object.keys(child)) keys.add(name);
          collect(child);
        }
      }
    };
    collect(configJsonSchema());
    expect(keys.has("mainKey") && keys.has("maxTokens") && keys.has("contextTokens")).toBe(true);
    expect([...keys].filter(isCredentialKey).sort()).toEqual([
      "apiKey",
      "appToken",
      "botToken",
      "signingSecret",
      "token",
    ]);
  });

  it("knows the usual spellings and leaves look-alikes alone", () => {
    for (const key of [
      "key",
      "api_key",
      "api-key",
      "accessToken",
      "refresh_token",
      "clientSecret",
      "webhookSecret",
      "password",
      "sslPassword",
      "passphrase",
      "Authorization",
      "cookie",
      "credentials",
      "privateKey",
      "dsn",
      "x-api-key",
      "X-Auth-Token",
    ]) {
      expect(isCredentialKey(key), key).toBe(true);
    }
    for (const key of [
      "mainKey",
      "sessionKey",
      "maxTokens",
      "keyboard",
      "tokenizer",
      "openai:token",
      "url",
    ]) {
      expect(isCredentialKey(key), key).toBe(false);
    }
  });
});

describe("secretPositionOf", () => {
  it("places headers, credentials and connection strings", () => {
    expect(secretPositionOf(["models", "providers", "p", "headers", "x-title"])).toBe("header");
    expect(secretPositionOf(["models", "providers", "p", "headers"])).toBeUndefined();
    expect(secretPositionOf(["a", "headers", 0])).toBe("header");
    expect(secretPositionOf(["auth", "profiles", "openai:a", "apiKey"])).toBe("credential");
    expect(secretPositionOf(["x", "credentials", "user"])).toBe("credential");
    expect(secretPositionOf(["store", "postgres", "url"])).toBe("connection-string");
    expect(secretPositionOf(["plugins", "db", "connectionString"])).toBe("connection-string");
    expect(secretPositionOf(["channels", "telegram", "apiBaseUrl"])).toBeUndefined();
    expect(secretPositionOf(["agents", "defaults", "model", "primary"])).toBeUndefined();
  });
});

describe("redactSecretText", () => {
  it.each([
    ["an Anthropic key", FAKE.anthropic],
    ["an OpenAI key", FAKE.openai],
    ["a Slack bot token", FAKE.slackBot],
    ["a Slack app token", FAKE.slackApp],
    ["a GitHub token", FAKE.github],
    ["a Google API key", FAKE.google],
    ["a Telegram bot token", FAKE.telegram],
    ["a JWT", FAKE.jwt],
  ])("hides %s, alone or inside text", (_what, secret) => {
    expect(redactSecretText(secret)).toBe("[redacted]");
    expect(redactSecretText(`key is ${secret}, ok`)).toBe("key is [redacted], ok");
  });

  it("keeps the auth scheme and hides the credential", () => {
    expect(redactSecretText(`Bearer ${FAKE.bearer}`)).toBe("Bearer [redacted]");
    expect(redactSecretText(`basic ${FAKE.basic}`)).toBe("basic [redacted]");
    expect(redactSecretText("Bearer information is stripped")).toBe("Bearer information is stripped");
  });

  it("hides only the password of a URL, and credentials in its query", () => {
    expect(redactSecretText(`postgres://app:${FAKE.password}@db.internal:5432/kernel`)).toBe(
      "postgres://app:[redacted]@db.internal:5432/kernel",
    );
    expect(redactSecretText("postgres://app:p@ss:w0rd@db:5432/k")).toBe(
      "postgres://app:[redacted]@db:5432/k",
    );
    expect(redactSecretText("https://api.example.com/v1?api_key=abc123&model=gpt")).toBe(
      "https://api.example.com/v1?api_key=[redacted]&model=gpt",
    );
    expect(redactSecretText(`https://api.telegram.org/bot${FAKE.telegram}/getMe`)).toBe(
      "https://api.telegram.org/bot[redacted]/getMe",
    );
    expect(redactSecretText("host=db user=app password=s3cret dbname=k")).toBe(
      "host=db user=app password=[redacted] dbname=k",
    );
  });

  it("leaves ordinary values readable", () => {
    for (const text of [
      "anthropic/claude-sonnet-4-5",
      "ollama/qwen3:30b-a3b-instruct-2507-q4_K_M-extended-context",
      "~/agent-kernel/workspace",
      "http://127.0.0.1:8787/v1",
      "https://user@example.com:8443/path?x=1",
      "postgres://app@db:5432/kernel",
      "0 8 * * 1-5",
      "Europe/Berlin",
      "sk-learn",
      "Summarise what changed in the workspace since yesterday.",
    ]) {
      expect(redactSecretText(text)).toBe(text);
    }
  });

  it("reports non-overlapping spans with what they look like", () => {
    const text = `Authorization: Bearer ${FAKE.jwt}`;
    const spans = secretSpans(text);
    expect(spans).toHaveLength(1);
    expect(text.slice(spans[0]?.start, spans[0]?.end)).toBe(FAKE.jwt);
  });
});
