import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import { openSessionStore } from "@agent-kernel/session-store";
import { afterEach, describe, expect, it } from "vitest";
import type { AuthStateStore } from "./auth-state.ts";
import { loadProfileUsage, recordProfileFailure, recordProfileSuccess } from "./auth-state.ts";
import { resolveRuntime } from "./runtime-context.ts";
import { SessionIdentityError } from "./session-identity.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "agent-kernel-rr-"));
  dirs.push(dir);
  return dir;
}

const SECRET_A = "sk-ant-SECRET-AAAA-1111-zzzz";
const SECRET_B = "sk-ant-SECRET-BBBB-2222-yyyy";

function config(stateDir: string, extra: Record<string, unknown> = {}): KernelConfig {
  return parseConfig(
    {
      store: { stateDir },
      agents: {
        defaults: {
          model: {
            primary: "anthropic/claude-sonnet-4-5",
            fallbacks: ["openai/gpt-5-mini", "local/qwen3-coder"],
          },
          models: {
            "anthropic/claude-sonnet-4-5": { alias: "sonnet" },
            "openai/gpt-5-mini": { alias: "mini" },
            "local/qwen3-coder": { alias: "local" },
          },
          thinkingDefault: "low",
          timeoutSeconds: 600,
        },
        list: [
          { id: "main", default: true },
          { id: "ops", model: { primary: "local/qwen3-coder", fallbacks: [] }, sandbox: { mode: "all" } },
        ],
      },
      auth: {
        profiles: {
          "anthropic:a": { provider: "anthropic", mode: "api_key", apiKey: SECRET_A },
          "anthropic:b": { provider: "anthropic", mode: "api_key", apiKey: SECRET_B },
        },
      },
      models: {
        providers: {
          local: {
            baseUrl: "http://127.0.0.1:8787/v1",
            api: "openai-completions",
            apiKey: "sk-local-inline-key-0000",
            models: [{ id: "qwen3-coder", contextWindow: 131072, maxTokens: 8192 }],
          },
        },
      },
      session: { dmScope: "per-channel-peer", reset: { mode: "idle", idleMinutes: 60 } },
      messages: { queue: { mode: "collect", byChannel: { telegram: "interrupt" } } },
      ...extra,
    },
    { env: {}, cpuCount: 1 },
  );
}

describe("resolveRuntime", () => {
  it("returns one frozen context with every decision and its source", () => {
    const stateDir = tempDir();
    const ctx = resolveRuntime({
      config: config(stateDir),
      session: {},
      now: 1_000,
      newSessionId: () => "s-new",
    });
    expect(Object.isFrozen(ctx)).toBe(true);
    expect(Object.isFrozen(ctx.piModel.value)).toBe(true);
    expect(ctx.agentId).toEqual({ value: "main", source: "default" });
    expect(ctx.sessionKey).toEqual({ value: "agent:main:main", source: "main" });
    expect(ctx.sessionId).toEqual({ value: "s-new", source: "new:none" });
    expect(ctx.model).toEqual({
      value: { provider: "anthropic", model: "claude-sonnet-4-5", key: "anthropic/claude-sonnet-4-5" },
      source: "defaults",
    });
    expect(ctx.piModel.value).toMatchObject({
      api: "anthropic-messages",
      provider: "anthropic",
      id: "claude-sonnet-4-5",
    });
    expect(ctx.candidates.map((c) => `${c.provider}/${c.model}:${c.origin}`)).toEqual([
      "anthropic/claude-sonnet-4-5:requested",
      "openai/gpt-5-mini:configured-fallback",
      "local/qwen3-coder:configured-fallback",
    ]);
    expect(ctx.thinking).toMatchObject({ value: "low", source: "defaults" });
    expect(ctx.contextTokens.source).toBe("model");
    expect(ctx.timeoutMs).toEqual({ value: 600_000, source: "agent" });
    expect(ctx.agentDir).toEqual({ value: join(stateDir, "agents", "main", "agent"), source: "default" });
    expect(ctx.queue.mode).toBe("collect");
    expect(ctx.sandbox.sandboxed).toBe(false);
    expect(ctx.authProfile.pinned?.source).toBe("order");
  });

  it("resolves a custom provider to a real pi-ai model with its baseUrl", () => {
    const ctx = resolveRuntime({
      config: config(tempDir()),
      session: { agentId: "ops", sessionKey: "telegram:direct:42" },
      request: { channel: "telegram" },
    });
    expect(ctx.piModel).toMatchObject({
      source: "custom-provider",
      value: {
        provider: "local",
        id: "qwen3-coder",
        api: "openai-completions",
        baseUrl: "http://127.0.0.1:8787/v1",
        contextWindow: 131072,
      },
    });
    expect(ctx.model.source).toBe("agent");
    expect(ctx.candidates).toHaveLength(1);
    expect(ctx.sessionKey.value).toBe("agent:ops:telegram:direct:42");
    expect(ctx.sandbox).toMatchObject({ sandboxed: true, mode: "all" });
    expect(ctx.queue.mode).toBe("interrupt");
    expect(ctx.authProfile.pinned).toEqual({ value: "local:inline", source: "order" });
    expect(ctx.thinking.value).toBe("off"); // the custom model declares no reasoning
  });

  it("keeps a user model pin and a fresh session; starts a new session when idle too long", () => {
    const cfg = config(tempDir());
    const current = {
      sessionId: "s1",
      lastActivityAt: 0,
      modelOverride: { model: "mini", source: "user" as const },
    };
    const fresh = resolveRuntime({ config: cfg, session: {}, current, now: 30 * 60_000 });
    expect(fresh.sessionId).toEqual({ value: "s1", source: "current" });
    expect(fresh.model).toMatchObject({
      value: { key: "openai/gpt-5-mini" },
      source: "session-override:user",
    });
    expect(fresh.candidates).toHaveLength(1); // user overrides are strict
    const stale = resolveRuntime({
      config: cfg,
      session: {},
      current,
      now: 2 * 60 * 60_000,
      newSessionId: () => "s2",
    });
    expect(stale.sessionId).toEqual({ value: "s2", source: "new:stale" });
    expect(stale.model.source).toBe("session-override:user");
  });

  it("fails clearly for an unknown agent, a key of another agent and an unknown model", () => {
    const cfg = config(tempDir());
    expect(() => resolveRuntime({ config: cfg, session: { agentId: "opz" } })).toThrow(
      /unknown agent "opz"; did you mean "ops"\? \(agents: main, ops\)/,
    );
    expect(() =>
      resolveRuntime({ config: cfg, session: { agentId: "main", sessionKey: "agent:ops:main" } }),
    ).toThrow(SessionIdentityError);
    expect(() =>
      resolveRuntime({
        config: config(tempDir(), { agents: { defaults: { model: "anthropic/claude-sonet-4-5" } } }),
        session: {},
      }),
    ).toThrow(/unknown model "anthropic\/claude-sonet-4-5"; did you mean "anthropic\/claude-sonnet-4-5"\?/);
  });

  it("reads auth-profiles.json from the agent dir and pins a @profile from the model ref", () => {
    const stateDir = tempDir();
    const agentDir = join(stateDir, "agents", "main", "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "auth-profiles.json"),
      JSON.stringify({
        version: 1,
        profiles: {
          "anthropic:oauth": { provider: "anthropic", type: "oauth", access: "oauth-access-token-xyz" },
        },
      }),
    );
    const cfg = config(stateDir);
    const ctx = resolveRuntime({ config: cfg, session: {}, request: { model: "sonnet@anthropic:b" } });
    expect(ctx.authProfile.pinned).toEqual({ value: "anthropic:b", source: "model-ref" });
    const byOrder = resolveRuntime({ config: cfg, session: {} });
    // config profiles for the provider decide the base list; the file adds credentials for them.
    expect(byOrder.authProfile.order).toEqual(["anthropic:a", "anthropic:b"]);
  });
});

describe("persisted cooldowns through session-store", () => {
  it("a cooldown written by another process is honoured here; once expired it clears", async () => {
    const stateDir = tempDir();
    const now = 1_700_000_000_000;
    const child = spawnSync(
      process.execPath,
      [
        "--conditions=@agent-kernel/source",
        join(import.meta.dirname, "..", "test", "child", "record-failure.ts"),
        stateDir,
        "main",
        "anthropic:a",
        "auth",
        String(now),
      ],
      { encoding: "utf8" },
    );
    expect(child.stderr).not.toMatch(/Error/);
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout)).toMatchObject({ cooldownUntil: now + 30_000, cooldownReason: "auth" });

    const store = await openSessionStore({ stateDir });
    try {
      const auth: AuthStateStore = store.auth;
      const cfg = config(stateDir);
      const during = resolveRuntime({
        config: cfg,
        session: {},
        now: now + 1_000,
        authUsage: await loadProfileUsage(auth, "main", now + 1_000),
      });
      expect(during.authProfile.order).toEqual(["anthropic:b", "anthropic:a"]);
      expect(during.authProfile.pinned).toEqual({ value: "anthropic:b", source: "order" });

      const later = now + 31_000;
      const usage = await loadProfileUsage(auth, "main", later);
      expect(usage["anthropic:a"]).toMatchObject({ errorCount: 0 });
      expect(usage["anthropic:a"]?.cooldownUntil).toBeUndefined();
      const after = resolveRuntime({ config: cfg, session: {}, now: later, authUsage: usage });
      expect(after.authProfile.order[0]).toBe("anthropic:a"); // never used: round-robin puts it first again

      // A second failure after recovery starts the ladder again at 30 s.
      const again = await recordProfileFailure(auth, {
        agentId: "main",
        profileId: "anthropic:a",
        reason: "auth",
        now: later,
      });
      expect(again.cooldownUntil).toBe(later + 30_000);
    } finally {
      await store.close();
    }
  });

  it("no API key appears in any stored row, the context or a log line after a run that used it", async () => {
    const stateDir = tempDir();
    const store = await openSessionStore({ stateDir });
    const logLines: string[] = [];
    try {
      const cfg = config(stateDir);
      const ctx = resolveRuntime({
        config: cfg,
        session: {},
        authUsage: await loadProfileUsage(store.auth, "main", 5),
        now: 5,
      });
      logLines.push(JSON.stringify(ctx));
      const profileId = ctx.authProfile.pinned?.value ?? "";
      await recordProfileFailure(store.auth, {
        agentId: "main",
        profileId,
        reason: "rate_limit",
        now: 10,
        modelId: ctx.piModel.value.id,
      });
      await recordProfileSuccess(store.auth, { agentId: "main", profileId, now: 20 });
      logLines.push(JSON.stringify(await store.auth.list("main")));
      const local = resolveRuntime({ config: cfg, session: { agentId: "ops" } });
      logLines.push(JSON.stringify(local));
    } finally {
      await store.close();
    }
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else files.push(readFileSync(path).toString("latin1"));
      }
    };
    walk(stateDir);
    expect(files.length).toBeGreaterThan(0);
    for (const text of [...logLines, ...files]) {
      for (const secret of [SECRET_A, SECRET_B, "sk-local-inline-key-0000"])
        expect(text).not.toContain(secret);
    }
    expect(logLines[0]).toContain('"hasSecret":true');
  });
});
