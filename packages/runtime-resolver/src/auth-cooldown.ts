// The auth-profile cooldown state machine of OpenClaw 2026.9.6
// (`auth-profiles/usage-failure-state.ts`, `usage-state.ts`), pure: stats in,
// stats out, the clock passed in. Owns: the backoff ladders (from
// `auth.cooldowns`, whose defaults are OpenClaw's), the failure window, "an
// active window is never extended", model- vs profile-scoped cooldowns,
// clearing expired windows, success. Does not own: storing the stats
// (auth-state.ts) or choosing a profile (auth-profiles.ts).
import { AUTH_COOLDOWN_DEFAULTS, type KernelConfig } from "@agent-kernel/config";
import type { FailoverReason } from "./classify-error.ts";

/** Per-profile usage and failure state; every field optional, timestamps in ms. */
export interface ProfileUsageStats {
  readonly lastUsed?: number;
  readonly lastFailureAt?: number;
  readonly errorCount?: number;
  readonly failureCounts?: Readonly<Partial<Record<FailoverReason, number>>>;
  readonly cooldownUntil?: number;
  readonly cooldownReason?: FailoverReason;
  /** Set for model-scoped reasons: a sibling model on the same profile stays usable. */
  readonly cooldownModel?: string;
  readonly disabledUntil?: number;
  readonly disabledReason?: "billing" | "auth_permanent";
  /** A provider-reported window (e.g. a subscription reset). */
  readonly blockedUntil?: number;
  readonly blockedReason?: string;
  readonly blockedModel?: string;
  readonly blockedScope?: "model" | "profile";
}

export type CooldownConfig = KernelConfig["auth"]["cooldowns"];

export const DEFAULT_COOLDOWNS: CooldownConfig = {
  ...AUTH_COOLDOWN_DEFAULTS,
  transientSeconds: [...AUTH_COOLDOWN_DEFAULTS.transientSeconds],
};

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** rate_limit, timeout and model_not_found cool down one model; the rest the whole profile. */
export function isModelScopedCooldownReason(reason: FailoverReason | undefined): boolean {
  return reason === "rate_limit" || reason === "timeout" || reason === "model_not_found";
}

/** Providers that manage their own cooldowns (OpenRouter, Kilo Code): never cooled down here. */
export function isCooldownBypassedForProvider(provider: string | undefined): boolean {
  const id = (provider ?? "").trim().toLowerCase();
  return id === "openrouter" || id === "kilocode";
}

function cappedExponential(count: number, baseMs: number, maxMs: number): number {
  const n = Math.max(1, count);
  const base = Math.max(1, baseMs);
  const max = Math.max(base, maxMs);
  const maxExponent = Math.max(0, Math.ceil(Math.log2(max / base)));
  return Math.min(max, base * 2 ** Math.min(n - 1, maxExponent));
}

function transientCooldownMs(errorCount: number, ladder: readonly number[]): number {
  const step = Math.min(Math.max(1, errorCount), ladder.length) - 1;
  return (ladder[step] ?? ladder.at(-1) ?? 30) * SECOND;
}

const isTimestamp = (value: number | undefined): value is number =>
  typeof value === "number" && Number.isFinite(value) && value > 0;

function isBlockScopedToDifferentModel(
  stats: ProfileUsageStats,
  forModel: string | null | undefined,
): boolean {
  return Boolean(
    (forModel === null || forModel) &&
      stats.blockedScope === "model" &&
      stats.blockedModel &&
      (forModel === null || stats.blockedModel !== forModel),
  );
}

/**
 * When the profile becomes usable again (the latest active window), or null.
 * `forModel` undefined: any window counts; a model id: windows scoped to
 * other models are ignored; null: model-scoped cooldowns are ignored.
 */
export function resolveProfileUnusableUntil(
  stats: ProfileUsageStats,
  forModel?: string | null,
): number | null {
  const values = [
    isBlockScopedToDifferentModel(stats, forModel) ? undefined : stats.blockedUntil,
    forModel === null && isModelScopedCooldownReason(stats.cooldownReason) && stats.cooldownModel
      ? undefined
      : stats.cooldownUntil,
    stats.disabledUntil,
  ].filter(isTimestamp);
  return values.length > 0 ? Math.max(...values) : null;
}

function isActive(until: number | undefined, now: number): boolean {
  return isTimestamp(until) && now < until;
}

/** True when the profile may not be used for `forModel` at `now`. */
export function isProfileInCooldown(
  stats: ProfileUsageStats | undefined,
  now: number,
  forModel?: string | null,
  provider?: string,
): boolean {
  if (!stats || isCooldownBypassedForProvider(provider)) return false;
  const scopedElsewhere =
    (forModel === null || Boolean(forModel)) &&
    isModelScopedCooldownReason(stats.cooldownReason) &&
    Boolean(stats.cooldownModel) &&
    (forModel === null || stats.cooldownModel !== forModel);
  const blockedForModel =
    !isBlockScopedToDifferentModel(stats, forModel) && isActive(stats.blockedUntil, now);
  if (scopedElsewhere && !blockedForModel && !isActive(stats.disabledUntil, now)) return false;
  const until = resolveProfileUnusableUntil(stats, forModel);
  return until !== null && now < until;
}

/**
 * The stats after one failure at `now` (OpenClaw's computeNextProfileUsageStats):
 * counters reset after the failure window or once the last window expired
 * (the rate-limit count is kept); billing and auth_permanent disable the
 * whole profile with doubling backoff; rate_limit cools down with doubling
 * backoff; anything else walks the transient ladder. An active window is
 * never extended.
 */
export function computeNextProfileUsageStats(params: {
  existing: ProfileUsageStats;
  now: number;
  reason: FailoverReason;
  modelId?: string | undefined;
  cooldowns?: CooldownConfig | undefined;
}): ProfileUsageStats {
  const { existing, now, reason, modelId } = params;
  const c = params.cooldowns ?? DEFAULT_COOLDOWNS;
  if (
    reason === "rate_limit" &&
    existing.blockedReason === "subscription_limit" &&
    !isBlockScopedToDifferentModel(existing, modelId ?? null) &&
    isActive(existing.blockedUntil, now)
  ) {
    return existing;
  }
  const windowExpired =
    isTimestamp(existing.lastFailureAt) && now - existing.lastFailureAt > c.failureWindowHours * HOUR;
  const unusableUntil = resolveProfileUnusableUntil(existing);
  const reset = windowExpired || (unusableUntil !== null && now >= unusableUntil);
  const errorCount = (reset ? 0 : (existing.errorCount ?? 0)) + 1;
  const keptRateLimit = existing.failureCounts?.rate_limit;
  const failureCounts: Partial<Record<FailoverReason, number>> = reset
    ? keptRateLimit
      ? { rate_limit: keptRateLimit }
      : {}
    : { ...existing.failureCounts };
  failureCounts[reason] = (failureCounts[reason] ?? 0) + 1;
  const next: { -readonly [K in keyof ProfileUsageStats]: ProfileUsageStats[K] } = {
    ...existing,
    errorCount,
    failureCounts,
    lastFailureAt: now,
  };
  const keepActive = (existingUntil: number | undefined, durationMs: number) =>
    isTimestamp(existingUntil) && existingUntil > now
      ? existingUntil
      : now + Math.max(1, Math.floor(durationMs));
  if (reason === "billing" || reason === "auth_permanent") {
    const [base, max] =
      reason === "billing"
        ? [c.billingBaseMinutes * MINUTE, c.billingMaxHours * HOUR]
        : [c.authPermanentBaseMinutes * MINUTE, c.authPermanentMaxHours * HOUR];
    next.disabledUntil = keepActive(
      existing.disabledUntil,
      cappedExponential(failureCounts[reason] ?? 1, base, max),
    );
    next.disabledReason = reason;
    return next;
  }
  const backoff =
    reason === "rate_limit"
      ? cappedExponential(
          failureCounts.rate_limit ?? 1,
          c.rateLimitBaseSeconds * SECOND,
          c.rateLimitMaxHours * HOUR,
        )
      : transientCooldownMs(errorCount, c.transientSeconds);
  next.cooldownUntil = keepActive(existing.cooldownUntil, backoff);
  next.cooldownReason = reason;
  const scoped = isModelScopedCooldownReason(reason);
  if (isTimestamp(existing.cooldownUntil) && existing.cooldownUntil > now) {
    if (existing.cooldownModel && modelId && existing.cooldownModel !== modelId) delete next.cooldownModel;
    else if (scoped && !modelId && existing.cooldownModel) delete next.cooldownModel;
    else if (!scoped) delete next.cooldownModel;
    else if (existing.cooldownModel !== undefined) next.cooldownModel = existing.cooldownModel;
  } else if (scoped && modelId !== undefined) {
    next.cooldownModel = modelId;
  } else {
    delete next.cooldownModel;
  }
  return next;
}

/**
 * Clears windows that have expired at `now`; when nothing is left active the
 * error counters reset (the rate-limit count is kept, so rate limits keep
 * doubling across half-open probes). Returns the same object when nothing changed.
 */
export function clearExpiredCooldowns(stats: ProfileUsageStats, now: number): ProfileUsageStats {
  const expired = (until: number | undefined) => isTimestamp(until) && now >= until;
  const cooldownExpired = expired(stats.cooldownUntil);
  const blockedExpired = expired(stats.blockedUntil);
  const disabledExpired = expired(stats.disabledUntil);
  if (!cooldownExpired && !blockedExpired && !disabledExpired) return stats;
  const next: { -readonly [K in keyof ProfileUsageStats]: ProfileUsageStats[K] } = { ...stats };
  if (cooldownExpired) {
    delete next.cooldownUntil;
    delete next.cooldownReason;
    delete next.cooldownModel;
  }
  if (blockedExpired) {
    delete next.blockedUntil;
    delete next.blockedReason;
    delete next.blockedModel;
    delete next.blockedScope;
  }
  if (disabledExpired) {
    delete next.disabledUntil;
    delete next.disabledReason;
  }
  if (resolveProfileUnusableUntil(next) === null) {
    next.errorCount = 0;
    const rateLimit = stats.failureCounts?.rate_limit;
    if (rateLimit) next.failureCounts = { rate_limit: rateLimit };
    else delete next.failureCounts;
  }
  return next;
}

/** A success: `lastUsed` is set and every counter and window is cleared. */
export function markProfileUsed(stats: ProfileUsageStats, now: number): ProfileUsageStats {
  return {
    lastUsed: now,
    errorCount: 0,
    ...(stats.lastFailureAt ? { lastFailureAt: stats.lastFailureAt } : {}),
  };
}
