// What every turn of an agent reads from the config, worked out once per config object and agent: the merged
// agent config (`resolveAgentConfig` merges the agent's entry over the defaults, a new object each call), the
// turn limits' values and the prompt facts the config decides (reasoning shown, model aliases). A config is
// immutable (a reload is a new object), so a warm turn reads them instead of merging and sorting again. Does
// not own: what the values mean (turn-limits.ts, system-prompt.ts) or anything that changes between turns.
import { type KernelConfig, resolveAgentConfig } from "@agent-kernel/config";
import { type KernelPromptInput, kernelPromptSettings } from "./system-prompt.ts";
import { resolveTurnLimits, type TurnLimitValues } from "./turn-limits.ts";

type PromptSettings = Pick<KernelPromptInput, "reasoningLevel" | "modelAliases">;

interface AgentSettings {
  readonly agentConfig: ReturnType<typeof resolveAgentConfig>;
  promptSettings: PromptSettings | undefined;
  /** The turn limits with the config's stall timeout (a caller's own timeout is resolved per turn). */
  limits: TurnLimitValues | undefined;
}

const settingsByConfig = new WeakMap<KernelConfig, Map<string, AgentSettings>>();

function settingsFor(config: KernelConfig, agentId: string): AgentSettings {
  let byAgent = settingsByConfig.get(config);
  if (byAgent === undefined) {
    byAgent = new Map();
    settingsByConfig.set(config, byAgent);
  }
  let settings = byAgent.get(agentId);
  if (settings === undefined) {
    settings = {
      agentConfig: resolveAgentConfig(config, agentId),
      promptSettings: undefined,
      limits: undefined,
    };
    byAgent.set(agentId, settings);
  }
  return settings;
}

/** `resolveAgentConfig(config, agentId)`, shared by the agent's turns (read it, never change it). */
export function agentConfigOf(config: KernelConfig, agentId: string): ReturnType<typeof resolveAgentConfig> {
  return settingsFor(config, agentId).agentConfig;
}

/** `resolveTurnLimits(config, agentId, stallTimeoutMs)`, shared by the agent's turns (read them, never change them). */
export function turnLimitValuesOf(
  config: KernelConfig,
  agentId: string,
  stallTimeoutMs: number | undefined,
): TurnLimitValues {
  // A caller's own stall timeout may differ every turn: resolved each time, not kept.
  if (stallTimeoutMs !== undefined) return resolveTurnLimits(config, agentId, stallTimeoutMs);
  const settings = settingsFor(config, agentId);
  settings.limits ??= resolveTurnLimits(config, agentId);
  return settings.limits;
}

/** `kernelPromptSettings(config, agentId)`, shared by the agent's turns. */
export function promptSettingsOf(config: KernelConfig, agentId: string): PromptSettings {
  const settings = settingsFor(config, agentId);
  settings.promptSettings ??= kernelPromptSettings(config, agentId);
  return settings.promptSettings;
}
