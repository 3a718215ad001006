// Deciding, and saying why. Owns: running a tool name through every layer
// (a tool must pass all of them, so deny wins and no later layer can grant
// back what an earlier one removed), the decision record naming the layer and
// rule that decided, and the one-call entry points resolveToolPolicy and
// explainToolPolicy. Does not own: reading the config into layers (layers.ts).
import { formatPath, type KernelConfig } from "@agent-kernel/config";
import { DEFAULT_TOOL_CATALOG, type ToolCatalog } from "./catalog.ts";
import { buildToolPolicyLayers, type LayerKind, type PolicyLayer, type ToolPolicyContext } from "./layers.ts";
import { normalizeToolName } from "./names.ts";
import { type CompiledPolicy, compilePolicy, type PolicyEntry } from "./policy.ts";

/** Why one tool is, or is not, available. */
export interface ToolDecision {
  /** The name as asked. */
  readonly tool: string;
  /** The name the policy matched (trimmed, lower-cased, aliases resolved). */
  readonly normalized: string;
  readonly allowed: boolean;
  /**
   * The deciding layer, by the config key that decided: "tools.deny",
   * "agents.list[1].tools.byProvider.openai.allow", "tools.profile (coding)",
   * "sandbox", "subagent(depth 2, leaf)", "owner-only", "non-owner-host";
   * "default" when no layer restricts the tool.
   */
  readonly layer: string;
  readonly kind: LayerKind | "default";
  /**
   * The rule, in words: `deny "group:runtime"`, `not in the allowlist (read, group:fs)`, `allow "group:fs"`;
   * a built-in deny says why and what lifts it (`deny "exec": people who are not the owner … lifts this rule`).
   */
  readonly rule: string;
  /** The entry that matched, as written (absent for an allowlist miss or "default"). */
  readonly pattern?: string;
  /** Where that entry is in the config ("tools.deny[0]"); absent for built-in rules. */
  readonly path?: string;
}

/** A resolved policy: ask it about any tool, any number of times. */
export interface ToolPolicy {
  readonly layers: readonly PolicyLayer[];
  decide(toolName: string): ToolDecision;
  isAllowed(toolName: string): boolean;
  /** The tools that pass, in their order. */
  filter<T extends { readonly name: string }>(tools: readonly T[]): T[];
  explain(toolNames: readonly string[]): ToolDecision[];
}

interface CompiledLayer {
  readonly layer: PolicyLayer;
  readonly policy: CompiledPolicy;
}

const SHOWN_ALLOW_ENTRIES = 5;

function describeAllowlist(layer: PolicyLayer): string {
  const patterns = [...new Set((layer.allow ?? []).map((entry) => entry.pattern))];
  const shown = patterns.slice(0, SHOWN_ALLOW_ENTRIES).join(", ");
  return patterns.length > SHOWN_ALLOW_ENTRIES
    ? `${shown}, … ${patterns.length - SHOWN_ALLOW_ENTRIES} more`
    : shown;
}

function entryFields(entry: PolicyEntry): { pattern: string; path?: string } {
  return entry.path ? { pattern: entry.pattern, path: formatPath(entry.path) } : { pattern: entry.pattern };
}

/**
 * Compiles layers into a policy. Each tool's decision is computed once and
 * kept, so asking about the same tool again costs a map lookup.
 */
export function compileToolPolicy(
  layers: readonly PolicyLayer[],
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
): ToolPolicy {
  const compiled: CompiledLayer[] = layers.map((layer) => ({
    layer,
    policy: compilePolicy(layer, catalog, { rewriteShippedNames: layer.rewriteShippedNames === true }),
  }));
  const cache = new Map<string, Omit<ToolDecision, "tool">>();

  const decideNormalized = (normalized: string): Omit<ToolDecision, "tool"> => {
    let firstMiss: CompiledLayer | undefined;
    let firstGrant: { layer: PolicyLayer; entry: PolicyEntry; viaWrite: boolean } | undefined;
    for (const item of compiled) {
      const verdict = item.policy.check(normalized);
      if (verdict.kind === "denied") {
        // An explicit deny anywhere is the reason, even when an earlier allowlist also missed.
        const { layer } = item;
        return {
          normalized,
          allowed: false,
          layer: layer.denyName ?? layer.name,
          kind: layer.kind,
          rule: `deny "${verdict.by.pattern}"${layer.denyReason ? `: ${layer.denyReason}` : ""}`,
          ...entryFields(verdict.by),
        };
      }
      if (verdict.kind === "not-allowed") firstMiss ??= item;
      else if (verdict.kind === "allowed" && !firstGrant)
        firstGrant = { layer: item.layer, entry: verdict.by, viaWrite: verdict.viaWrite === true };
    }
    if (firstMiss) {
      const { layer } = firstMiss;
      return {
        normalized,
        allowed: false,
        layer: layer.allowName ?? layer.name,
        kind: layer.kind,
        rule: `not in the allowlist (${describeAllowlist(layer)})`,
      };
    }
    if (firstGrant) {
      const { layer, entry, viaWrite } = firstGrant;
      return {
        normalized,
        allowed: true,
        layer: layer.allowName ?? layer.name,
        kind: layer.kind,
        rule: viaWrite ? `allow "${entry.pattern}" (apply_patch rides on write)` : `allow "${entry.pattern}"`,
        ...entryFields(entry),
      };
    }
    return { normalized, allowed: true, layer: "default", kind: "default", rule: "no layer restricts it" };
  };

  const decide = (toolName: string): ToolDecision => {
    const normalized = normalizeToolName(toolName, catalog);
    let decision = cache.get(normalized);
    if (!decision) {
      decision = decideNormalized(normalized);
      cache.set(normalized, decision);
    }
    return { tool: toolName, ...decision };
  };

  return {
    layers,
    decide,
    isAllowed: (toolName) => decide(toolName).allowed,
    filter: (tools) => tools.filter((tool) => decide(tool.name).allowed),
    explain: (toolNames) => toolNames.map(decide),
  };
}

/** The policy for one run: the config's layers for this context, compiled. */
export function resolveToolPolicy(
  config: KernelConfig,
  context: ToolPolicyContext = {},
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
): ToolPolicy {
  return compileToolPolicy(buildToolPolicyLayers(config, context, catalog), catalog);
}

/** For every tool: allowed or not, and the layer and rule that decided. */
export function explainToolPolicy(
  config: KernelConfig,
  context: ToolPolicyContext,
  toolNames: readonly string[],
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
): ToolDecision[] {
  return resolveToolPolicy(config, context, catalog).explain(toolNames);
}

/** One line per decision: `exec: blocked by tools.deny — deny "group:runtime" (tools.deny[0])`. */
export function formatToolDecision(decision: ToolDecision): string {
  const verdict = decision.allowed ? "allowed by" : "blocked by";
  const where = decision.path && !decision.layer.startsWith(decision.path) ? ` (${decision.path})` : "";
  return `${decision.tool}: ${verdict} ${decision.layer} — ${decision.rule}${where}`;
}
