// Per-agent views of a validated config. Owns: which agents exist, which one
// is the default, and an agent's settings merged over `agents.defaults`.
// Does not own: paths, model or thinking resolution for a run (runtime-resolver).
import { DEFAULT_AGENT_ID } from "./defaults.ts";
import type { KernelConfig } from "./schema.ts";
import type { AgentDefaults, AgentEntry } from "./schema-agents.ts";

/** The configured agent ids; a config with no list has the one agent "main". */
export function listAgentIds(config: KernelConfig): string[] {
  return config.agents.list.length > 0 ? config.agents.list.map((agent) => agent.id) : [DEFAULT_AGENT_ID];
}

/** The agent marked `default: true`, else the first listed, else "main". */
export function defaultAgentId(config: KernelConfig): string {
  const marked = config.agents.list.find((agent) => agent.default);
  return (marked ?? config.agents.list[0])?.id ?? DEFAULT_AGENT_ID;
}

/** An agent's effective settings: its entry over `agents.defaults`. */
export type AgentConfig = AgentDefaults &
  Pick<AgentEntry, "id" | "name" | "identity"> & {
    /** True when the agent is the config's default agent. */
    readonly isDefault: boolean;
  };

const NESTED = [
  "blockStreamingChunk",
  "blockStreamingCoalesce",
  "sandbox",
  "subagents",
  "memorySearch",
] as const;

/**
 * Merges one agent over the defaults: scalars and lists replace, the nested
 * sections listed in NESTED merge key by key, `model` replaces as a whole
 * (an agent's own `fallbacks`, even `[]`, replace the default ones).
 * Returns undefined for an unknown agent id (ids are compared lower-cased).
 */
export function resolveAgentConfig(config: KernelConfig, agentId: string): AgentConfig | undefined {
  const id = agentId.toLowerCase();
  const entry = config.agents.list.find((agent) => agent.id === id);
  if (!entry && !(config.agents.list.length === 0 && id === DEFAULT_AGENT_ID)) return undefined;
  const defaults = config.agents.defaults;
  const merged: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(entry ?? {})) {
    if (value === undefined || key === "default") continue;
    merged[key] = (NESTED as readonly string[]).includes(key)
      ? { ...(defaults[key as (typeof NESTED)[number]] as object), ...stripUndefined(value as object) }
      : value;
  }
  merged.id = id;
  merged.isDefault = defaultAgentId(config) === id;
  return merged as AgentConfig;
}

function stripUndefined(value: object): object {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined));
}
