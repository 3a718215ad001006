// Resolving the policy for 200 tools through 10 layers, per call: the
// compiled resolver (patterns compiled once per call, each tool decided once)
// against a naive re-resolution that expands groups and builds the patterns
// again for every tool and every layer (what calling a one-policy check per
// tool and layer costs).
import { defineSuite } from "@agent-kernel/bench";
import {
  compileToolPolicy,
  DEFAULT_TOOL_CATALOG,
  expandToolGroups,
  normalizeToolName,
  type PolicyLayer,
} from "../src/index.ts";

const TOOLS = 200;
const LAYERS = 10;
const core = [...DEFAULT_TOOL_CATALOG.knownTools];
const tools = Array.from({ length: TOOLS }, (_, i) => core[i % core.length] ?? "read").map((name, i) =>
  i < core.length ? name : `plugin_${i}_${name}`,
);
const groups = Object.keys(DEFAULT_TOOL_CATALOG.groups);
const layers: PolicyLayer[] = Array.from({ length: LAYERS }, (_, i) => ({
  kind: "extra",
  name: `layer${i}`,
  allow: [groups[i % groups.length] ?? "*", "plugin_*", "*_generate", "sessions_*", "read", "exec"].map(
    (pattern) => ({
      pattern,
    }),
  ),
  deny: [`plugin_${i}*`, i % 3 === 0 ? "group:web" : "nothing"].map((pattern) => ({ pattern })),
}));

function naiveAllowed(name: string): boolean {
  const normalized = normalizeToolName(name);
  for (const layer of layers) {
    const compile = (list: readonly { pattern: string }[] | undefined) =>
      expandToolGroups(list?.map((entry) => entry.pattern)).map((pattern) =>
        pattern.includes("*")
          ? new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*")}$`)
          : pattern,
      );
    const matches = (patterns: (string | RegExp)[]) =>
      patterns.some((p) => (typeof p === "string" ? p === normalized : p.test(normalized)));
    if (matches(compile(layer.deny))) return false;
    const allow = compile(layer.allow);
    if (allow.length > 0 && !matches(allow)) return false;
  }
  return true;
}

// Both cases must answer alike, or the comparison means nothing.
const expected = tools.filter(naiveAllowed).join();
if (tools.filter(compileToolPolicy(layers).isAllowed).join() !== expected) {
  throw new Error("resolve.bench: the compiled policy and the naive baseline disagree");
}

export default defineSuite({
  name: `resolve ${TOOLS} tools x ${LAYERS} layers, per call`,
  baseline: "naive re-resolution per tool and layer",
  iterations: 20,
  itemsPerIteration: TOOLS,
  cases: [
    { name: "naive re-resolution per tool and layer", run: () => tools.filter(naiveAllowed) },
    {
      name: "compileToolPolicy + decide every tool",
      run: () => tools.filter(compileToolPolicy(layers).isAllowed),
    },
    {
      name: "compileToolPolicy + explain every tool",
      run: () => compileToolPolicy(layers).explain(tools),
    },
  ],
});
