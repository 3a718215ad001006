import JSON5 from "json5";
import { describe, expect, it } from "vitest";
import { formatPath } from "./errors.ts";
import { findLiteralSecrets } from "./literal-secrets.ts";

// The file as a user writes it: some secrets literal, some ${ENV} references.
const FILE = `{
  auth: {
    profiles: {
      "anthropic:env": { provider: "anthropic", mode: "api_key", apiKey: "\${ANTHROPIC_API_KEY}" },
      "anthropic:unset": { provider: "anthropic", mode: "api_key", apiKey: "\${ANTHROPIC_API_KEY:-unset}" },
      "openai:literal": { provider: "openai", mode: "api_key", apiKey: "sk-proj-FAKEfake0123456789abcdefFAKE" },
      "openai:fallback": { provider: "openai", mode: "api_key", apiKey: "\${OPENAI_KEY:-sk-proj-FAKEfake0123456789abcdef}" },
    },
  },
  models: {
    providers: {
      local: {
        baseUrl: "\${LOCAL_LLM_URL:-http://127.0.0.1:8787/v1}",
        api: "openai-completions",
        headers: {
          authorization: "Bearer \${LOCAL_TOKEN}",
          "x-api-key": "FAKE-literal-key",
          "X-Title": "Agent Kernel",
          "X-Trace": "Bearer FAKEbearer0123456789",
        },
        models: [{ id: "qwen3-coder" }],
      },
      proxy: {
        baseUrl: "https://proxy:pr0xy-FAKE@llm.internal/v1",
        api: "openai-completions",
        models: [{ id: "m" }],
      },
    },
  },
  channels: {
    telegram: { botToken: "\${TELEGRAM_BOT_TOKEN}", allowFrom: [123456789] },
    slack: { botToken: "xoxb-0000000000-0000000000000-FAKEfakeFAKEfake", signingSecret: "\${SLACK_SIGNING_SECRET}" },
    webchat: { token: "webchat-FAKE" },
  },
  cron: {
    jobs: [
      {
        id: "brief",
        schedule: { kind: "every", everySeconds: 60 },
        payload: { message: "Post to 123456789:AAFakeFakeFakeFakeFakeFakeFake01234 please" },
      },
    ],
  },
  store: {
    driver: "postgres",
    postgres: { url: "postgres://kernel:\${PGPASSWORD}@db:5432/kernel" },
  },
}`;

describe("findLiteralSecrets", () => {
  const found = findLiteralSecrets(JSON5.parse(FILE));
  const paths = found.map((secret) => formatPath(secret.path));

  it("lists the literal secrets, and not the ${ENV} references", () => {
    expect(paths).toEqual([
      'auth.profiles["openai:literal"].apiKey',
      'auth.profiles["openai:fallback"].apiKey',
      "models.providers.local.headers.x-api-key",
      "models.providers.local.headers.X-Trace",
      "models.providers.proxy.baseUrl",
      "channels.slack.botToken",
      "channels.webchat.token",
      "cron.jobs[0].payload.message",
    ]);
  });

  it("says what each is, never the value", () => {
    expect(found.map((secret) => secret.what)).toEqual([
      "a credential key",
      "an API key (sk-…) as a ${NAME:-fallback}",
      "a credential key",
      "a Bearer/Basic credential",
      "a password in a URL",
      "a credential key",
      "a credential key",
      "a Telegram bot token",
    ]);
    expect(JSON.stringify(found)).not.toMatch(/FAKE/);
  });

  it("counts a connection string with a literal password", () => {
    expect(findLiteralSecrets({ store: { postgres: { url: "postgres://k:pw@db/k" } } })).toEqual([
      { path: ["store", "postgres", "url"], what: "a password in a URL" },
    ]);
    expect(findLiteralSecrets({ store: { postgres: { url: "postgres://k@db/k" } } })).toEqual([]);
    expect(findLiteralSecrets({ store: { postgres: { url: "${DATABASE_URL}" } } })).toEqual([]);
  });

  it("counts a random-looking fallback of a credential key, not a placeholder", () => {
    expect(
      findLiteralSecrets({ x: { signingSecret: "${S:-8f14e45fceea167a5a36dedd4bea2543}" } }),
    ).toHaveLength(1);
    expect(findLiteralSecrets({ x: { signingSecret: "${S:-your-signing-secret-here}" } })).toEqual([]);
  });

  it("treats an escaped $${NAME} as literal text", () => {
    expect(findLiteralSecrets({ x: { token: "$${NOT_A_REFERENCE}" } })).toHaveLength(1);
  });

  it("finds nothing in a config without secrets", () => {
    expect(findLiteralSecrets({ agents: { defaults: { model: "anthropic/claude-sonnet-4-5" } } })).toEqual(
      [],
    );
    expect(findLiteralSecrets(undefined)).toEqual([]);
  });
});
