import { describe, expect, it } from "vitest";
import { parseConfig } from "./load.ts";
import { redactSecrets } from "./redact.ts";

// Obviously fake values of each kind; never real credentials.
const SECRETS = {
  anthropicKey: "sk-ant-api03-FAKEfake0123456789abcdefFAKE",
  openaiKey: "sk-proj-FAKEfake0123456789abcdefFAKE",
  providerKey: "local-FAKE-key",
  bearer: "FAKEbearer0123456789",
  orgToken: "org-FAKE-0123",
  telegram: "123456789:AAFakeFakeFakeFakeFakeFakeFake01234",
  slackBot: "xoxb-0000000000-0000000000000-FAKEfakeFAKEfake",
  slackApp: "xapp-1-A0000000000-0000000000000-fakefakefake",
  signing: "8f14e45fceea167a5a36dedd4bea2543",
  webchat: "webchat-FAKE-token",
  dbPassword: "hunter2-FAKE",
  jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.ZmFrZS1zaWduYXR1cmU",
  googleKey: "AIzaFAKEfakeFAKEfake0123456789abcdefghi",
  github: "ghp_FAKEfakeFAKEfake0123456789abcdefABCD",
  paramKey: "plain-FAKE-param",
  urlPassword: "pr0xy-FAKE",
} as const;

const config = parseConfig(
  {
    agents: {
      defaults: {
        model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["local/qwen3-coder"] },
        workspace: "~/agent-kernel/workspace",
        models: {
          "local/qwen3-coder": {
            alias: "local",
            params: { api_key: SECRETS.paramKey, temperature: 0.2, note: `uses ${SECRETS.github}` },
          },
        },
      },
    },
    auth: {
      profiles: {
        "anthropic:work": { provider: "anthropic", mode: "api_key", apiKey: SECRETS.anthropicKey },
        "openai:token": { provider: "openai", mode: "token", token: SECRETS.jwt, email: "me@example.com" },
      },
    },
    models: {
      providers: {
        local: {
          baseUrl: `https://proxy:${SECRETS.urlPassword}@llm.internal:8443/v1?key=${SECRETS.googleKey}`,
          api: "openai-completions",
          apiKey: SECRETS.providerKey,
          headers: {
            authorization: `Bearer ${SECRETS.bearer}`,
            "OpenAI-Organization": SECRETS.orgToken,
            "X-Title": "Agent Kernel",
          },
          models: [{ id: "qwen3-coder", contextWindow: 131072 }],
        },
      },
    },
    channels: {
      telegram: { botToken: SECRETS.telegram, allowFrom: [123456789] },
      slack: {
        mode: "socket",
        botToken: SECRETS.slackBot,
        appToken: SECRETS.slackApp,
        signingSecret: SECRETS.signing,
      },
      webchat: { port: 18790, token: SECRETS.webchat },
    },
    cron: {
      jobs: [
        {
          id: "brief",
          schedule: { kind: "every", everySeconds: 3600 },
          payload: { message: `Call the API with ${SECRETS.openaiKey} and summarise.` },
        },
      ],
    },
    store: {
      driver: "postgres",
      postgres: { url: `postgres://kernel:${SECRETS.dbPassword}@db:5432/kernel` },
    },
  },
  { env: {}, cpuCount: 2 },
);

describe("redactSecrets", () => {
  const redacted = redactSecrets(config);
  const text = JSON.stringify(redacted);

  it.each(Object.entries(SECRETS))("hides %s", (_name, secret) => {
    expect(JSON.stringify(config)).toContain(secret.replaceAll('"', '\\"'));
    expect(text).not.toContain(secret);
  });

  it("hides every header value, credential keys and secret-shaped pieces", () => {
    const provider = redacted.models.providers.local;
    expect(provider?.headers).toEqual({
      authorization: "[redacted]",
      "OpenAI-Organization": "[redacted]",
      "X-Title": "[redacted]",
    });
    expect(provider?.apiKey).toBe("[redacted]");
    expect(provider?.baseUrl).toBe("https://proxy:[redacted]@llm.internal:8443/v1?key=[redacted]");
    expect(redacted.auth.profiles["openai:token"]?.token).toBe("[redacted]");
    expect(redacted.channels.slack?.signingSecret).toBe("[redacted]");
    expect(redacted.store.postgres?.url).toBe("postgres://kernel:[redacted]@db:5432/kernel");
    expect(redacted.cron.jobs[0]?.payload.message).toBe("Call the API with [redacted] and summarise.");
    expect(redacted.agents.defaults.models?.["local/qwen3-coder"]?.params).toEqual({
      api_key: "[redacted]",
      temperature: 0.2,
      note: "uses [redacted]",
    });
  });

  it("keeps what is not secret readable", () => {
    expect(redacted.agents.defaults.model).toEqual(config.agents.defaults.model);
    expect(redacted.agents.defaults.workspace).toBe("~/agent-kernel/workspace");
    expect(redacted.auth.profiles["openai:token"]).toMatchObject({
      provider: "openai",
      mode: "token",
      email: "me@example.com",
    });
    expect(redacted.models.providers.local?.models).toEqual([{ id: "qwen3-coder", contextWindow: 131072 }]);
    expect(redacted.channels.webchat).toMatchObject({ port: 18790, host: "127.0.0.1" });
    expect(redacted.channels.telegram?.allowFrom).toEqual(["123456789"]);
    expect(redacted.store.driver).toBe("postgres");
  });

  it("does not change its input", () => {
    expect(config.channels.telegram?.botToken).toBe(SECRETS.telegram);
  });

  it("hides a connection string that is not a URL as a whole", () => {
    expect(redactSecrets({ db: { connectionString: "Server=db;User Id=app;Pwd=x" } })).toEqual({
      db: { connectionString: "[redacted]" },
    });
  });

  it("hides numbers under credential keys", () => {
    expect(redactSecrets({ x: { pin: 1, password: 1234 } })).toEqual({
      x: { pin: 1, password: "[redacted]" },
    });
  });
});
