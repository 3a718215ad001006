// The session metadata the kernel owns (openclaw-behaviors §13) and the pure rules over it: applying a patch
// and what a reset keeps. Owns: the `SessionMeta` shape and `resetSessionMeta` (OpenClaw 2026.9.6
// `session-reset-service` + `resolveResetPreservedSelection`). Does not own: storage (sessions.ts).

export type OverrideSource = "user" | "auto";

export interface SessionOrigin {
  readonly provider?: string;
  readonly surface?: string;
  readonly chatType?: string;
  readonly from?: string;
  readonly to?: string;
  readonly accountId?: string;
  readonly threadId?: string;
}

export interface DeliveryContext {
  readonly channel?: string;
  readonly to?: string;
  readonly accountId?: string;
  readonly threadId?: string;
}

/** Every field is optional; times are epoch milliseconds, as in OpenClaw's `SessionEntry`. */
export interface SessionMeta {
  // identity and time
  readonly sessionFile?: string;
  readonly sessionStartedAt?: number;
  readonly lastInteractionAt?: number;
  readonly lastActivityAt?: number;
  readonly label?: string;
  readonly chatType?: string;
  readonly channel?: string;
  readonly origin?: SessionOrigin;
  // lineage
  readonly spawnedBy?: string;
  readonly parentSessionKey?: string;
  readonly spawnDepth?: number;
  readonly subagentRole?: string;
  readonly subagentControlScope?: string;
  readonly inheritedToolAllow?: readonly string[];
  readonly inheritedToolDeny?: readonly string[];
  readonly forkedFromParent?: boolean;
  // run flags
  readonly systemSent?: boolean;
  readonly abortedLastRun?: boolean;
  readonly abortCutoffMessageSid?: string;
  readonly abortCutoffTimestamp?: number;
  // levels
  readonly thinkingLevel?: string;
  readonly verboseLevel?: string;
  readonly reasoningLevel?: string;
  readonly elevatedLevel?: string;
  readonly traceLevel?: string;
  readonly fastMode?: boolean;
  readonly responseUsage?: string;
  readonly sendPolicy?: string;
  readonly groupActivation?: string;
  // model selection
  readonly providerOverride?: string;
  readonly modelOverride?: string;
  /** `default` (2026.9.x) marks "explicitly back to the configured default". */
  readonly modelOverrideSource?: OverrideSource | "default";
  readonly modelOverrideFallbackOriginProvider?: string;
  readonly modelOverrideFallbackOriginModel?: string;
  readonly liveModelSwitchPending?: boolean;
  readonly agentRuntimeOverride?: string;
  readonly agentHarnessId?: string;
  // auth
  readonly authProfileOverride?: string;
  readonly authProfileOverrideSource?: OverrideSource;
  readonly authProfileOverrideCompactionCount?: number;
  // queue
  readonly queueMode?: string;
  readonly queueDebounceMs?: number;
  readonly queueCap?: number;
  readonly queueDrop?: string;
  // usage and runtime
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly totalTokens?: number;
  readonly totalTokensFresh?: boolean;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  readonly estimatedCostUsd?: number;
  readonly modelProvider?: string;
  readonly model?: string;
  readonly contextTokens?: number;
  readonly compactionCount?: number;
  readonly memoryFlushAt?: number;
  readonly memoryFlushCompactionCount?: number;
  // fallback notice state
  readonly fallbackNoticeSelectedModel?: string;
  readonly fallbackNoticeActiveModel?: string;
  readonly fallbackNoticeReason?: string;
  // other
  readonly skillsSnapshot?: unknown;
  readonly cliSessionIds?: Readonly<Record<string, string>>;
  readonly cliSessionBindings?: Readonly<Record<string, unknown>>;
  readonly deliveryContext?: DeliveryContext;
  readonly lastChannel?: string;
  readonly lastTo?: string;
}

/** A patch: a value sets the field, `null` removes it, an absent key leaves it alone. */
export type SessionMetaPatch = { readonly [K in keyof SessionMeta]?: SessionMeta[K] | null };

export function applySessionMetaPatch(meta: SessionMeta, patch: SessionMetaPatch): SessionMeta {
  const next: Record<string, unknown> = { ...meta };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next as SessionMeta;
}

/** Fields a reset carries over unchanged (OpenClaw 2026.9.6 `session-reset-service`, the §13 subset). */
const KEPT_ON_RESET = [
  "thinkingLevel",
  "fastMode",
  "verboseLevel",
  "traceLevel",
  "reasoningLevel",
  "elevatedLevel",
  "responseUsage",
  "groupActivation",
  "chatType",
  "sendPolicy",
  "queueMode",
  "queueDebounceMs",
  "queueCap",
  "queueDrop",
  "spawnedBy",
  "inheritedToolAllow",
  "inheritedToolDeny",
  "parentSessionKey",
  "forkedFromParent",
  "spawnDepth",
  "subagentRole",
  "subagentControlScope",
  "label",
] as const satisfies readonly (keyof SessionMeta)[];

/**
 * The metadata of the fresh session a reset (`/new`, `/reset`, daily or idle) starts: levels, queue settings,
 * lineage and label carry over; user-sourced model and auth overrides carry over, auto-sourced ones (runtime
 * fallbacks, rate-limit rotations) are cleared; counters, run flags, usage and routes start again.
 */
export function resetSessionMeta(meta: SessionMeta, now: number): SessionMeta {
  const next: Record<string, unknown> = {};
  for (const key of KEPT_ON_RESET) {
    if (meta[key] !== undefined) next[key] = meta[key];
  }
  if (meta.modelOverrideSource === "default") next.modelOverrideSource = "default";
  if (modelOverrideSource(meta) === "user" && meta.modelOverride) {
    if (meta.providerOverride !== undefined) next.providerOverride = meta.providerOverride;
    next.modelOverride = meta.modelOverride;
    next.modelOverrideSource = "user";
    if (meta.agentRuntimeOverride !== undefined) next.agentRuntimeOverride = meta.agentRuntimeOverride;
  }
  if (authProfileOverrideSource(meta) === "user" && meta.authProfileOverride) {
    next.authProfileOverride = meta.authProfileOverride;
    next.authProfileOverrideSource = "user";
    if (meta.authProfileOverrideCompactionCount !== undefined) {
      next.authProfileOverrideCompactionCount = meta.authProfileOverrideCompactionCount;
    }
  }
  return {
    ...next,
    sessionStartedAt: now,
    systemSent: false,
    abortedLastRun: false,
    compactionCount: 0,
    inputTokens: 0,
    outputTokens: 0,
    totalTokens: 0,
    totalTokensFresh: true,
  };
}

/**
 * Where a model override came from. Entries written before the source was tracked count as `user` unless
 * they carry a fallback origin (then the runtime set them), as OpenClaw's `resolveSessionModelOverrideSource`.
 */
export function modelOverrideSource(meta: SessionMeta): OverrideSource | undefined {
  if (meta.modelOverrideSource === "default" || !meta.modelOverride?.trim()) return undefined;
  if (meta.modelOverrideSource === "user" || meta.modelOverrideSource === "auto")
    return meta.modelOverrideSource;
  const fallbackOrigin =
    Boolean(meta.modelOverrideFallbackOriginProvider?.trim()) &&
    Boolean(meta.modelOverrideFallbackOriginModel?.trim());
  return fallbackOrigin ? "auto" : "user";
}

/** Untracked auth pins count as `auto` when a compaction count was recorded with them (OpenClaw's rule). */
export function authProfileOverrideSource(meta: SessionMeta): OverrideSource | undefined {
  if (!meta.authProfileOverride?.trim()) return undefined;
  if (meta.authProfileOverrideSource !== undefined) return meta.authProfileOverrideSource;
  return typeof meta.authProfileOverrideCompactionCount === "number" ? "auto" : "user";
}
