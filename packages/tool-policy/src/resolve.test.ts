import { parseConfig } from "@agent-kernel/config";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_TOOL_CATALOG, OWNER_ONLY_TOOLS } from "./catalog.ts";
import type { PolicyLayer } from "./layers.ts";
import { normalizeToolName } from "./names.ts";
import { compilePolicy } from "./policy.ts";
import { compileToolPolicy, explainToolPolicy, formatToolDecision, resolveToolPolicy } from "./resolve.ts";

const coreTools = [...DEFAULT_TOOL_CATALOG.knownTools];
const toolPool = [...coreTools, "bash", "Exec", "cron", "my_plugin_tool", "mcp__fs__read"];
const patternPool = [
  ...toolPool,
  ...Object.keys(DEFAULT_TOOL_CATALOG.groups),
  "*",
  "sessions_*",
  "*_generate",
  "web_*",
  "*search*",
  "mcp__*",
];

const patterns = (max: number) =>
  fc.array(
    fc.constantFrom(...patternPool).map((pattern) => ({ pattern })),
    { maxLength: max },
  );
const layerArb: fc.Arbitrary<PolicyLayer> = fc
  .record({
    allow: fc.option(patterns(4), { nil: undefined }),
    deny: fc.option(patterns(3), { nil: undefined }),
  })
  .map(({ allow, deny }) => ({
    kind: "extra" as const,
    name: "extra",
    ...(allow ? { allow } : {}),
    ...(deny ? { deny } : {}),
  }));
const stackArb = fc
  .array(layerArb, { maxLength: 10 })
  .map((layers) => layers.map((layer, index) => ({ ...layer, name: `layer${index}` })));

const listArb = fc.option(
  fc.array(fc.constantFrom(...patternPool.filter((p) => p.trim() !== "")), { maxLength: 3 }),
  { nil: undefined },
);
const toolsSectionArb = fc.record(
  {
    profile: fc.constantFrom("minimal", "coding", "messaging", "full"),
    allow: listArb,
    deny: listArb,
    alsoAllow: listArb,
  },
  { requiredKeys: [] },
);
const clean = <T extends object>(value: T) =>
  Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined));

const allowedSet = (layers: readonly PolicyLayer[]) => {
  const policy = compileToolPolicy(layers);
  return new Set(toolPool.filter((tool) => policy.isAllowed(tool)));
};

describe("layered resolution, properties", () => {
  it("deny wins: a tool any layer denies is blocked, and a deny rule is named", () => {
    fc.assert(
      fc.property(stackArb, fc.constantFrom(...toolPool), (layers, tool) => {
        const deniedBy = layers.find(
          (layer) => compilePolicy({ deny: layer.deny }).check(normalizeToolName(tool)).kind === "denied",
        );
        const decision = compileToolPolicy(layers).decide(tool);
        if (deniedBy) {
          expect(decision.allowed).toBe(false);
          expect(decision.rule.startsWith("deny ")).toBe(true);
          expect(decision.layer).toBe(deniedBy.name);
        }
      }),
    );
  });

  it("adding a layer anywhere never adds a tool", () => {
    fc.assert(
      fc.property(stackArb, layerArb, fc.nat(), (layers, extra, at) => {
        const position = layers.length === 0 ? 0 : at % (layers.length + 1);
        const before = allowedSet(layers);
        const after = allowedSet([...layers.slice(0, position), extra, ...layers.slice(position)]);
        for (const tool of after) expect(before.has(tool)).toBe(true);
      }),
    );
  });

  it("the explanation always names the deciding layer, and that layer alone gives the same verdict", () => {
    fc.assert(
      fc.property(stackArb, fc.constantFrom(...toolPool), (layers, tool) => {
        const decision = compileToolPolicy(layers).decide(tool);
        if (decision.layer === "default") {
          expect(decision.allowed).toBe(true);
          expect(
            layers.every((layer) => compilePolicy(layer).check(decision.normalized).kind === "unrestricted"),
          ).toBe(true);
          return;
        }
        const layer = layers.find((candidate) => candidate.name === decision.layer);
        expect(layer).toBeDefined();
        if (!layer) return;
        const alone = compileToolPolicy([layer]).decide(tool);
        if (!decision.allowed) expect(alone.allowed).toBe(false);
        else expect(alone.rule).toBe(decision.rule);
      }),
    );
  });

  it("owner-only tools never reach a non-owner, whatever the config grants", () => {
    fc.assert(
      fc.property(
        toolsSectionArb,
        toolsSectionArb,
        listArb,
        fc.boolean(),
        fc.nat({ max: 3 }),
        (global, agent, sandboxAllow, sandboxed, spawnDepth) => {
          const config = parseConfig(
            {
              tools: {
                ...clean(global),
                ...(sandboxAllow ? { sandbox: { tools: { allow: sandboxAllow } } } : {}),
              },
              agents: { list: [{ id: "main", tools: clean(agent) }] },
            },
            { env: {} },
          );
          const policy = resolveToolPolicy(config, {
            senderIsOwner: false,
            sandboxed,
            spawnDepth,
            ownerOnlyTools: ["whatsapp_login"],
          });
          for (const tool of [...OWNER_ONLY_TOOLS, "whatsapp_login", "cron"]) {
            expect(policy.isAllowed(tool)).toBe(false);
          }
        },
      ),
    );
  });
});

describe("explanations name the config key that decided", () => {
  const config = parseConfig(
    {
      tools: {
        profile: "coding",
        deny: ["group:web"],
        byProvider: { openai: { deny: ["x_search"] } },
        subagents: { tools: { deny: ["memory_get"] } },
      },
      agents: {
        defaults: { subagents: { maxSpawnDepth: 2 } },
        list: [
          { id: "main" },
          {
            id: "work",
            tools: { alsoAllow: ["browser"], byProvider: { openai: { allow: ["group:fs", "exec"] } } },
          },
        ],
      },
    },
    { env: {} },
  );

  it("names each layer by its config path, and the entry that matched", () => {
    const decisions = explainToolPolicy(
      config,
      { agentId: "work", modelProvider: "openai", modelId: "gpt-5" },
      ["web_search", "read", "process", "Bash", "nodes", "browser"],
    );
    expect(decisions.map(formatToolDecision)).toEqual([
      'web_search: blocked by tools.deny — deny "group:web" (tools.deny[0])',
      'read: allowed by tools.profile (coding) — allow "read"',
      "process: blocked by agents.list[1].tools.byProvider.openai.allow — not in the allowlist (group:fs, exec)",
      'Bash: allowed by tools.profile (coding) — allow "exec"',
      "nodes: blocked by tools.profile (coding) — not in the allowlist (ls, read, write, edit, apply_patch, … 46 more)",
      // alsoAllow put browser into the profile, but a later allowlist still removes it.
      "browser: blocked by agents.list[1].tools.byProvider.openai.allow — not in the allowlist (group:fs, exec)",
    ]);
  });

  it("names the built-in layers: sandbox, subagent with its depth and role, owner-only", () => {
    const policy = resolveToolPolicy(config, {
      agentId: "main",
      sandboxed: true,
      spawnDepth: 2,
      senderIsOwner: false,
    });
    expect(policy.decide("gateway")).toMatchObject({
      allowed: false,
      layer: "sandbox",
      rule: 'deny "gateway"',
    });
    expect(policy.decide("sessions_spawn")).toMatchObject({
      allowed: false,
      layer: "subagent(depth 2, leaf)",
    });
    expect(policy.decide("memory_get")).toMatchObject({
      allowed: false,
      layer: "subagent(depth 2, leaf)",
      path: "tools.subagents.tools.deny[0]",
    });
    expect(policy.decide("sessions")).toMatchObject({ allowed: false, layer: "owner-only" });
    expect(resolveToolPolicy(config, { spawnDepth: 1 }).decide("sessions_spawn").allowed).toBe(true);
    expect(resolveToolPolicy(config, { spawnDepth: 1 }).decide("message").layer).toBe(
      "subagent(depth 1, orchestrator)",
    );
  });

  it("says 'default' when nothing restricts a tool", () => {
    const empty = parseConfig({}, { env: {} });
    expect(explainToolPolicy(empty, {}, ["anything"])).toEqual([
      {
        tool: "anything",
        normalized: "anything",
        allowed: true,
        layer: "default",
        kind: "default",
        rule: "no layer restricts it",
      },
    ]);
  });

  it("explains apply_patch riding on write", () => {
    const writeOnly = parseConfig({ tools: { allow: ["write"] } }, { env: {} });
    expect(explainToolPolicy(writeOnly, {}, ["apply_patch"])[0]).toMatchObject({
      allowed: true,
      layer: "tools.allow",
      rule: 'allow "write" (apply_patch rides on write)',
    });
  });

  it("applies the group/channel and sender layers", () => {
    const withGroups = parseConfig(
      {
        channels: {
          telegram: {
            groups: { "-100": { tools: { deny: ["exec"] } }, "*": { tools: { allow: ["read"] } } },
          },
        },
        tools: { bySender: { "telegram:42": { deny: ["write"] } } },
      },
      { env: {} },
    );
    const inGroup = resolveToolPolicy(withGroups, { channel: "telegram", groupId: "-100", senderId: "42" });
    expect(inGroup.decide("exec")).toMatchObject({
      allowed: false,
      layer: 'channels.telegram.groups["-100"].tools.deny',
    });
    expect(inGroup.decide("write")).toMatchObject({
      allowed: false,
      layer: 'tools.bySender["telegram:42"].deny',
    });
    const otherGroup = resolveToolPolicy(withGroups, { channel: "telegram", groupId: "-200" });
    expect(otherGroup.decide("exec")).toMatchObject({
      allowed: false,
      layer: 'channels.telegram.groups["*"].tools.allow',
    });
  });

  it("answers repeated questions from its cache with the asked name", () => {
    const policy = resolveToolPolicy(config, {});
    expect(policy.decide("BASH").tool).toBe("BASH");
    expect(policy.decide("exec").tool).toBe("exec");
    expect(policy.filter([{ name: "exec" }, { name: "web_fetch" }])).toEqual([{ name: "exec" }]);
  });
});

describe("the non-owner-host layer", () => {
  const hostTools = ["exec", "bash", "write", "edit", "apply_patch", "process"];

  it("removes the host tools from an unsandboxed session non-owners reach, naming the rule and the key", () => {
    const config = parseConfig({}, { env: {} });
    const policy = resolveToolPolicy(config, { reachableByNonOwners: true });
    for (const tool of hostTools) expect(policy.isAllowed(tool)).toBe(false);
    expect(policy.isAllowed("read")).toBe(true);
    expect(policy.isAllowed("web_search")).toBe(true);
    expect(formatToolDecision(policy.decide("exec"))).toBe(
      'exec: blocked by non-owner-host — deny "exec": people who are not the owner can reach this session and it is not sandboxed; tools.nonOwnerHostTools: true lifts this rule',
    );
    expect(policy.decide("write")).toMatchObject({ kind: "non-owner-host", layer: "non-owner-host" });
    expect(policy.decide("write").path).toBeUndefined();
  });

  it("applies to a non-owner sender too, and never to an owner-only session or a sandboxed one", () => {
    const config = parseConfig({}, { env: {} });
    expect(resolveToolPolicy(config, { senderIsOwner: false }).isAllowed("exec")).toBe(false);
    expect(
      resolveToolPolicy(config, { senderIsOwner: false, reachableByNonOwners: false }).isAllowed("exec"),
    ).toBe(false);
    expect(resolveToolPolicy(config, {}).isAllowed("exec")).toBe(true);
    expect(
      resolveToolPolicy(config, { senderIsOwner: true, reachableByNonOwners: false }).isAllowed("exec"),
    ).toBe(true);
    const sandboxed = resolveToolPolicy(config, { reachableByNonOwners: true, sandboxed: true });
    expect(sandboxed.decide("exec")).toMatchObject({ allowed: true, layer: "sandbox" });
    expect(sandboxed.layers.some((layer) => layer.kind === "non-owner-host")).toBe(false);
  });

  it("is lifted by the effective nonOwnerHostTools: the agent's value over the global one", () => {
    const config = parseConfig(
      {
        tools: { nonOwnerHostTools: true },
        agents: {
          list: [
            { id: "main", default: true },
            { id: "locked", tools: { nonOwnerHostTools: false } },
            { id: "open", tools: { nonOwnerHostTools: true } },
          ],
        },
      },
      { env: {} },
    );
    const reachable = { reachableByNonOwners: true } as const;
    expect(resolveToolPolicy(config, { ...reachable, agentId: "main" }).isAllowed("exec")).toBe(true);
    const locked = resolveToolPolicy(config, { ...reachable, agentId: "locked" });
    expect(locked.isAllowed("edit")).toBe(false);
    expect(locked.decide("edit").rule).toContain(
      "agents.list[1].tools.nonOwnerHostTools: true lifts this rule",
    );
    const globalOff = parseConfig(
      {
        tools: { nonOwnerHostTools: false },
        agents: { list: [{ id: "open", tools: { nonOwnerHostTools: true } }] },
      },
      { env: {} },
    );
    expect(resolveToolPolicy(globalOff, { ...reachable, agentId: "open" }).isAllowed("apply_patch")).toBe(
      true,
    );
    // With a list, the hint names the agent's own key, the narrowest grant.
    const listed = parseConfig({ agents: { list: [{ id: "main" }] } }, { env: {} });
    expect(resolveToolPolicy(listed, reachable).decide("process").rule).toContain(
      "agents.list[0].tools.nonOwnerHostTools: true lifts this rule",
    );
  });

  it("comes after owner-only, and no allowlist anywhere grants back what it removes", () => {
    const config = parseConfig(
      {
        tools: {
          allow: ["exec", "write", "read"],
          alsoAllow: ["edit"],
          bySender: { "*": { allow: ["exec", "write", "read"] } },
        },
        channels: { telegram: { groups: { "*": { tools: { allow: ["group:runtime", "group:fs"] } } } } },
      },
      { env: {} },
    );
    const policy = resolveToolPolicy(config, {
      channel: "telegram",
      groupId: "-1",
      senderId: "9",
      senderIsOwner: false,
      reachableByNonOwners: true,
      extraLayers: [{ kind: "extra", name: "parent", allow: [{ pattern: "*" }] }],
    });
    const kinds = policy.layers.map((layer) => layer.kind);
    expect(kinds.indexOf("non-owner-host")).toBe(kinds.indexOf("owner-only") + 1);
    expect(kinds.at(-1)).toBe("extra");
    expect(policy.decide("exec")).toMatchObject({ allowed: false, layer: "non-owner-host" });
    expect(policy.decide("write")).toMatchObject({ allowed: false, layer: "non-owner-host" });
    expect(policy.decide("read").allowed).toBe(true);
  });

  it("holds for any tools config without the grant (property)", () => {
    fc.assert(
      fc.property(
        toolsSectionArb,
        toolsSectionArb,
        listArb,
        fc.boolean(),
        stackArb,
        (global, agent, senderAllow, owner, extra) => {
          const config = parseConfig(
            {
              tools: {
                ...clean(global),
                ...(senderAllow ? { bySender: { "*": { allow: senderAllow } } } : {}),
              },
              agents: { list: [{ id: "main", tools: clean(agent) }] },
            },
            { env: {} },
          );
          const policy = resolveToolPolicy(config, {
            senderId: "1",
            senderIsOwner: owner,
            reachableByNonOwners: true,
            extraLayers: extra,
          });
          for (const tool of hostTools) expect(policy.isAllowed(tool)).toBe(false);
        },
      ),
    );
  });
});
