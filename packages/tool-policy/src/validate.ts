// Checking the tool-policy parts of a config. Owns: finding every allow,
// deny, alsoAllow and profile setting and reporting, with its config path,
// unknown groups and profiles (errors), entries that match no known tool
// (warnings, since plugin tools are only known at run time) and allowlists
// that name no known tool at all (warnings: they block every core tool).
// Does not own: the shape of the config (the config package's schema).
import {
  type ConfigIssue,
  type ConfigPath,
  closestMatch,
  formatPath,
  type KernelConfig,
} from "@agent-kernel/config";
import { DEFAULT_TOOL_CATALOG, type ToolCatalog } from "./catalog.ts";
import { normalizeToolName } from "./names.ts";
import { compilePolicy } from "./policy.ts";

/** How bad a tool-policy config issue is: an `error` changes what the policy means, a `warning` may be intended. */
export type ToolPolicyIssueSeverity = "error" | "warning";

/** A config issue with a severity: errors make the policy mean something else than written. */
export interface ToolPolicyIssue extends ConfigIssue {
  readonly severity: ToolPolicyIssueSeverity;
}

interface ListSection {
  readonly profile?: string | undefined;
  readonly allow?: readonly string[] | undefined;
  readonly deny?: readonly string[] | undefined;
  readonly alsoAllow?: readonly string[] | undefined;
}

interface Sink {
  readonly catalog: ToolCatalog;
  readonly known: readonly string[];
  readonly issues: ToolPolicyIssue[];
}

const suggest = (word: string, candidates: readonly string[]) => {
  const match = closestMatch(word, candidates);
  return match ? `; did you mean "${match}"?` : "";
};

/** True when the entry (a name, group or glob) matches at least one known tool. */
function matchesKnownTool(entry: string, sink: Sink): boolean {
  const policy = compilePolicy({ allow: [entry] }, sink.catalog);
  return sink.known.some((tool) => policy.check(tool).kind === "allowed");
}

function checkEntry(raw: string, path: ConfigPath, sink: Sink): boolean {
  const entry = normalizeToolName(raw, sink.catalog);
  if (entry === "") return false;
  const groups = Object.keys(sink.catalog.groups);
  if (entry.startsWith("group:") && !Object.hasOwn(sink.catalog.groups, entry)) {
    const hint = suggest(entry, groups) || ` (known groups: ${groups.join(", ")})`;
    sink.issues.push({
      path,
      kind: "invalid",
      severity: "error",
      message: `unknown tool group "${raw}"${hint}`,
    });
    return false;
  }
  if (matchesKnownTool(entry, sink)) return true;
  const what = entry.includes("*") ? "pattern" : "tool";
  sink.issues.push({
    path,
    kind: "invalid",
    severity: "warning",
    message: `${what} "${raw}" matches no known tool; it only takes effect if a plugin or custom tool has that name${suggest(entry, sink.known)}`,
  });
  return false;
}

function checkSection(section: ListSection | undefined, path: ConfigPath, sink: Sink): void {
  if (!section) return;
  if (section.profile !== undefined && !Object.hasOwn(sink.catalog.profiles, section.profile)) {
    const profiles = Object.keys(sink.catalog.profiles);
    sink.issues.push({
      path: [...path, "profile"],
      kind: "invalid",
      severity: "error",
      message: `unknown tool profile "${section.profile}"${suggest(section.profile, profiles) || ` (expected one of: ${profiles.join(", ")})`}`,
    });
  }
  for (const field of ["allow", "deny", "alsoAllow"] as const) {
    const list = section[field];
    if (!list) continue;
    const matched = list.map((entry, index) => checkEntry(entry, [...path, field, index], sink));
    const meaningful = list.some((entry) => normalizeToolName(entry, sink.catalog) !== "");
    if (field === "allow" && meaningful && !matched.some(Boolean)) {
      sink.issues.push({
        path: [...path, field],
        kind: "invalid",
        severity: "warning",
        message: `allowlist names no known tool, so ${formatPath(path)} blocks every core tool; to add plugin tools without removing core ones, use alsoAllow`,
      });
    }
  }
}

/**
 * Every tool-policy problem in a config, each with its config path. Errors:
 * an unknown `group:` or profile. Warnings: an entry matching no known tool,
 * an allowlist naming no known tool. Pass a catalog extended with plugin
 * tools (extendToolCatalog) to stop warnings about them.
 */
export function validateToolPolicyConfig(
  config: KernelConfig,
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
): ToolPolicyIssue[] {
  const sink: Sink = { catalog, known: [...catalog.knownTools], issues: [] };
  const withProviders = (
    section: (ListSection & { byProvider?: Record<string, ListSection> | undefined }) | undefined,
    path: ConfigPath,
  ) => {
    checkSection(section, path, sink);
    for (const [key, policy] of Object.entries(section?.byProvider ?? {})) {
      checkSection(policy, [...path, "byProvider", key], sink);
    }
  };
  const tools = config.tools;
  withProviders(tools, ["tools"]);
  checkSection(tools.sandbox?.tools, ["tools", "sandbox", "tools"], sink);
  checkSection(tools.subagents?.tools, ["tools", "subagents", "tools"], sink);
  for (const [key, policy] of Object.entries(tools.bySender ?? {}))
    checkSection(policy, ["tools", "bySender", key], sink);
  const agentSections: [ConfigPath, (typeof config.agents.list)[number]["tools"]][] = [
    [["agents", "defaults", "tools"], config.agents.defaults.tools],
    ...config.agents.list.map((agent, index): [ConfigPath, typeof agent.tools] => [
      ["agents", "list", index, "tools"],
      agent.tools,
    ]),
  ];
  for (const [path, section] of agentSections) {
    withProviders(section, path);
    checkSection(section?.sandbox?.tools, [...path, "sandbox", "tools"], sink);
  }
  for (const [channelId, channel] of Object.entries(config.channels)) {
    for (const [groupId, group] of Object.entries(channel?.groups ?? {})) {
      checkSection(group.tools, ["channels", channelId, "groups", groupId, "tools"], sink);
    }
  }
  return sink.issues;
}
