// A tool-policy layer on top of the one the kernel resolved from the config: a plan step's `allow`/`deny`, or
// "no tools" for the planner turn. Owns only narrowing: a tool the base policy blocks stays blocked with the
// base's reason, so a layer can never widen the config; a deny wins over an allow. Does not own the config's
// layers (tool-policy, through the kernel's `PreparedSession.toolPolicy`).
import type { PreparedSession } from "@agent-kernel/kernel";

type ToolPolicy = PreparedSession["toolPolicy"];
type ToolDecision = ReturnType<ToolPolicy["decide"]>;

export interface NarrowingLayer {
  /** How decisions name the layer: `plan.steps[0].tools`, `hybrid-planner`. */
  readonly name: string;
  /** Only these (exact names); absent: everything the base allows. */
  readonly allow?: readonly string[] | undefined;
  readonly deny?: readonly string[] | undefined;
  /** The rule shown for an allowlist miss; default `not in the allowlist (…)`. */
  readonly allowRule?: string | undefined;
}

/** `base` narrowed by `layer`. */
export function narrowToolPolicy(base: ToolPolicy, layer: NarrowingLayer): ToolPolicy {
  const allow = layer.allow?.map((name) => name.trim().toLowerCase());
  const deny = new Set(layer.deny?.map((name) => name.trim().toLowerCase()));
  const decide = (toolName: string): ToolDecision => {
    const decided = base.decide(toolName);
    if (!decided.allowed) return decided;
    const name = decided.normalized;
    if (deny.has(name)) {
      return {
        ...decided,
        allowed: false,
        layer: `${layer.name}.deny`,
        kind: "extra",
        rule: `deny "${name}"`,
        pattern: name,
      };
    }
    if (allow !== undefined && !allow.includes(name)) {
      const { pattern: _pattern, path: _path, ...rest } = decided;
      return {
        ...rest,
        allowed: false,
        layer: `${layer.name}.allow`,
        kind: "extra",
        rule: layer.allowRule ?? `not in the allowlist (${allow.join(", ")})`,
      };
    }
    return decided;
  };
  return {
    layers: [
      ...base.layers,
      {
        kind: "extra",
        name: layer.name,
        ...(allow === undefined ? {} : { allow: allow.map((pattern) => ({ pattern })) }),
        ...(deny.size === 0 ? {} : { deny: [...deny].map((pattern) => ({ pattern })) }),
      },
    ],
    decide,
    isAllowed: (toolName) => decide(toolName).allowed,
    filter: (tools) => tools.filter((tool) => decide(tool.name).allowed),
    explain: (toolNames) => toolNames.map(decide),
  };
}

/** The prepared session with `layer` on top of its tool policy (its recorded decisions follow). */
export function withNarrowedTools(prepared: PreparedSession, layer: NarrowingLayer): PreparedSession {
  const toolPolicy = narrowToolPolicy(prepared.toolPolicy, layer);
  return {
    ...prepared,
    toolPolicy,
    toolDecisions: toolPolicy.explain(prepared.toolDecisions.map((decision) => decision.tool)),
  };
}
