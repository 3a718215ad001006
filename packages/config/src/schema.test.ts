import { describe, expect, it } from "vitest";
import { ConfigError } from "./errors.ts";
import { parseConfig, parseConfigText, safeParseConfig } from "./load.ts";

const env = {};
const parse = (input: unknown) => parseConfig(input, { env, cpuCount: 2 });

/** The exact lines a user would read for `input`, without the header. */
function problems(input: unknown, options: { env?: Record<string, string> } = {}): string[] {
  const result = safeParseConfig(input, { env: options.env ?? env, sourceName: "test.json5" });
  if (result.ok) throw new Error("expected the config to be invalid");
  return result.error.message
    .split("\n")
    .slice(1)
    .map((line) => line.replace(/^ {2}- /, ""));
}

describe("valid configs and defaults", () => {
  it("fills every default for an empty config", () => {
    const config = parse({});
    expect(config.agents.defaults.timeoutSeconds).toBe(172_800);
    expect(config.agents.defaults.verboseDefault).toBe("off");
    expect(config.agents.defaults.reasoningDefault).toBe("off");
    expect(config.agents.defaults.blockStreamingDefault).toBe("off");
    expect(config.agents.defaults.blockStreamingBreak).toBe("text_end");
    expect(config.agents.defaults.blockStreamingChunk).toEqual({
      minChars: 800,
      maxChars: 1200,
      breakPreference: "paragraph",
    });
    expect(config.agents.defaults.blockStreamingCoalesce).toEqual({ idleMs: 1000 });
    expect(config.agents.defaults.sandbox).toEqual({
      mode: "off",
      scope: "agent",
      workspaceAccess: "none",
      engine: "bwrap",
      network: false,
      timeoutSeconds: 120,
      maxOutputBytes: 1_048_576,
      memoryMb: 1024,
      maxProcesses: 256,
      maxFileMb: 512,
      tmpMb: 256,
    });
    expect(config.agents.defaults.subagents).toEqual({ maxSpawnDepth: 5, maxConcurrent: 8 });
    expect(config.agents.list).toEqual([]);
    expect(config.messages.queue).toEqual({ mode: "steer", debounceMs: 500, cap: 20, drop: "summarize" });
    expect(config.session).toMatchObject({
      scope: "per-sender",
      dmScope: "main",
      groupScope: "per-group",
      mainKey: "main",
    });
    expect(config.session.reset).toEqual({ mode: "daily", atHour: 4 });
    expect(config.store.driver).toBe("sqlite");
    expect(config.auth.cooldowns.transientSeconds).toEqual([30, 60, 300]);
    expect(config.cron).toEqual({ enabled: true, maxConcurrentRuns: 1, jobs: [] });
    expect(config.channels).toEqual({});
    expect(config.bindings).toEqual([]);
  });

  it("derives maxConcurrent from the CPU count unless set", () => {
    expect(parseConfig({}, { env, cpuCount: 1 }).agents.defaults.maxConcurrent).toBe(8);
    expect(parseConfig({}, { env, cpuCount: 4 }).agents.defaults.maxConcurrent).toBe(16);
    expect(parse({ agents: { defaults: { maxConcurrent: 3 } } }).agents.defaults.maxConcurrent).toBe(3);
  });

  it("treats an empty file as an empty config", () => {
    expect(parseConfigText("  \n", { env }).agents.defaults.timeoutSeconds).toBe(172_800);
  });

  it("accepts JSON5: comments, trailing commas, unquoted keys, single quotes", () => {
    const config = parseConfigText(
      `// comment\n{ agents: { defaults: { model: 'openai/gpt-5', /* inline */ timeoutSeconds: 60, }, }, }`,
      { env },
    );
    expect(config.agents.defaults.model).toEqual({ primary: "openai/gpt-5" });
    expect(config.agents.defaults.timeoutSeconds).toBe(60);
  });

  it("normalises a model string to { primary } and keeps an explicit empty fallbacks list", () => {
    const config = parse({
      agents: {
        defaults: { model: "anthropic/claude-sonnet-4-5" },
        list: [{ id: "a", model: { primary: "openai/gpt-5", fallbacks: [] } }],
      },
    });
    expect(config.agents.defaults.model).toEqual({ primary: "anthropic/claude-sonnet-4-5" });
    expect(config.agents.list[0]?.model).toEqual({ primary: "openai/gpt-5", fallbacks: [] });
  });

  it("lower-cases agent ids, main keys and auth providers", () => {
    const config = parse({
      agents: { list: [{ id: "Ops_Team" }] },
      session: { mainKey: "Home" },
      auth: { profiles: { "x:1": { provider: "OpenAI", mode: "api_key", apiKey: "k" } } },
    });
    expect(config.agents.list[0]?.id).toBe("ops_team");
    expect(config.session.mainKey).toBe("home");
    expect(config.auth.profiles["x:1"]?.provider).toBe("openai");
  });

  it("accepts per-account overrides on a channel", () => {
    const config = parse({
      channels: { telegram: { accounts: { work: { dmHistoryLimit: 5, allowFrom: [42] } } } },
    });
    expect(config.channels.telegram?.accounts?.work).toEqual({ dmHistoryLimit: 5, allowFrom: ["42"] });
    expect(problems({ channels: { slack: { accounts: { a: { botToken: "x" } } } } })).toEqual([
      "channels.slack.accounts.a.botToken: unknown key (expected one of: enabled, name, dmPolicy, allowFrom, groupPolicy, groupAllowFrom, historyLimit, dmHistoryLimit, dms)",
    ]);
  });

  it("keeps numeric sender ids as strings", () => {
    const config = parse({ channels: { telegram: { allowFrom: [123456789, "@alice"] } } });
    expect(config.channels.telegram?.allowFrom).toEqual(["123456789", "@alice"]);
  });

  it("fills channel defaults, with webchat open and on loopback", () => {
    const config = parse({ channels: { telegram: {}, webchat: {}, discord: { textChunkLimit: 2000 } } });
    expect(config.channels.telegram).toMatchObject({
      enabled: true,
      dmPolicy: "pairing",
      groupPolicy: "allowlist",
      textChunkLimit: 4000,
    });
    expect(config.channels.webchat).toMatchObject({ host: "127.0.0.1", port: 18_790, dmPolicy: "open" });
    expect(config.channels.discord).toMatchObject({ dmPolicy: "pairing", textChunkLimit: 2000 });
  });

  it("fills cron job defaults", () => {
    const config = parse({
      cron: {
        jobs: [
          {
            id: "j1",
            schedule: { kind: "every", everySeconds: 60 },
            payload: { message: "hi" },
            delivery: { channel: "webchat" },
          },
        ],
      },
    });
    expect(config.cron.jobs[0]).toMatchObject({
      enabled: true,
      missedRuns: "run-once",
      delivery: { mode: "announce", channel: "webchat" },
    });
  });

  it("does not fill an agent entry's nested sections with defaults", () => {
    const config = parse({ agents: { list: [{ id: "a", blockStreamingChunk: { maxChars: 2000 } }] } });
    expect(config.agents.list[0]?.blockStreamingChunk).toEqual({ maxChars: 2000 });
    expect(config.agents.list[0]?.sandbox).toBeUndefined();
  });
});

describe("invalid values: the exact text a user reads", () => {
  it("reports a number out of range", () => {
    expect(problems({ agents: { defaults: { timeoutSeconds: -5 } } })).toEqual([
      "agents.defaults.timeoutSeconds: expected a number >= 0, found -5",
    ]);
  });

  it("reports a non-integer", () => {
    expect(problems({ messages: { queue: { cap: 1.5 } } })).toEqual([
      "messages.queue.cap: expected an integer, found 1.5",
    ]);
  });

  it("reports a wrong type with the value found", () => {
    expect(problems({ agents: { defaults: { timeoutSeconds: "600" } } })).toEqual([
      'agents.defaults.timeoutSeconds: expected a number, found "600"',
    ]);
    expect(problems({ agents: { defaults: { skipBootstrap: "yes" } } })).toEqual([
      'agents.defaults.skipBootstrap: expected true or false, found "yes"',
    ]);
    expect(problems({ agents: { list: { id: "a" } } })).toEqual([
      "agents.list: expected an array, found an object",
    ]);
  });

  it("lists the allowed values of an enum and suggests the closest", () => {
    expect(problems({ agents: { defaults: { thinkingDefault: "hihg" } } })).toEqual([
      'agents.defaults.thinkingDefault: expected one of "off", "minimal", "low", "medium", "high", "xhigh", "adaptive", "max", "ultra", found "hihg"; did you mean "high"?',
    ]);
    expect(problems({ messages: { queue: { mode: "followups" } } })).toEqual([
      'messages.queue.mode: expected one of "steer", "followup", "collect", "interrupt", found "followups"; did you mean "followup"?',
    ]);
  });

  it("explains an invalid agent id", () => {
    expect(problems({ agents: { list: [{ id: "My Agent!" }] } })).toEqual([
      'agents.list[0].id: expected an agent id (1-64 letters, digits, "_" or "-", starting with a letter or digit), found "My Agent!"',
    ]);
  });

  it("explains a model of the wrong shape", () => {
    expect(problems({ agents: { defaults: { model: 42 } } })).toEqual([
      "agents.defaults.model: expected a model ref string or { primary, fallbacks }, found 42",
    ]);
  });

  it("points inside a model object when only its contents are wrong", () => {
    expect(
      problems({ agents: { defaults: { model: { primary: "openai/gpt-5", fallbacks: "x/y" } } } }),
    ).toEqual(['agents.defaults.model.fallbacks: expected an array, found "x/y"']);
    expect(problems({ agents: { defaults: { model: { primary: "openai/gpt-5", fallback: [] } } } })).toEqual([
      'agents.defaults.model.fallback: unknown key; did you mean "fallbacks"?',
    ]);
  });

  it("rejects a model ref with spaces or a leading slash", () => {
    expect(problems({ agents: { defaults: { model: "/gpt 5" } } })).toEqual([
      'agents.defaults.model: expected a model ref like "anthropic/claude-sonnet-4-5" or an alias, found "/gpt 5"',
    ]);
  });

  it("reports a missing required key", () => {
    expect(
      problems({ cron: { jobs: [{ id: "j", schedule: { kind: "every", everySeconds: 5 }, payload: {} }] } }),
    ).toEqual(["cron.jobs[0].payload.message: expected a string, found nothing (required)"]);
  });

  it("reports an empty string where text is required", () => {
    expect(problems({ agents: { defaults: { workspace: "" } } })).toEqual([
      'agents.defaults.workspace: expected a non-empty string, found ""',
    ]);
    // Blank text counts as empty: values are trimmed before the check.
    expect(problems({ agents: { defaults: { workspace: "   " } } })).toHaveLength(1);
  });

  it("reports an unknown schedule kind with the kinds allowed", () => {
    expect(
      problems({ cron: { jobs: [{ id: "j", schedule: { kind: "hourly" }, payload: { message: "m" } }] } }),
    ).toEqual(['cron.jobs[0].schedule.kind: expected one of "cron", "every", "at", found "hourly"']);
  });

  it("checks the shape of cron expressions, time stamps and URLs", () => {
    expect(
      problems({
        cron: {
          jobs: [
            { id: "a", schedule: { kind: "cron", expr: "every day" }, payload: { message: "m" } },
            { id: "b", schedule: { kind: "at", at: "tomorrow" }, payload: { message: "m" } },
          ],
        },
        models: {
          providers: {
            local: { baseUrl: "localhost:8080", api: "openai-completions", models: [{ id: "m" }] },
          },
        },
      }),
    ).toEqual([
      'models.providers.local.baseUrl: expected an http(s) URL like "http://127.0.0.1:8080/v1", found "localhost:8080"',
      'cron.jobs[0].schedule.expr: expected a cron expression with 5 or 6 fields, like "0 9 * * 1-5", found "every day"',
      'cron.jobs[1].schedule.at: expected an ISO 8601 date-time with offset, like "2026-12-01T09:00:00Z", found "tomorrow"',
    ]);
  });

  it("requires at least one model per custom provider", () => {
    expect(
      problems({
        models: {
          providers: { local: { baseUrl: "http://127.0.0.1:1/v1", api: "openai-completions", models: [] } },
        },
      }),
    ).toEqual(["models.providers.local.models: expected at least one model, found an empty array"]);
  });

  it("never shows the value of a secret-looking key", () => {
    expect(
      problems({ auth: { profiles: { "a:b": { provider: "a", mode: "api_key", apiKey: 12345 } } } }),
    ).toEqual(['auth.profiles["a:b"].apiKey: expected a string, found a hidden number value']);
  });

  it("shows the values of keys that only look like secrets", () => {
    expect(problems({ session: { mainKey: 5 } })).toEqual(["session.mainKey: expected a string, found 5"]);
  });

  it("requires the root to be an object", () => {
    expect(problems([])).toEqual(["(root): expected an object, found an empty array"]);
    expect(problems("agents")).toEqual(['(root): expected an object, found "agents"']);
  });

  it("quotes record keys that are not identifiers in paths", () => {
    expect(problems({ agents: { defaults: { models: { "openai/gpt-5": { alias: 5 } } } } })).toEqual([
      'agents.defaults.models["openai/gpt-5"].alias: expected a string, found 5',
    ]);
  });

  it("lists every problem at once, with a count", () => {
    const result = safeParseConfig(
      { agents: { defaults: { timeoutSeconds: -1, verboseDefault: "loud" } }, session: { dmScope: "peer" } },
      { env, sourceName: "/etc/agent.json5" },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(ConfigError);
    expect(result.error.issues).toHaveLength(3);
    expect(result.error.message.split("\n")[0]).toBe("Invalid config /etc/agent.json5 (3 problems):");
  });
});

describe("checks across sections", () => {
  it("rejects duplicate agent ids, case-insensitively", () => {
    expect(problems({ agents: { list: [{ id: "ops" }, { id: "OPS" }] } })).toEqual([
      'agents.list[1].id: duplicate agent id "ops" (also agents.list[0].id)',
    ]);
  });

  it("rejects two default agents", () => {
    expect(
      problems({
        agents: {
          list: [
            { id: "a", default: true },
            { id: "b", default: true },
          ],
        },
      }),
    ).toEqual(["agents.list[1].default: only one agent may be the default (also agents.list[0])"]);
  });

  it("rejects bindings and cron jobs that name an unknown agent", () => {
    expect(
      problems({
        agents: { list: [{ id: "main" }, { id: "ops" }] },
        bindings: [{ agentId: "opz", match: { channel: "telegram" } }],
        cron: {
          jobs: [
            {
              id: "j",
              agentId: "sales",
              schedule: { kind: "every", everySeconds: 5 },
              payload: { message: "m" },
            },
          ],
        },
      }),
    ).toEqual([
      'bindings[0].agentId: unknown agent "opz"; did you mean "ops"? (agents: main, ops)',
      'cron.jobs[0].agentId: unknown agent "sales" (agents: main, ops)',
    ]);
  });

  it("knows the implicit main agent when no list is given", () => {
    expect(parse({ bindings: [{ agentId: "main", match: { channel: "webchat" } }] }).bindings).toHaveLength(
      1,
    );
  });

  it("rejects duplicate cron job ids", () => {
    const job = { id: "daily", schedule: { kind: "every", everySeconds: 60 }, payload: { message: "m" } };
    expect(problems({ cron: { jobs: [job, job] } })).toEqual([
      'cron.jobs[1].id: duplicate cron job id "daily" (also cron.jobs[0].id)',
    ]);
  });

  it("rejects minChars above maxChars, including an agent's own values", () => {
    expect(
      problems({
        agents: {
          defaults: { blockStreamingChunk: { minChars: 1500 } },
          list: [{ id: "a", blockStreamingChunk: { minChars: 50, maxChars: 10 } }],
        },
      }),
    ).toEqual([
      "agents.defaults.blockStreamingChunk.minChars: expected minChars <= maxChars, found minChars 1500 > maxChars 1200",
      "agents.list[0].blockStreamingChunk.minChars: expected minChars <= maxChars, found minChars 50 > maxChars 10",
    ]);
  });

  it("rejects one alias used for two models", () => {
    expect(
      problems({ agents: { defaults: { models: { "a/x": { alias: "fast" }, "b/y": { alias: "Fast" } } } } }),
    ).toEqual(['agents.defaults.models["b/y"].alias: alias "Fast" is already used by "a/x"']);
  });

  it("rejects an auth order entry that belongs to another provider", () => {
    expect(
      problems({
        auth: {
          profiles: { "openai:1": { provider: "openai", mode: "api_key", apiKey: "k" } },
          order: { anthropic: ["openai:1"] },
        },
      }),
    ).toEqual(['auth.order.anthropic[0]: profile "openai:1" belongs to provider "openai", not "anthropic"']);
  });
});

describe("unknown keys", () => {
  it("suggests the closest key at the top level", () => {
    expect(problems({ agent: {} })).toEqual(['agent: unknown key; did you mean "agents"?']);
  });

  it("suggests the closest key deep inside", () => {
    expect(problems({ agents: { defaults: { thinkingDefalt: "low" } } })).toEqual([
      'agents.defaults.thinkingDefalt: unknown key; did you mean "thinkingDefault"?',
    ]);
    expect(problems({ agents: { list: [{ id: "a", workspce: "/w" }] } })).toEqual([
      'agents.list[0].workspce: unknown key; did you mean "workspace"?',
    ]);
    expect(problems({ channels: { telegram: { dmPolcy: "open" } } })).toEqual([
      'channels.telegram.dmPolcy: unknown key; did you mean "dmPolicy"?',
    ]);
  });

  it("lists the allowed keys when nothing is close", () => {
    expect(problems({ session: { reset: { frequency: "daily" } } })).toEqual([
      "session.reset.frequency: unknown key (expected one of: mode, atHour, idleMinutes)",
    ]);
  });

  it("rejects adapter keys on channels that do not have them", () => {
    expect(problems({ channels: { webchat: { botToken: "x" } } })).toEqual([
      "channels.webchat.botToken: unknown key",
    ]);
  });

  it("flags a misspelt known channel and a malformed channel id", () => {
    expect(problems({ channels: { telegarm: {}, "My Chat": {} } })).toEqual([
      'channels.telegarm: unknown channel "telegarm"; did you mean "telegram"?',
      'channels["My Chat"]: expected a channel id of lower-case letters, digits, "_" or "-"',
    ]);
  });

  it("reports every unknown key of one object", () => {
    expect(problems({ tools: { alow: [], dney: [] } })).toEqual([
      'tools.alow: unknown key; did you mean "allow"?',
      'tools.dney: unknown key; did you mean "deny"?',
    ]);
  });
});
