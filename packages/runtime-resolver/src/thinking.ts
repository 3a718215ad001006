// Thinking levels: names and aliases, ranks, per-model support and the
// fallback level after a provider rejects one (OpenClaw 2026.9.6
// `thinking.shared.ts`, `embedded-agent-helpers/thinking.ts`). Owns: level
// normalisation, clamping to what a pi-ai model supports, the resolution
// order for a run. Does not own: sending the level to the provider (pi-ai).
import { THINKING_LEVELS } from "@agent-kernel/config";
import { type Api, getSupportedThinkingLevels, type Model } from "@earendil-works/pi-ai";
import { isReasoningConstraintMessage } from "./classify-error.ts";

/** The level names, from the config schema (one list for the file and the resolver). */
export const THINK_LEVELS = THINKING_LEVELS;
export type ThinkLevel = (typeof THINK_LEVELS)[number];

export const THINK_LEVEL_RANKS: Readonly<Record<ThinkLevel, number>> = {
  off: 0,
  minimal: 10,
  low: 20,
  medium: 30,
  high: 40,
  adaptive: 30,
  xhigh: 60,
  max: 70,
  ultra: 80,
};

const ALIASES: Readonly<Record<string, ThinkLevel>> = {
  off: "off",
  none: "off",
  on: "low",
  enable: "low",
  enabled: "low",
  min: "minimal",
  minimal: "minimal",
  think: "minimal",
  low: "low",
  thinkhard: "low",
  "think-hard": "low",
  think_hard: "low",
  mid: "medium",
  med: "medium",
  medium: "medium",
  thinkharder: "medium",
  "think-harder": "medium",
  harder: "medium",
  high: "high",
  ultrathink: "high",
  thinkhardest: "high",
  highest: "high",
};

/** A user-written level (`"Think Hard"`, `"x-high"`, `"auto"`) → the canonical level, or undefined. */
export function normalizeThinkLevel(raw: string | undefined | null): ThinkLevel | undefined {
  const key = typeof raw === "string" ? raw.trim().toLowerCase() : "";
  if (!key) return undefined;
  const collapsed = key.replace(/[\s_-]+/g, "");
  if (collapsed === "adaptive" || collapsed === "auto") return "adaptive";
  if (collapsed === "max") return "max";
  if (collapsed === "ultra") return "ultra";
  if (collapsed === "xhigh" || collapsed === "extrahigh") return "xhigh";
  return Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
}

/** `default`, `inherit`, `clear`, `reset`, `unpin`: values that clear a session's thinking override. */
export function isClearThinkingDirective(raw: string | undefined | null): boolean {
  const key = typeof raw === "string" ? raw.trim().toLowerCase() : "";
  return ["default", "inherit", "inherited", "clear", "reset", "unpin"].includes(key);
}

function supportedValues(raw: string): string[] {
  const fragment = raw.match(/supported values(?: are)?:\s*([^\n.]+)/i)?.[1];
  if (!fragment) return [];
  const quoted = Array.from(fragment.matchAll(/['"]([^'"]+)['"]/g), (match) => match[1] ?? "");
  const items =
    quoted.length > 0
      ? quoted
      : fragment.split(/,|\band\b/gi).map((entry) => entry.replace(/^[^a-zA-Z]+|[^a-zA-Z]+$/g, ""));
  return items.map((item) => item.trim()).filter(Boolean);
}

/**
 * The level to retry with after a provider rejected the attempted one, or
 * undefined when the message is not about thinking or nothing is left.
 * `attempted` holds every level tried on this model and profile.
 */
export function pickFallbackThinkingLevel(params: {
  message: string | undefined;
  attempted: ReadonlySet<string>;
}): ThinkLevel | undefined {
  const raw = params.message?.trim() ?? "";
  const requiresReasoning = isReasoningConstraintMessage(raw);
  const namesThinkingParam =
    /(?<![\w./-])(?:think(?:ing)?(?:[._]|\s+)(?:value|level|budget)|reasoning(?:[._]|\s+)(?:effort|level|budget))(?![\w/-]|\.[\w/-])/i.test(
      raw,
    );
  if (!requiresReasoning && !namesThinkingParam) return undefined;
  if (requiresReasoning && !params.attempted.has("minimal")) return "minimal";
  const supported = supportedValues(raw);
  if (supported.length === 0)
    return /not supported/i.test(raw) && !params.attempted.has("off") ? "off" : undefined;
  for (const entry of supported) {
    const level = normalizeThinkLevel(entry);
    if (level && !params.attempted.has(level)) return level;
  }
  return undefined;
}

/** The levels a pi-ai model accepts: `off` only without reasoning; xhigh/max only when the model maps them. */
export function supportedThinkLevels(model: Model<Api>): ThinkLevel[] {
  return getSupportedThinkingLevels(model);
}

/**
 * The closest level the model supports: the level itself, else the highest
 * supported non-off level ranked at or below it, else the lowest non-off
 * level, else `off` (OpenClaw's resolveSupportedThinkingLevelFromProfile).
 */
export function clampThinkLevel(level: ThinkLevel, supported: readonly ThinkLevel[]): ThinkLevel {
  if (supported.includes(level)) return level;
  const ranked = [...supported].sort((a, b) => THINK_LEVEL_RANKS[b] - THINK_LEVEL_RANKS[a]);
  const onLevels = ranked.filter((entry) => entry !== "off");
  return (
    onLevels.find((entry) => THINK_LEVEL_RANKS[entry] <= THINK_LEVEL_RANKS[level]) ?? onLevels.at(-1) ?? "off"
  );
}

export type ThinkingSource = "message" | "session" | "agent" | "defaults" | "model-default";

export interface ResolvedThinking {
  readonly level: ThinkLevel;
  /** What the caller asked for before clamping to the model. */
  readonly requested: ThinkLevel;
  readonly source: ThinkingSource;
  /** Set when the model does not support the requested level and a lower one is used. */
  readonly downgradedFrom?: ThinkLevel;
}

/**
 * The run's thinking level: a one-shot per-message level, then the session's,
 * the agent's `thinkingDefault`, `agents.defaults.thinkingDefault`, then the
 * model default (`medium`-ranked for reasoning models, else `off`), clamped to
 * what the model supports. `strict` (the CLI's explicit request) throws
 * instead of downgrading.
 */
export function resolveThinking(params: {
  model: Model<Api>;
  message?: ThinkLevel | undefined;
  session?: ThinkLevel | undefined;
  agent?: ThinkLevel | undefined;
  defaults?: ThinkLevel | undefined;
  strict?: boolean | undefined;
}): ResolvedThinking {
  const supported = supportedThinkLevels(params.model);
  const chosen: [ThinkLevel, ThinkingSource] | undefined =
    params.message !== undefined
      ? [params.message, "message"]
      : params.session !== undefined
        ? [params.session, "session"]
        : params.agent !== undefined
          ? [params.agent, "agent"]
          : params.defaults !== undefined
            ? [params.defaults, "defaults"]
            : undefined;
  if (!chosen) {
    const level = params.model.reasoning ? clampThinkLevel("medium", supported) : "off";
    return { level, requested: level, source: "model-default" };
  }
  const [requested, source] = chosen;
  const level = clampThinkLevel(requested, supported);
  if (level === requested) return { level, requested, source };
  if (params.strict) {
    throw new Error(
      `thinking level "${requested}" is not supported by ${params.model.provider}/${params.model.id} (supported: ${supported.join(", ")})`,
    );
  }
  return { level, requested, source, downgradedFrom: requested };
}
