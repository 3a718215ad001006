#!/usr/bin/env node
// Records the tool-policy parity data from the real openclaw@2026.9.6 functions:
//   - packages/tool-policy/src/openclaw-catalog.generated.ts: the groups, profiles, aliases, sandbox
//     defaults, subagent deny lists and owner-only list, as data (never typed by hand);
//   - packages/tool-policy/fixtures/openclaw/*.json: OpenClaw's answers over a wide, partly generated
//     set of inputs (group expansion, profile policy, single-policy matching, sandbox and subagent
//     policies, and the whole layered decision for generated configs).
//
// Run by hand, from the repo root, with Node 24 and the unpacked package (see
// shared/research/openclaw-behaviors.md §15):
//
//   OPENCLAW_DIST=/work/openclaw-env/openclaw/package/dist \
//   OPENCLAW_DEPS=/work/openclaw-env/deps/node_modules \
//     /work/openclaw-env/node24/package/bin/node tooling/parity/record/tool-policy.mjs
//   tooling/pnpm exec biome check --write packages/tool-policy
//
// OPENCLAW_DEPS is needed when the package's runtime dependencies are not resolvable from dist/ (the
// §15 set-up symlinks them one level too deep): the script then builds a shim folder in the OS temp
// dir (dist and node_modules as symlinks) and re-runs itself with --preserve-symlinks.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { seededRandom } from "../seeded-random.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, "../../../packages/tool-policy");

if (process.env.OPENCLAW_DEPS && !process.env.TOOL_POLICY_RECORD_SHIMMED) {
  const shim = fs.mkdtempSync(path.join(os.tmpdir(), "openclaw-shim-"));
  fs.symlinkSync(path.resolve(process.env.OPENCLAW_DIST), path.join(shim, "dist"));
  fs.symlinkSync(path.resolve(process.env.OPENCLAW_DEPS), path.join(shim, "node_modules"));
  const run = spawnSync(process.execPath, ["--preserve-symlinks", fileURLToPath(import.meta.url)], {
    stdio: "inherit",
    env: { ...process.env, OPENCLAW_DIST: path.join(shim, "dist"), TOOL_POLICY_RECORD_SHIMMED: "1" },
  });
  fs.rmSync(shim, { recursive: true, force: true });
  process.exit(run.status ?? 1);
}

const { get } = await import("../load-openclaw.mjs");
const TOOL_GROUPS = await get("TOOL_GROUPS");
const expandToolGroups = await get("expandToolGroups");
const resolveToolProfilePolicy = await get("resolveToolProfilePolicy");
const normalizeToolPolicyName = await get("normalizeToolPolicyName", "tool-policy-shared");
const isToolAllowedByPolicyName = await get("isToolAllowedByPolicyName");
const isToolAllowedByPolicies = await get("isToolAllowedByPolicies");
const resolveSubagentToolPolicyForSession = await get("resolveSubagentToolPolicyForSession");
const resolveSandboxToolPolicyForAgent = await get("resolveSandboxToolPolicyForAgent", "tool-policy-C");
const resolveEffectiveToolPolicy = await get("resolveEffectiveToolPolicy");
const buildDefaultToolPolicyPipelineSteps = await get("buildDefaultToolPolicyPipelineSteps");
const applyToolPolicyPipeline = await get("applyToolPolicyPipeline");
const mergeAlsoAllowPolicy = await get("mergeAlsoAllowPolicy", "tool-policy-Y");
const GATEWAY_OWNER_ONLY_CORE_TOOLS = await get("GATEWAY_OWNER_ONLY_CORE_TOOLS");
const DEFAULT_TOOL_ALLOW = await get("DEFAULT_TOOL_ALLOW", "constants-D");
const DEFAULT_TOOL_DENY = await get("DEFAULT_TOOL_DENY", "constants-D");
const getSubagentDepth = await get("getSubagentDepth");
const expandShippedCoreToolPolicyNames = await get("expandShippedCoreToolPolicyNames");

const VERSION = "2026.9.6";
const PROFILES = ["minimal", "coding", "messaging", "full"];

// ---------------------------------------------------------------- catalog (data module)
const aliasCandidates = ["bash", "apply-patch", "cron", "exec", "read"];
const aliases = Object.fromEntries(
  aliasCandidates.map((name) => [name, normalizeToolPolicyName(name)]).filter(([from, to]) => from !== to),
);
const profilePolicies = Object.fromEntries(PROFILES.map((p) => [p, resolveToolProfilePolicy(p)]));
const orchestrator = resolveSubagentToolPolicyForSession(
  { agents: { defaults: { subagents: { maxSpawnDepth: 5 } } } },
  "agent:main:subagent:a",
  { store: {} },
).deny;
const leaf = resolveSubagentToolPolicyForSession(
  { agents: { defaults: { subagents: { maxSpawnDepth: 1 } } } },
  "agent:main:subagent:a",
  { store: {} },
).deny;
const catalog = {
  version: VERSION,
  groups: TOOL_GROUPS,
  profiles: profilePolicies,
  aliases,
  sandboxDefaultAllow: [...DEFAULT_TOOL_ALLOW],
  sandboxDefaultDeny: [...DEFAULT_TOOL_DENY],
  subagentDenyAlways: orchestrator,
  subagentDenyLeaf: leaf.filter((name) => !orchestrator.includes(name)),
  ownerOnly: [...GATEWAY_OWNER_ONLY_CORE_TOOLS],
};
const coreTools = [...new Set(Object.values(TOOL_GROUPS).flat())];
// Names the pipeline rewrites before matching (a renamed tool, a plugin family's core tools).
const shippedCandidates = [...coreTools, "update_plan", "canvas", "image", "cron"];
catalog.shippedExpansions = Object.fromEntries(
  shippedCandidates
    .map((name) => [name, expandShippedCoreToolPolicyNames([name])])
    .filter(([name, out]) => out.length !== 1 || out[0] !== normalizeToolPolicyName(name)),
);

const generated = `// GENERATED by tooling/parity/record/tool-policy.mjs from openclaw@${VERSION}; do not edit.
// Owns: OpenClaw's tool catalog as data (groups, profiles, aliases, sandbox defaults, subagent
// deny lists, owner-only tools). Does not own: how they are applied (policy.ts, layers.ts).

/** The OpenClaw release this table was recorded from. */
export const OPENCLAW_CATALOG_VERSION = ${JSON.stringify(VERSION)};

/** \`group:<section>\` → member tool ids (2026.9.6 generates them from its tool catalog). */
export const OPENCLAW_TOOL_GROUPS: Readonly<Record<string, readonly string[]>> = ${JSON.stringify(catalog.groups)};

/** Built-in profiles → their allowlist (\`full\` allows everything). */
export const OPENCLAW_TOOL_PROFILES = ${JSON.stringify(catalog.profiles)} as const;

/** Alias → canonical tool id, applied after trimming and lower-casing. */
export const OPENCLAW_TOOL_ALIASES: Readonly<Record<string, string>> = ${JSON.stringify(catalog.aliases)};

/** Tools a sandboxed session keeps when \`tools.sandbox.tools.allow\` is unset. */
export const OPENCLAW_SANDBOX_DEFAULT_ALLOW: readonly string[] = ${JSON.stringify(catalog.sandboxDefaultAllow)};

/** Tools (and channel ids) a sandboxed session loses when \`tools.sandbox.tools.deny\` is unset. */
export const OPENCLAW_SANDBOX_DEFAULT_DENY: readonly string[] = ${JSON.stringify(catalog.sandboxDefaultDeny)};

/** Denied to every subagent session, whatever its depth. */
export const OPENCLAW_SUBAGENT_DENY_ALWAYS: readonly string[] = ${JSON.stringify(catalog.subagentDenyAlways)};

/** Also denied to leaf subagents (depth >= maxSpawnDepth): they cannot spawn or steer children. */
export const OPENCLAW_SUBAGENT_DENY_LEAF: readonly string[] = ${JSON.stringify(catalog.subagentDenyLeaf)};

/** Entries the layered pipeline rewrites before matching: a renamed tool, a plugin family's core tools. */
export const OPENCLAW_SHIPPED_POLICY_EXPANSIONS: Readonly<Record<string, readonly string[]>> = ${JSON.stringify(catalog.shippedExpansions)};

/** Core tools that need the owner (or a trusted operator) on gateway surfaces. */
export const OPENCLAW_OWNER_ONLY_TOOLS: readonly string[] = ${JSON.stringify(catalog.ownerOnly)};
`;
fs.writeFileSync(path.join(pkg, "src", "openclaw-catalog.generated.ts"), generated);

const random = seededRandom(20260906);
const pick = (list) => list[Math.floor(random() * list.length)];
const chance = (p) => random() < p;
const subset = (list, max) => {
  const n = Math.floor(random() * (max + 1));
  return Array.from({ length: n }, () => pick(list));
};

const groupNames = Object.keys(TOOL_GROUPS);
const odd = [
  "bash",
  "cron",
  "Apply-Patch",
  " READ ",
  "Exec",
  "sessions",
  "sessions_*",
  "web_*",
  "*_generate",
  "memory*",
  "*",
  "my_plugin_tool",
  "group:plugins",
  "mcp__*",
  "conversations_*",
  "*search*",
  "",
  "  ",
];
const vocabulary = [...coreTools, ...groupNames, ...odd];
// Our config schema rejects blank entries, so configs draw from the non-blank words only.
const configVocabulary = vocabulary.filter((word) => word.trim() !== "");
const toolUniverse = [
  ...coreTools,
  "bash",
  "Exec",
  "apply-patch",
  "cron",
  "my_plugin_tool",
  "mcp__files__read",
  "image",
];

// ---------------------------------------------------------------- fixtures
const fixtures = path.join(pkg, "fixtures", "openclaw");
fs.mkdirSync(fixtures, { recursive: true });
const write = (name, value) =>
  fs.writeFileSync(path.join(fixtures, name), `${JSON.stringify(value, null, 1)}\n`, "utf8");
const source = `openclaw@${VERSION}, recorded by tooling/parity/record/tool-policy.mjs`;

// 1. names, groups, profiles
const nameCases = [...odd, ...coreTools.slice(0, 10), "BASH", "Cron", "APPLY_PATCH", "apply_patch", "x"];
const expandCases = [
  ...groupNames.map((g) => [g]),
  ["group:fs", "exec"],
  ["group:FS"],
  [" group:runtime ", "bash"],
  ["group:nope", "read"],
  ["group:plugins"],
  ["cron", "automations", "Cron"],
  [],
  ["", " "],
  ...Array.from({ length: 40 }, () => subset(vocabulary, 5)),
];
write("names.json", {
  source,
  normalize: nameCases.map((input) => ({ input, output: normalizeToolPolicyName(input) })),
  expand: expandCases.map((input) => ({ input, output: expandToolGroups(input) })),
  profiles: [...PROFILES, "", "unknown", "Coding"].map((input) => ({
    input,
    output: resolveToolProfilePolicy(input) ?? null,
  })),
});

// 2. one policy: allow/deny matching over the whole tool universe
const policies = [
  { allow: ["group:fs"] },
  { allow: ["write"] },
  { allow: ["write"], deny: ["apply_patch"] },
  { allow: ["exec"] },
  { deny: ["group:runtime"] },
  { allow: ["*"], deny: ["bash"] },
  { allow: ["sessions"] },
  { allow: ["sessions_*"] },
  { allow: ["*search*"] },
  { allow: [] },
  { deny: [] },
  { allow: ["cron"] },
  { allow: ["Apply-Patch"] },
  { allow: ["wr*"] },
  ...Array.from({ length: 36 }, () => {
    const policy = {};
    if (chance(0.7)) policy.allow = subset(vocabulary, 4);
    if (chance(0.6)) policy.deny = subset(vocabulary, 3);
    return policy;
  }),
];
write("match.json", {
  source,
  tools: toolUniverse,
  cases: policies.map((policy) => ({
    policy,
    allowed: toolUniverse.filter((name) => isToolAllowedByPolicyName(name, policy)),
  })),
  stacks: Array.from({ length: 30 }, () => {
    const stack = Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(policies));
    return { policies: stack, allowed: toolUniverse.filter((name) => isToolAllowedByPolicies(name, stack)) };
  }),
});

// 3. sandbox and subagent policies
const listPolicy = (p = 0.5) => {
  const policy = {};
  if (chance(p)) policy.allow = subset([...coreTools.slice(0, 20), ...groupNames, "browser", "*"], 3);
  if (chance(p)) policy.alsoAllow = subset(["browser", "nodes", "gateway", "group:ui", "canvas", "image"], 2);
  if (chance(p)) policy.deny = subset(["exec", "image", "group:fs", "browser", "sessions_*", "read"], 2);
  return policy;
};
const sandboxConfigs = [
  {},
  { tools: { sandbox: { tools: { allow: ["read"] } } } },
  { tools: { sandbox: { tools: { allow: [] } } } },
  { tools: { sandbox: { tools: { alsoAllow: ["browser"] } } } },
  { tools: { sandbox: { tools: { deny: ["image"] } } } },
  { tools: { sandbox: { tools: { deny: [] } } } },
  { tools: { sandbox: { tools: { allow: ["group:ui"] } } } },
  {
    tools: { sandbox: { tools: { allow: ["read"] } } },
    agents: { list: [{ id: "main", tools: { sandbox: { tools: { allow: ["write"], deny: ["exec"] } } } }] },
  },
  ...Array.from({ length: 30 }, () => ({
    tools: { sandbox: { tools: listPolicy() } },
    agents: { list: [{ id: "main", tools: { sandbox: { tools: listPolicy(0.3) } } }] },
  })),
];
write("sandbox.json", {
  source,
  cases: sandboxConfigs.map((config) => {
    const { allow, deny } = resolveSandboxToolPolicyForAgent(config, "main");
    return { config, agentId: "main", policy: { allow, deny } };
  }),
});

const subagentKeys = [
  "agent:main:main",
  "agent:main:subagent:a",
  "agent:main:subagent:a:subagent:b",
  "agent:main:subagent:a:subagent:b:subagent:c",
  "agent:main:telegram:group:1:subagent:x",
  "agent:main:SUBAGENT:a",
  "subagent:a",
  "agent:main:mysubagent:a",
];
const subagentCases = [];
for (const sessionKey of subagentKeys) {
  for (const maxSpawnDepth of [1, 2, 5]) {
    const configured = chance(0.5) ? listPolicy(0.5) : undefined;
    const config = {
      agents: { defaults: { subagents: { maxSpawnDepth } } },
      ...(configured ? { tools: { subagents: { tools: configured } } } : {}),
    };
    const policy = resolveSubagentToolPolicyForSession(config, sessionKey, { store: {} });
    subagentCases.push({
      config,
      sessionKey,
      depth: getSubagentDepth(sessionKey),
      policy: { allow: policy.allow ?? null, deny: policy.deny },
    });
  }
}
write("subagent.json", { source, cases: subagentCases });

// 4. the whole layered decision for generated configs
function layeredAllowed(config, context) {
  const effective = resolveEffectiveToolPolicy({
    config,
    agentId: context.agentId,
    modelProvider: context.modelProvider,
    modelId: context.modelId,
  });
  const steps = buildDefaultToolPolicyPipelineSteps({
    profilePolicy: mergeAlsoAllowPolicy(
      resolveToolProfilePolicy(effective.profile),
      effective.profileAlsoAllow,
    ),
    profile: effective.profile,
    providerProfilePolicy: mergeAlsoAllowPolicy(
      resolveToolProfilePolicy(effective.providerProfile),
      effective.providerProfileAlsoAllow,
    ),
    providerProfile: effective.providerProfile,
    globalPolicy: effective.globalPolicy,
    globalProviderPolicy: effective.globalProviderPolicy,
    agentPolicy: effective.agentPolicy,
    agentProviderPolicy: effective.agentProviderPolicy,
    agentId: effective.agentId,
  });
  // As buildConversationToolPolicyPipelineSteps: sandbox, then owner-only, then subagent, all
  // through the same pipeline (so shipped-name rewrites apply to them too).
  if (context.sandboxed)
    steps.push({ policy: resolveSandboxToolPolicyForAgent(config, context.agentId), label: "sandbox" });
  if (context.senderIsOwner === false)
    steps.push({ policy: { deny: [...GATEWAY_OWNER_ONLY_CORE_TOOLS] }, label: "owner" });
  if (context.sessionKey && getSubagentDepth(context.sessionKey) > 0) {
    const subagent = resolveSubagentToolPolicyForSession(config, context.sessionKey, { store: {} });
    steps.push({ policy: subagent, label: "subagent" });
  }
  const tools = applyToolPolicyPipeline({
    tools: toolUniverse.map((name) => ({ name })),
    toolMeta: () => undefined,
    warn: () => {},
    steps,
  });
  return tools.map((tool) => tool.name);
}

const layerPolicy = (withProfile) => {
  const policy = {};
  if (withProfile && chance(0.3)) policy.profile = pick(PROFILES);
  if (chance(0.35)) policy.allow = subset(configVocabulary, 4);
  if (chance(0.35)) policy.deny = subset(configVocabulary, 3);
  if (chance(0.25)) policy.alsoAllow = subset(configVocabulary, 2);
  return policy;
};
const providers = [
  { modelProvider: "openai", modelId: "gpt-5" },
  { modelProvider: "anthropic", modelId: "claude-sonnet-4-5" },
  { modelProvider: "OpenAI", modelId: "GPT-5" },
  {},
];
const layeredCases = [];
for (let i = 0; i < 160; i++) {
  const tools = layerPolicy(false);
  if (chance(0.6)) tools.profile = pick(PROFILES);
  if (chance(0.4)) {
    tools.byProvider = {};
    if (chance(0.6)) tools.byProvider.openai = layerPolicy(true);
    if (chance(0.4)) tools.byProvider["openai/gpt-5"] = layerPolicy(true);
    if (chance(0.3)) tools.byProvider.anthropic = layerPolicy(true);
  }
  if (chance(0.3)) tools.sandbox = { tools: listPolicy(0.4) };
  if (chance(0.3)) tools.subagents = { tools: listPolicy(0.4) };
  const agentTools = layerPolicy(true);
  if (chance(0.3)) agentTools.byProvider = { openai: layerPolicy(true) };
  if (chance(0.2)) agentTools.sandbox = { tools: listPolicy(0.4) };
  const config = {
    tools,
    agents: {
      defaults: { subagents: { maxSpawnDepth: pick([1, 2, 5]) } },
      list: [{ id: "main" }, { id: "work", tools: agentTools }],
    },
  };
  const agentId = pick(["main", "work", "work"]);
  const context = {
    agentId,
    ...pick(providers),
    sandboxed: chance(0.25),
    senderIsOwner: pick([true, false, undefined]),
    sessionKey: pick([
      undefined,
      `agent:${agentId}:main`,
      `agent:${agentId}:subagent:a`,
      `agent:${agentId}:subagent:a:subagent:b`,
    ]),
  };
  layeredCases.push({ config, context, allowed: layeredAllowed(config, context) });
}
write("layered.json", { source, tools: toolUniverse, cases: layeredCases });

const decisions =
  policies.length * toolUniverse.length + layeredCases.length * toolUniverse.length + subagentCases.length;
console.log(`recorded openclaw@${VERSION}: ${coreTools.length} core tools, ~${decisions} decisions`);
