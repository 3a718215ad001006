import { describe, expect, it } from "vitest";
import { loadParityCases } from "../test/parity-fixtures.ts";
import {
  normalizeQueueDropPolicy,
  normalizeQueueMode,
  type QueueConfig,
  type QueueDropPolicy,
  type QueueMode,
  resolveQueueSettings,
  type SessionQueueSettings,
} from "./queue-settings.ts";
import { resolveSandboxContext } from "./sandbox-context.ts";

describe("queue settings: parity with OpenClaw 2026.9.6", () => {
  it("normalises modes and drop policies like OpenClaw", () => {
    for (const c of loadParityCases("queue-settings", "normalizeQueueMode")) {
      expect(normalizeQueueMode(c.input as string) ?? null).toBe(c.output);
    }
    for (const c of loadParityCases("queue-settings", "normalizeQueueDropPolicy")) {
      expect(normalizeQueueDropPolicy(c.input as string) ?? null).toBe(c.output);
    }
  });

  it("resolves every recorded combination of inline, session, channel and config settings", () => {
    const cases = loadParityCases("queue-settings", "resolveQueueSettingsCore");
    expect(cases.length).toBeGreaterThan(100);
    const mismatches = cases.filter((c) => {
      const input = c.input as {
        cfg: { messages?: { queue?: QueueConfig } };
        channel?: string;
        sessionEntry?: SessionQueueSettings;
        inlineMode?: QueueMode;
        inlineOptions?: { debounceMs?: number; cap?: number; dropPolicy?: QueueDropPolicy };
        pluginDebounceMs?: number;
      };
      const actual = resolveQueueSettings({
        queue: input.cfg.messages?.queue,
        channel: input.channel,
        session: input.sessionEntry,
        inlineMode: input.inlineMode,
        inline: input.inlineOptions,
        channelDefaultDebounceMs: input.pluginDebounceMs,
      });
      return JSON.stringify(actual) !== JSON.stringify(c.output);
    });
    expect(mismatches).toEqual([]);
  });

  it("can opt into the config's global debounce", () => {
    expect(resolveQueueSettings({ queue: { debounceMs: 1500 }, useConfigDebounce: true }).debounceMs).toBe(
      1500,
    );
    expect(resolveQueueSettings({ queue: { debounceMs: 1500 } }).debounceMs).toBe(500);
  });
});

describe("sandbox context", () => {
  const agent = (mode: "off" | "non-main" | "all", scope: "session" | "agent" | "shared" = "agent") => ({
    id: "ops",
    sandbox: { mode, scope, workspaceAccess: "ro" as const },
  });

  it("non-main sandboxes every session but the agent's main one", () => {
    expect(resolveSandboxContext({ agent: agent("non-main"), sessionKey: "agent:ops:main" }).sandboxed).toBe(
      false,
    );
    expect(
      resolveSandboxContext({ agent: agent("non-main"), sessionKey: "agent:ops:telegram:direct:1" })
        .sandboxed,
    ).toBe(true);
    expect(resolveSandboxContext({ agent: agent("all"), sessionKey: "agent:ops:main" }).sandboxed).toBe(true);
    expect(resolveSandboxContext({ agent: agent("off"), sessionKey: "agent:ops:x" }).sandboxed).toBe(false);
    expect(
      resolveSandboxContext({ agent: agent("off"), sessionKey: "agent:ops:x", required: true }).sandboxed,
    ).toBe(true);
  });

  it("derives the scope key from the scope", () => {
    expect(
      resolveSandboxContext({ agent: agent("all", "session"), sessionKey: "agent:ops:x" }).scopeKey,
    ).toBe("agent:ops:x");
    expect(resolveSandboxContext({ agent: agent("all", "agent"), sessionKey: "agent:ops:x" }).scopeKey).toBe(
      "agent:ops",
    );
    expect(resolveSandboxContext({ agent: agent("all", "shared"), sessionKey: "agent:ops:x" }).scopeKey).toBe(
      "shared",
    );
  });

  it("gives a sandboxed session its scope's workspace under the root, and the view its tools get", () => {
    const base = { agentWorkspace: "/srv/agent", stateDir: "/state" };
    const none = resolveSandboxContext({
      ...base,
      agent: { id: "ops", sandbox: { mode: "all", scope: "session", workspaceAccess: "none" } },
      sessionKey: "agent:ops:telegram:direct:1",
    });
    expect(none.engine).toBe("bwrap");
    expect(none.network).toBe(false);
    expect(none.workspaceDir).toMatch(/^\/state\/sandboxes\/agent-ops-telegram-direct-1-[0-9a-f]{12}$/);
    expect(none.cwd).toBe("/workspace");
    expect(none.mounts).toEqual([{ path: "/workspace", hostPath: none.workspaceDir, writable: true }]);
    const ro = resolveSandboxContext({
      ...base,
      agent: {
        id: "ops",
        sandbox: { mode: "all", scope: "shared", workspaceAccess: "ro", workspaceRoot: "/sb" },
      },
      sessionKey: "agent:ops:x",
    });
    expect(ro.workspaceDir.startsWith("/sb/shared-")).toBe(true);
    expect(ro.mounts).toContainEqual({ path: "/agent", hostPath: "/srv/agent", writable: false });
    const rw = resolveSandboxContext({
      ...base,
      agent: { id: "ops", sandbox: { mode: "all", scope: "agent", workspaceAccess: "rw", network: true } },
      sessionKey: "agent:ops:x",
    });
    expect(rw.workspaceDir).toBe("/srv/agent");
    expect(rw.network).toBe(true);
    expect(rw.mounts).toEqual([{ path: "/workspace", hostPath: "/srv/agent", writable: true }]);
  });

  it("an unsandboxed session sees the agent workspace on the host", () => {
    const off = resolveSandboxContext({
      agent: agent("off"),
      sessionKey: "agent:ops:x",
      agentWorkspace: "/srv/agent",
      stateDir: "/state",
    });
    expect(off).toMatchObject({
      sandboxed: false,
      engine: "host",
      cwd: "/srv/agent",
      workspaceDir: "/srv/agent",
    });
    expect(off.mounts).toEqual([{ path: "/srv/agent", hostPath: "/srv/agent", writable: true }]);
  });
});
