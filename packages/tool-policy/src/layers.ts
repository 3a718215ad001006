// The policy layers of one run, read from the config. Owns: which config
// keys feed which layer, in OpenClaw's order (profile → provider profile →
// tools allow/deny → tools.byProvider → agent → agent byProvider →
// group/channel → sender → sandbox → subagent → owner-only), then the
// kernel's own non-owner-host layer (no unsandboxed exec/write/edit/
// apply_patch/process in a session non-owners reach unless
// `nonOwnerHostTools` grants it), each entry carrying its config path so a
// decision or a warning can point at it; the sandbox defaults and the
// subagent spawn-depth rule. Does not own: deciding (resolve.ts), whether a
// session is sandboxed or reachable by non-owners (the caller says so), or
// which key `nonOwnerHostTools` is read from (config's resolveNonOwnerHostTools).
import {
  type AgentToolsConfig,
  type ConfigPath,
  formatPath,
  type KernelConfig,
  resolveNonOwnerHostTools,
} from "@agent-kernel/config";
import {
  DEFAULT_TOOL_CATALOG,
  OWNER_ONLY_TOOLS,
  SANDBOX_DEFAULT_ALLOW,
  SANDBOX_DEFAULT_DENY,
  SUBAGENT_DENY_ALWAYS,
  SUBAGENT_DENY_LEAF,
  type ToolCatalog,
} from "./catalog.ts";
import { expandToolGroups, normalizeToolName } from "./names.ts";
import { compilePolicy, type PolicyEntry } from "./policy.ts";

/** Which setting a policy layer comes from (profile, global, agent, group, sender, sandbox, subagent, owner-only...). */
export type LayerKind =
  | "profile"
  | "provider-profile"
  | "global"
  | "global-provider"
  | "agent"
  | "agent-provider"
  | "group"
  | "sender"
  | "sandbox"
  | "subagent"
  | "owner-only"
  | "non-owner-host"
  | "extra";

/** One filter a tool must pass. A layer never adds a tool back. */
export interface PolicyLayer {
  readonly kind: LayerKind;
  /** The layer as a whole: "tools.byProvider.openai", "sandbox", "subagent(depth 2, leaf)", "owner-only". */
  readonly name: string;
  /** How the allowlist is named when it removes a tool ("tools.allow", "tools.profile (coding)"); default `name`. */
  readonly allowName?: string;
  /** How the denylist is named when it removes a tool ("tools.deny"); default `name`. */
  readonly denyName?: string;
  /** Why a built-in denylist applies and what lifts it; added to a deny's rule text. */
  readonly denyReason?: string;
  /** Empty or absent: no allowlist (everything not denied passes). */
  readonly allow?: readonly PolicyEntry[];
  readonly deny?: readonly PolicyEntry[];
  /** Apply the catalog's shippedExpansions (canvas → show_widget, …), as OpenClaw's pipeline does. */
  readonly rewriteShippedNames?: boolean;
}

/** What the caller knows about the run; everything optional. */
export interface ToolPolicyContext {
  /** The agent running the turn (default: the config's default agent). */
  readonly agentId?: string;
  /** Model provider and id, for `tools.byProvider` ("openai" or "openai/gpt-5"). */
  readonly modelProvider?: string;
  readonly modelId?: string;
  /** Channel id and group/channel id of the conversation, for `channels.<id>.groups.<group>.tools`. */
  readonly channel?: string;
  readonly groupId?: string;
  /** The sender, for `tools.bySender` ("telegram:123", else "123", else "*"). */
  readonly senderId?: string;
  /** True when the session runs sandboxed (runtime-resolver decides from `sandbox.mode`). */
  readonly sandboxed?: boolean;
  /** Subagent spawn depth: 0 or absent for a main session; see subagentDepthFromSessionKey. */
  readonly spawnDepth?: number;
  /** False for a sender who is not the owner: owner-only tools are removed. Absent or true: kept. */
  readonly senderIsOwner?: boolean;
  /**
   * True when people other than the owner can reach the session (open DMs, groups, a non-owner sender):
   * unless it is sandboxed or `nonOwnerHostTools` is true for the agent, NON_OWNER_HOST_TOOLS are removed.
   * `senderIsOwner: false` counts as true whatever this says. Absent: an owner-only session (CLI, cron).
   */
  readonly reachableByNonOwners?: boolean;
  /** Extra tools flagged owner-only (e.g. a channel login tool), on top of OpenClaw's list. */
  readonly ownerOnlyTools?: readonly string[];
  /** Layers appended after the built-in ones (e.g. a parent run's inherited policy). */
  readonly extraLayers?: readonly PolicyLayer[];
}

/** Tools that act on the host outside a sandbox: kept from sessions non-owners reach unless granted. */
export const NON_OWNER_HOST_TOOLS: readonly string[] = ["exec", "write", "edit", "apply_patch", "process"];

interface ListPolicy {
  readonly allow?: readonly string[] | undefined;
  readonly deny?: readonly string[] | undefined;
  readonly alsoAllow?: readonly string[] | undefined;
}

const entries = (list: readonly string[], path: ConfigPath): PolicyEntry[] =>
  list.map((pattern, index) => ({ pattern, path: [...path, index] }));

/**
 * OpenClaw's `pickSandboxToolPolicy`: `alsoAllow` joins `allow`; `alsoAllow`
 * alone (or with an empty `allow`) means "everything, and these" — a `*`
 * allowlist, which restricts nothing. Returns undefined when neither list is set.
 */
function listLayer(
  kind: LayerKind,
  policy: ListPolicy | undefined,
  path: ConfigPath,
): PolicyLayer | undefined {
  if (!policy) return undefined;
  const also = policy.alsoAllow && policy.alsoAllow.length > 0 ? policy.alsoAllow : undefined;
  let allow: PolicyEntry[] | undefined;
  if (policy.allow) {
    allow = entries(policy.allow, [...path, "allow"]);
    if (also) {
      const star = policy.allow.length === 0 ? [{ pattern: "*", path: [...path, "alsoAllow"] }] : [];
      allow = [...star, ...allow, ...entries(also, [...path, "alsoAllow"])];
    }
  } else if (also) {
    allow = [{ pattern: "*", path: [...path, "alsoAllow"] }, ...entries(also, [...path, "alsoAllow"])];
  }
  const deny = policy.deny ? entries(policy.deny, [...path, "deny"]) : undefined;
  if (!allow && !deny) return undefined;
  const name = formatPath(path);
  return {
    kind,
    name,
    allowName: formatPath([...path, "allow"]),
    denyName: formatPath([...path, "deny"]),
    ...(allow ? { allow } : {}),
    ...(deny ? { deny } : {}),
  };
}

/** A profile's allowlist plus `alsoAllow`; undefined for no profile (or an unknown one). */
function profileLayer(
  kind: LayerKind,
  profile: { id: string; path: ConfigPath } | undefined,
  alsoAllow: { list: readonly string[]; path: ConfigPath } | undefined,
  catalog: ToolCatalog,
): PolicyLayer | undefined {
  if (!profile) return undefined;
  const policy = Object.hasOwn(catalog.profiles, profile.id) ? catalog.profiles[profile.id] : undefined;
  if (!policy) return undefined;
  const allow: PolicyEntry[] = policy.allow.map((pattern) => ({ pattern, path: profile.path }));
  if (alsoAllow && alsoAllow.list.length > 0) allow.push(...entries(alsoAllow.list, alsoAllow.path));
  const name = `${formatPath(profile.path)} (${profile.id})`;
  return { kind, name, allowName: name, allow };
}

/** The agent's tools section and where it lives: its list entry, else `agents.defaults.tools`. */
export function agentToolsSection(
  config: KernelConfig,
  agentId: string | undefined,
): { tools: AgentToolsConfig | undefined; path: ConfigPath; agentId: string | undefined } {
  const id = (agentId ?? config.agents.list.find((agent) => agent.default)?.id ?? config.agents.list[0]?.id)
    ?.trim()
    .toLowerCase();
  const index = id === undefined ? -1 : config.agents.list.findIndex((agent) => agent.id === id);
  const entry = index >= 0 ? config.agents.list[index] : undefined;
  if (entry?.tools) return { tools: entry.tools, path: ["agents", "list", index, "tools"], agentId: id };
  return { tools: config.agents.defaults.tools, path: ["agents", "defaults", "tools"], agentId: id };
}

function maxSpawnDepthFor(config: KernelConfig, agentId: string | undefined): number {
  const entry = config.agents.list.find((agent) => agent.id === agentId);
  return entry?.subagents?.maxSpawnDepth ?? config.agents.defaults.subagents.maxSpawnDepth;
}

/**
 * `tools.byProvider` entry for a model: "provider/model" first, then
 * "provider"; keys compare case-insensitively (a lower-case key wins over a
 * differently cased duplicate).
 */
export function findProviderPolicy<T>(
  byProvider: Readonly<Record<string, T>> | undefined,
  modelProvider: string | undefined,
  modelId: string | undefined,
): { key: string; policy: T } | undefined {
  const provider = modelProvider?.trim().toLowerCase();
  if (!provider || !byProvider) return undefined;
  const lookup = new Map<string, { key: string; policy: T }>();
  for (const [key, policy] of Object.entries(byProvider)) {
    const normalized = key.trim().toLowerCase();
    const existing = lookup.get(normalized);
    if (!existing || (key === normalized && existing.key !== normalized))
      lookup.set(normalized, { key, policy });
  }
  const model = modelId?.trim().toLowerCase();
  return (model ? lookup.get(`${provider}/${model}`) : undefined) ?? lookup.get(provider);
}

/** OpenClaw's sandbox resolver: per-list agent value over global value over default. */
function sandboxLayer(
  config: KernelConfig,
  agent: { tools: AgentToolsConfig | undefined; path: ConfigPath },
  catalog: ToolCatalog,
): PolicyLayer {
  const agentLists = agent.tools?.sandbox?.tools;
  const globalLists = config.tools.sandbox?.tools;
  const pickList = (field: "allow" | "alsoAllow" | "deny") => {
    const fromAgent = agentLists?.[field];
    if (fromAgent) return { list: fromAgent, path: [...agent.path, "sandbox", "tools", field] };
    const fromGlobal = globalLists?.[field];
    if (fromGlobal) return { list: fromGlobal, path: ["tools", "sandbox", "tools", field] };
    return undefined;
  };
  const allowConfig = pickList("allow");
  const alsoConfig = pickList("alsoAllow");
  const denyConfig = pickList("deny");
  const defaults = (list: readonly string[]): PolicyEntry[] => list.map((pattern) => ({ pattern }));

  let allow: PolicyEntry[];
  const also = alsoConfig && alsoConfig.list.length > 0 ? entries(alsoConfig.list, alsoConfig.path) : [];
  if (allowConfig) {
    allow = allowConfig.list.length === 0 ? [] : [...entries(allowConfig.list, allowConfig.path), ...also];
  } else {
    allow = [...defaults(SANDBOX_DEFAULT_ALLOW), ...also];
  }

  let deny: PolicyEntry[];
  if (denyConfig) {
    deny = entries(denyConfig.list, denyConfig.path);
  } else {
    // Tools the user allows explicitly leave the *default* denylist.
    const explicit = [...(allowConfig?.list ?? []), ...(alsoConfig?.list ?? [])];
    const reAllowed = compilePolicy({ allow: expandToolGroups(explicit, catalog) }, catalog);
    deny = defaults(
      explicit.length === 0
        ? SANDBOX_DEFAULT_DENY
        : SANDBOX_DEFAULT_DENY.filter(
            (name) => reAllowed.check(normalizeToolName(name, catalog)).kind !== "allowed",
          ),
    );
  }

  // Denying `image` also denies view_image; a non-empty allowlist always gains view_image.
  const denyCheck = compilePolicy({ allow: deny }, catalog);
  const denies = (name: string) => denyCheck.check(name).kind === "allowed";
  if (denies("image") && !denies("view_image")) deny.push({ pattern: "view_image" });
  const denyNames = expandToolGroups(
    deny.map((entry) => entry.pattern),
    catalog,
  );
  const allowNames = expandToolGroups(
    allow.map((entry) => entry.pattern),
    catalog,
  );
  if (allowNames.length > 0 && !denyNames.includes("view_image") && !allowNames.includes("view_image")) {
    allow.push({ pattern: "view_image" });
  }
  return { kind: "sandbox", name: "sandbox", allow, deny };
}

/** Number of `subagent:` segments in a session key ("agent:main:subagent:a:subagent:b" → 2). */
export function subagentDepthFromSessionKey(sessionKey: string | undefined): number {
  const raw = sessionKey?.trim().toLowerCase();
  if (!raw) return 0;
  const parts = raw.split(":");
  const rest =
    parts[0] === "agent" && parts.length >= 3 && parts[1] && parts[2] ? parts.slice(2).join(":") : raw;
  return rest.match(/(^|:)subagent:/g)?.length ?? 0;
}

function subagentLayer(config: KernelConfig, depth: number, maxSpawnDepth: number): PolicyLayer {
  const leaf = depth >= maxSpawnDepth;
  const configured = config.tools.subagents?.tools;
  const path: ConfigPath = ["tools", "subagents", "tools"];
  const deny: PolicyEntry[] = [
    ...SUBAGENT_DENY_ALWAYS.map((pattern) => ({ pattern })),
    ...(leaf ? SUBAGENT_DENY_LEAF.map((pattern) => ({ pattern })) : []),
    ...entries(configured?.deny ?? [], [...path, "deny"]),
  ];
  // `allow` sets an allowlist (joined by alsoAllow); alsoAllow alone creates none.
  const allow = configured?.allow
    ? [
        ...entries(configured.allow, [...path, "allow"]),
        ...entries(configured.alsoAllow ?? [], [...path, "alsoAllow"]),
      ]
    : undefined;
  return {
    kind: "subagent",
    name: `subagent(depth ${depth}, ${leaf ? "leaf" : "orchestrator"})`,
    deny,
    ...(allow ? { allow } : {}),
  };
}

function groupLayer(config: KernelConfig, channel: string | undefined, groupId: string | undefined) {
  if (!channel || !groupId) return undefined;
  const channelId = channel.trim().toLowerCase();
  const groups = config.channels[channelId]?.groups;
  if (!groups) return undefined;
  const id = groupId.trim();
  const key = Object.hasOwn(groups, id) && groups[id]?.tools ? id : "*";
  return listLayer("group", groups[key]?.tools, ["channels", channelId, "groups", key, "tools"]);
}

function senderLayer(config: KernelConfig, channel: string | undefined, senderId: string | undefined) {
  const bySender = config.tools.bySender;
  if (!bySender || !senderId) return undefined;
  const candidates = [...(channel ? [`${channel.trim().toLowerCase()}:${senderId}`] : []), senderId, "*"];
  const key = candidates.find((candidate) => Object.hasOwn(bySender, candidate));
  return key === undefined ? undefined : listLayer("sender", bySender[key], ["tools", "bySender", key]);
}

/**
 * The kernel's non-owner-host layer: a session that non-owners reach, running on the host, loses
 * NON_OWNER_HOST_TOOLS unless the agent's effective `nonOwnerHostTools` is true. Undefined when it does not apply.
 */
function nonOwnerHostLayer(
  config: KernelConfig,
  context: ToolPolicyContext,
  agentId: string | undefined,
): PolicyLayer | undefined {
  const reachable = context.reachableByNonOwners === true || context.senderIsOwner === false;
  if (!reachable || context.sandboxed === true) return undefined;
  const setting = resolveNonOwnerHostTools(config, agentId);
  if (setting.enabled) return undefined;
  const grant = formatPath(setting.grantPath);
  return {
    kind: "non-owner-host",
    name: "non-owner-host",
    deny: NON_OWNER_HOST_TOOLS.map((pattern) => ({ pattern })),
    denyReason: `people who are not the owner can reach this session and it is not sandboxed; ${grant}: true lifts this rule`,
  };
}

/**
 * The layers that apply to one run, in order. Layers with nothing
 * configured are left out, so every returned layer restricts something.
 */
export function buildToolPolicyLayers(
  config: KernelConfig,
  context: ToolPolicyContext = {},
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
): PolicyLayer[] {
  const agent = agentToolsSection(config, context.agentId);
  const global = config.tools;
  const layers: (PolicyLayer | undefined)[] = [];

  const profile = agent.tools?.profile
    ? { id: agent.tools.profile as string, path: [...agent.path, "profile"] }
    : global.profile
      ? { id: global.profile as string, path: ["tools", "profile"] }
      : undefined;
  const alsoAllow = agent.tools?.alsoAllow
    ? { list: agent.tools.alsoAllow, path: [...agent.path, "alsoAllow"] }
    : global.alsoAllow
      ? { list: global.alsoAllow, path: ["tools", "alsoAllow"] }
      : undefined;
  layers.push(profileLayer("profile", profile, alsoAllow, catalog));

  const provider = findProviderPolicy(global.byProvider, context.modelProvider, context.modelId);
  const agentProvider = findProviderPolicy(agent.tools?.byProvider, context.modelProvider, context.modelId);
  const providerPath: ConfigPath | undefined = provider && ["tools", "byProvider", provider.key];
  const agentProviderPath: ConfigPath | undefined = agentProvider && [
    ...agent.path,
    "byProvider",
    agentProvider.key,
  ];
  const providerProfile =
    agentProvider?.policy.profile && agentProviderPath
      ? { id: agentProvider.policy.profile as string, path: [...agentProviderPath, "profile"] }
      : provider?.policy.profile && providerPath
        ? { id: provider.policy.profile as string, path: [...providerPath, "profile"] }
        : undefined;
  const providerAlso =
    agentProvider?.policy.alsoAllow && agentProviderPath
      ? { list: agentProvider.policy.alsoAllow, path: [...agentProviderPath, "alsoAllow"] }
      : provider?.policy.alsoAllow && providerPath
        ? { list: provider.policy.alsoAllow, path: [...providerPath, "alsoAllow"] }
        : undefined;
  layers.push(profileLayer("provider-profile", providerProfile, providerAlso, catalog));

  layers.push(listLayer("global", global, ["tools"]));
  if (provider && providerPath) layers.push(listLayer("global-provider", provider.policy, providerPath));
  layers.push(listLayer("agent", agent.tools, agent.path));
  if (agentProvider && agentProviderPath)
    layers.push(listLayer("agent-provider", agentProvider.policy, agentProviderPath));
  layers.push(groupLayer(config, context.channel, context.groupId));
  layers.push(senderLayer(config, context.channel, context.senderId));
  if (context.sandboxed) layers.push(sandboxLayer(config, agent, catalog));
  const depth = context.spawnDepth ?? 0;
  if (depth > 0) layers.push(subagentLayer(config, depth, maxSpawnDepthFor(config, agent.agentId)));
  if (context.senderIsOwner === false) {
    const ownerOnly = [...OWNER_ONLY_TOOLS, ...(context.ownerOnlyTools ?? [])];
    layers.push({ kind: "owner-only", name: "owner-only", deny: ownerOnly.map((pattern) => ({ pattern })) });
  }
  layers.push(nonOwnerHostLayer(config, context, agent.agentId));
  const built = layers
    .filter((layer): layer is PolicyLayer => layer !== undefined)
    .map((layer) => ({ ...layer, rewriteShippedNames: true }));
  return [...built, ...(context.extraLayers ?? [])];
}
