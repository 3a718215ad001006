// The tool catalog the policy works with. Owns: the built-in groups,
// profiles and aliases (re-exported from the table recorded from OpenClaw),
// the list of known core tool ids, and the ToolCatalog value that lets a
// caller add its own groups and tool names. Does not own: matching or layers.
import {
  OPENCLAW_OWNER_ONLY_TOOLS,
  OPENCLAW_SANDBOX_DEFAULT_ALLOW,
  OPENCLAW_SANDBOX_DEFAULT_DENY,
  OPENCLAW_SHIPPED_POLICY_EXPANSIONS,
  OPENCLAW_SUBAGENT_DENY_ALWAYS,
  OPENCLAW_SUBAGENT_DENY_LEAF,
  OPENCLAW_TOOL_ALIASES,
  OPENCLAW_TOOL_GROUPS,
  OPENCLAW_TOOL_PROFILES,
} from "./openclaw-catalog.generated.ts";

/** The id of a built-in tool profile (`tools.profile`), e.g. `coding`; `full` allows everything. */
export type ToolProfileId = keyof typeof OPENCLAW_TOOL_PROFILES;

/** Groups, profiles and aliases a policy is resolved against. */
export interface ToolCatalog {
  /** `group:<name>` → member tool ids (canonical, lower-case). */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  /** Profile id → its allowlist (patterns; `*` = everything). */
  readonly profiles: Readonly<Record<string, { readonly allow: readonly string[] }>>;
  /** Alias → canonical tool id, applied after trimming and lower-casing. */
  readonly aliases: Readonly<Record<string, string>>;
  /**
   * Entries the layered pipeline rewrites before matching: a renamed tool
   * (`update_plan` → `progress_card`) or a plugin family's core tools
   * (`canvas` also covers `show_widget`). Single-policy matching ignores them, as OpenClaw does.
   */
  readonly shippedExpansions: Readonly<Record<string, readonly string[]>>;
  /** Every tool id the catalog knows (group members plus extra names); validation uses it. */
  readonly knownTools: ReadonlySet<string>;
}

/** OpenClaw 2026.9.6's catalog: the default for every function that takes one. */
export const DEFAULT_TOOL_CATALOG: ToolCatalog = {
  groups: OPENCLAW_TOOL_GROUPS,
  profiles: OPENCLAW_TOOL_PROFILES,
  aliases: OPENCLAW_TOOL_ALIASES,
  shippedExpansions: OPENCLAW_SHIPPED_POLICY_EXPANSIONS,
  knownTools: new Set(Object.values(OPENCLAW_TOOL_GROUPS).flat()),
};

/**
 * A catalog with extra groups (e.g. `group:plugins`, a plugin id) and extra
 * known tool names (plugin or custom tools), on top of a base catalog.
 * Group names and members are normalised like any tool name.
 */
export function extendToolCatalog(
  extra: { groups?: Readonly<Record<string, readonly string[]>>; tools?: readonly string[] },
  base: ToolCatalog = DEFAULT_TOOL_CATALOG,
): ToolCatalog {
  const fold = (name: string) => {
    const lower = name.trim().toLowerCase();
    return base.aliases[lower] ?? lower;
  };
  const groups: Record<string, readonly string[]> = { ...base.groups };
  for (const [name, members] of Object.entries(extra.groups ?? {})) {
    groups[fold(name)] = [...new Set(members.map(fold).filter(Boolean))];
  }
  const knownTools = new Set(base.knownTools);
  for (const members of Object.values(groups)) for (const member of members) knownTools.add(member);
  for (const tool of extra.tools ?? []) if (fold(tool)) knownTools.add(fold(tool));
  return { ...base, groups, knownTools };
}

/** Tools a sandboxed session keeps when `tools.sandbox.tools.allow` is unset. */
export const SANDBOX_DEFAULT_ALLOW = OPENCLAW_SANDBOX_DEFAULT_ALLOW;
/** Tools (and channel ids) a sandboxed session loses when `tools.sandbox.tools.deny` is unset. */
export const SANDBOX_DEFAULT_DENY = OPENCLAW_SANDBOX_DEFAULT_DENY;
/** Tools denied to every subagent session, whatever its depth. */
export const SUBAGENT_DENY_ALWAYS = OPENCLAW_SUBAGENT_DENY_ALWAYS;
/** Tools also denied to leaf subagents (depth at `maxSpawnDepth`): they cannot spawn or steer children. */
export const SUBAGENT_DENY_LEAF = OPENCLAW_SUBAGENT_DENY_LEAF;
/** Core tools that need the owner (or a trusted operator) on gateway surfaces. */
export const OWNER_ONLY_TOOLS = OPENCLAW_OWNER_ONLY_TOOLS;
