// One allow/deny policy, compiled once and asked about many tools. Owns: the
// matching rules (deny wins; an empty allowlist allows everything not denied;
// `*` globs are anchored; `apply_patch` rides on `write`) and remembering
// which configured entry matched, so a decision can be explained. Does not
// own: how policies are stacked into layers (layers.ts, resolve.ts).
import type { ConfigPath } from "@agent-kernel/config";
import { DEFAULT_TOOL_CATALOG, type ToolCatalog } from "./catalog.ts";
import { groupMembers, normalizeToolName } from "./names.ts";

/** One allow or deny entry as configured, with where it came from. */
export interface PolicyEntry {
  /** As written: a tool name, `group:*`, or a glob with `*`. */
  readonly pattern: string;
  /** Where in the config it was written; absent for built-in defaults. */
  readonly path?: ConfigPath;
}

/** A policy as plain lists; entries may be bare strings (no config path). */
export interface ToolPolicyRules {
  readonly allow?: readonly (string | PolicyEntry)[] | undefined;
  readonly deny?: readonly (string | PolicyEntry)[] | undefined;
}

/** Why one policy let a tool through or not. */
export type PolicyVerdict =
  | { readonly kind: "denied"; readonly by: PolicyEntry }
  | { readonly kind: "not-allowed" }
  | { readonly kind: "allowed"; readonly by: PolicyEntry; readonly viaWrite?: true }
  | { readonly kind: "unrestricted" };

interface CompiledList {
  readonly all: PolicyEntry | undefined;
  readonly exact: ReadonlyMap<string, PolicyEntry>;
  readonly globs: readonly { readonly regex: RegExp; readonly entry: PolicyEntry }[];
  readonly empty: boolean;
}

const ESCAPE = /[.*+?^${}()|[\]\\]/g;

function toEntry(entry: string | PolicyEntry): PolicyEntry {
  return typeof entry === "string" ? { pattern: entry } : entry;
}

function compileList(
  entries: readonly (string | PolicyEntry)[] | undefined,
  catalog: ToolCatalog,
  rewriteShippedNames: boolean,
): CompiledList {
  let all: PolicyEntry | undefined;
  const exact = new Map<string, PolicyEntry>();
  const globs: { regex: RegExp; entry: PolicyEntry }[] = [];
  for (const raw of entries ?? []) {
    const entry = toEntry(raw);
    const normalized = normalizeToolName(entry.pattern, catalog);
    if (normalized === "") continue;
    const rewritten = rewriteShippedNames ? catalog.shippedExpansions[normalized] : undefined;
    if (rewritten) {
      for (const name of rewritten) if (!exact.has(name)) exact.set(name, entry);
      continue;
    }
    const members = groupMembers(normalized, catalog);
    if (members) {
      for (const member of members) if (!exact.has(member)) exact.set(member, entry);
    } else if (normalized === "*") {
      all ??= entry;
    } else if (normalized.includes("*")) {
      const source = normalized.replace(ESCAPE, "\\$&").replaceAll("\\*", ".*");
      globs.push({ regex: new RegExp(`^${source}$`), entry });
    } else if (!exact.has(normalized)) {
      exact.set(normalized, entry);
    }
  }
  return { all, exact, globs, empty: all === undefined && exact.size === 0 && globs.length === 0 };
}

function matchList(list: CompiledList, name: string): PolicyEntry | undefined {
  const exact = list.exact.get(name);
  if (exact) return exact;
  for (const glob of list.globs) if (glob.regex.test(name)) return glob.entry;
  return list.all;
}

/** A policy ready to answer for any number of tool names. */
export interface CompiledPolicy {
  /** True when the policy neither denies nor restricts anything. */
  readonly restrictsNothing: boolean;
  /** Verdict for an already-normalised tool name. */
  check(normalizedName: string): PolicyVerdict;
}

/**
 * Compiles a policy. Group entries are expanded, names normalised, and a
 * glob's `*` matches any run of characters over the whole name (there is no
 * substring matching: `sessions` does not match `sessions_spawn`).
 */
export function compilePolicy(
  rules: ToolPolicyRules,
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
  options: { readonly rewriteShippedNames?: boolean } = {},
): CompiledPolicy {
  const rewrite = options.rewriteShippedNames === true;
  const deny = compileList(rules.deny, catalog, rewrite);
  const allow = compileList(rules.allow, catalog, rewrite);
  return {
    restrictsNothing: deny.empty && allow.empty,
    check(name) {
      const denied = deny.empty ? undefined : matchList(deny, name);
      if (denied) return { kind: "denied", by: denied };
      if (allow.empty) return { kind: "unrestricted" };
      const allowed = matchList(allow, name);
      if (allowed) return { kind: "allowed", by: allowed };
      // OpenClaw 2026.9.6: an allowlist that admits `write` also admits apply_patch.
      if (name === "apply_patch") {
        const write = matchList(allow, "write");
        if (write) return { kind: "allowed", by: write, viaWrite: true };
      }
      return { kind: "not-allowed" };
    },
  };
}

/** Whether one policy lets a tool through (the name is normalised first). */
export function isToolAllowedByPolicy(
  name: string,
  rules: ToolPolicyRules | undefined,
  catalog: ToolCatalog = DEFAULT_TOOL_CATALOG,
): boolean {
  if (!rules) return true;
  const verdict = compilePolicy(rules, catalog).check(normalizeToolName(name, catalog));
  return verdict.kind === "allowed" || verdict.kind === "unrestricted";
}
