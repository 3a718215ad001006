// Which agents let non-owners run host tools: the effective nonOwnerHostTools (agent over defaults over
// global), the channels that let non-owners in, and the sandbox modes that keep them off the host.
import { describe, expect, it } from "vitest";
import { findNonOwnerHostExposure, resolveNonOwnerHostTools } from "./exposure.ts";
import { parseConfig } from "./load.ts";

const parse = (input: unknown) => parseConfig(input, { env: {} });
const openTelegram = { telegram: { dmPolicy: "open", allowFrom: ["*"] } };

describe("resolveNonOwnerHostTools", () => {
  it("is false by default, and names the global key when the agent has no entry", () => {
    expect(resolveNonOwnerHostTools(parse({}))).toEqual({
      enabled: false,
      grantPath: ["tools", "nonOwnerHostTools"],
    });
  });

  it("takes the agent entry over agents.defaults over tools, and names where the value is written", () => {
    const config = parse({
      tools: { nonOwnerHostTools: true },
      agents: {
        defaults: { tools: { nonOwnerHostTools: false } },
        list: [{ id: "main" }, { id: "ops", tools: { nonOwnerHostTools: true } }],
      },
    });
    expect(resolveNonOwnerHostTools(config, "main")).toEqual({
      enabled: false,
      path: ["agents", "defaults", "tools", "nonOwnerHostTools"],
      grantPath: ["agents", "list", 0, "tools", "nonOwnerHostTools"],
    });
    expect(resolveNonOwnerHostTools(config, "OPS")).toEqual({
      enabled: true,
      path: ["agents", "list", 1, "tools", "nonOwnerHostTools"],
      grantPath: ["agents", "list", 1, "tools", "nonOwnerHostTools"],
    });
    const globalOnly = parse({
      tools: { nonOwnerHostTools: true },
      agents: { list: [{ id: "a", tools: {} }] },
    });
    expect(resolveNonOwnerHostTools(globalOnly, "a")).toMatchObject({
      enabled: true,
      path: ["tools", "nonOwnerHostTools"],
    });
  });
});

describe("findNonOwnerHostExposure", () => {
  it("finds nothing without the grant, whatever the channels", () => {
    expect(
      findNonOwnerHostExposure(parse({ channels: { ...openTelegram, slack: { groupPolicy: "open" } } })),
    ).toEqual([]);
  });

  it("finds nothing with the grant when no channel lets non-owners in", () => {
    const config = parse({
      tools: { nonOwnerHostTools: true },
      channels: {
        telegram: { dmPolicy: "allowlist", allowFrom: ["1"] },
        slack: { dmPolicy: "disabled", groupPolicy: "disabled" },
        mychat: { enabled: false, dmPolicy: "open", allowFrom: ["*"] },
      },
    });
    expect(findNonOwnerHostExposure(config)).toEqual([]);
    expect(findNonOwnerHostExposure(parse({ tools: { nonOwnerHostTools: true } }))).toEqual([]);
  });

  it("lists an unsandboxed agent with an open channel: the grant's path, every way in, and the fix", () => {
    const config = parse({
      tools: { nonOwnerHostTools: true },
      channels: { ...openTelegram, slack: { dmPolicy: "allowlist", allowFrom: ["U1"], groupPolicy: "open" } },
    });
    expect(findNonOwnerHostExposure(config)).toEqual([
      {
        agentId: "main",
        path: ["tools", "nonOwnerHostTools"],
        message:
          'agent "main" lets people who are not the owner run exec, write and edit outside a sandbox: ' +
          'tools.nonOwnerHostTools is true, sandbox.mode is "off", and channels.telegram.dmPolicy is "open" and ' +
          'channels.slack.groupPolicy is "open"; set agents.defaults.sandbox.mode: "all", or remove tools.nonOwnerHostTools',
      },
    ]);
  });

  it("counts pairing DMs, allowed groups and accounts that open up; not an allowlist without groups", () => {
    const ways = (channels: unknown) =>
      findNonOwnerHostExposure(parse({ tools: { nonOwnerHostTools: true }, channels }))[0]?.message ?? "";
    expect(ways({ telegram: {} })).toContain(
      'channels.telegram.dmPolicy is "pairing" (approved senders are not owners)',
    );
    expect(ways({ telegram: { dmPolicy: "disabled", groups: { "-100": {} } } })).toContain(
      'channels.telegram.groupPolicy is "allowlist" with groups or group senders listed',
    );
    expect(ways({ telegram: { dmPolicy: "disabled", groups: { "-100": { enabled: false } } } })).toBe("");
    expect(ways({ telegram: { dmPolicy: "disabled", groupAllowFrom: ["5"] } })).toContain("groupPolicy");
    const account = ways({
      slack: {
        dmPolicy: "disabled",
        groupPolicy: "disabled",
        accounts: {
          work: { dmPolicy: "open", allowFrom: ["*"] },
          off: { enabled: false, groupPolicy: "open" },
        },
      },
    });
    expect(account).toContain('channels.slack.accounts.work.dmPolicy is "open"');
    expect(account).not.toContain("accounts.off");
    // The web chat's default (open to whoever holds its token) counts.
    expect(ways({ webchat: {} })).toContain('channels.webchat.dmPolicy is "open"');
  });

  it('spares sandbox mode "all", and "non-main" unless DMs or groups share the main session', () => {
    const exposed = (extra: Record<string, unknown>) =>
      findNonOwnerHostExposure(
        parse({
          tools: { nonOwnerHostTools: true },
          channels: { telegram: { dmPolicy: "open", allowFrom: ["*"], groupPolicy: "disabled" } },
          ...extra,
        }),
      ).map((exposure) => exposure.agentId);
    expect(exposed({ agents: { defaults: { sandbox: { mode: "all" } } } })).toEqual([]);
    // session.dmScope defaults to "main": every DM lands in the unsandboxed main session.
    expect(exposed({ agents: { defaults: { sandbox: { mode: "non-main" } } } })).toEqual(["main"]);
    expect(
      exposed({ agents: { defaults: { sandbox: { mode: "non-main" } } }, session: { dmScope: "per-peer" } }),
    ).toEqual([]);
    expect(
      exposed({
        agents: { defaults: { sandbox: { mode: "non-main" } } },
        session: { dmScope: "per-peer", scope: "global" },
      }),
    ).toEqual(["main"]);
    // Groups follow session.groupScope.
    const groups = (groupScope: string) =>
      findNonOwnerHostExposure(
        parse({
          tools: { nonOwnerHostTools: true },
          agents: { defaults: { sandbox: { mode: "non-main" } } },
          session: { dmScope: "per-peer", groupScope },
          channels: { slack: { dmPolicy: "disabled", groupPolicy: "open" } },
        }),
      ).length;
    expect(groups("per-group")).toBe(0);
    expect(groups("main")).toBe(1);
  });

  it("looks at each agent: its own grant and sandbox, and only the channels that reach it", () => {
    const config = parse({
      agents: {
        list: [
          { id: "main", default: true, tools: { nonOwnerHostTools: true }, sandbox: { mode: "all" } },
          { id: "ops", tools: { nonOwnerHostTools: true } },
          { id: "solo", tools: { nonOwnerHostTools: true } },
          { id: "dev" },
        ],
      },
      channels: { ...openTelegram, slack: { dmPolicy: "allowlist", allowFrom: ["U1"] } },
      bindings: [
        { agentId: "ops", match: { channel: "Telegram" } },
        { agentId: "solo", match: { channel: "slack" } },
        { agentId: "dev", match: { channel: "telegram" } },
      ],
    });
    const exposures = findNonOwnerHostExposure(config);
    expect(exposures.map((exposure) => [exposure.agentId, exposure.path])).toEqual([
      ["ops", ["agents", "list", 1, "tools", "nonOwnerHostTools"]],
    ]);
    expect(exposures[0]?.message).toContain('set agents.list[1].sandbox.mode: "all"');
  });
});
