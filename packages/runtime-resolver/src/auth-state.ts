// Persisted auth-profile usage: the bridge between the pure cooldown state
// machine and a store every entry point shares. Owns: the `AuthStateStore`
// interface (session-store's `store.auth` satisfies it), converting stored
// rows to and from ProfileUsageStats, recording a failure or a success
// atomically (read, clear expired windows, compute, write), and reading the
// usage an order needs. Does not own: SQL (session-store) or the arithmetic.

import type { AuthProfileStats } from "@agent-kernel/session-store";
import {
  type CooldownConfig,
  clearExpiredCooldowns,
  computeNextProfileUsageStats,
  markProfileUsed,
  type ProfileUsageStats,
} from "./auth-cooldown.ts";
import type { FailoverReason } from "./classify-error.ts";

/** The stored shape: session-store's per-profile usage stats (counters required, reasons as strings). */
export type StoredProfileStats = AuthProfileStats;

/** What the resolver needs of a store; `SessionStore["auth"]` satisfies it. */
export interface AuthStateStore {
  list(agentId: string): Promise<readonly (StoredProfileStats & { readonly profileId: string })[]>;
  /** Applies `updater` to the current row (an empty one when missing) atomically; retries on a concurrent change. */
  update(
    agentId: string,
    profileId: string,
    updater: (current: StoredProfileStats) => StoredProfileStats,
  ): Promise<unknown>;
}

export function fromStored(stored: StoredProfileStats): ProfileUsageStats {
  const out: Record<string, unknown> = {};
  for (const key of [
    "lastUsed",
    "lastFailureAt",
    "errorCount",
    "cooldownUntil",
    "cooldownReason",
    "cooldownModel",
    "disabledUntil",
    "disabledReason",
    "blockedUntil",
  ] as const) {
    if (stored[key] !== undefined) out[key] = stored[key];
  }
  if (Object.keys(stored.failureCounts).length > 0) out.failureCounts = { ...stored.failureCounts };
  return out as ProfileUsageStats;
}

export function toStored(stats: ProfileUsageStats): StoredProfileStats {
  const { blockedReason: _r, blockedModel: _m, blockedScope: _s, failureCounts, errorCount, ...rest } = stats;
  return { ...rest, errorCount: errorCount ?? 0, failureCounts: { ...(failureCounts ?? {}) } };
}

/** Every profile's usage for an agent, expired windows already cleared (as OpenClaw does on read). */
export async function loadProfileUsage(
  store: AuthStateStore,
  agentId: string,
  now: number,
): Promise<Record<string, ProfileUsageStats>> {
  const rows = await store.list(agentId);
  return Object.fromEntries(rows.map((row) => [row.profileId, clearExpiredCooldowns(fromStored(row), now)]));
}

/** Records one failure of a profile; returns the stats written. */
export async function recordProfileFailure(
  store: AuthStateStore,
  params: {
    agentId: string;
    profileId: string;
    reason: FailoverReason;
    now: number;
    modelId?: string | undefined;
    cooldowns?: CooldownConfig | undefined;
  },
): Promise<ProfileUsageStats> {
  let written: ProfileUsageStats = {};
  await store.update(params.agentId, params.profileId, (current) => {
    written = computeNextProfileUsageStats({
      existing: clearExpiredCooldowns(fromStored(current), params.now),
      now: params.now,
      reason: params.reason,
      modelId: params.modelId,
      cooldowns: params.cooldowns,
    });
    return toStored(written);
  });
  return written;
}

/** Records a successful call: last use set, counters and windows cleared. */
export async function recordProfileSuccess(
  store: AuthStateStore,
  params: { agentId: string; profileId: string; now: number },
): Promise<void> {
  await store.update(params.agentId, params.profileId, (current) =>
    toStored(markProfileUsed(fromStored(current), params.now)),
  );
}

/** An in-process store for single-process use and tests; session-store's is the shared one. */
export class InMemoryAuthStateStore implements AuthStateStore {
  readonly #rows = new Map<string, StoredProfileStats>();

  async list(agentId: string) {
    return [...this.#rows.entries()]
      .filter(([key]) => key.startsWith(`${agentId}\u0000`))
      .map(([key, stats]) => ({ ...stats, profileId: key.slice(agentId.length + 1) }));
  }

  async update(
    agentId: string,
    profileId: string,
    updater: (current: StoredProfileStats) => StoredProfileStats,
  ) {
    const key = `${agentId}\u0000${profileId}`;
    const next = updater(this.#rows.get(key) ?? { errorCount: 0, failureCounts: {} });
    this.#rows.set(key, next);
    return next;
  }
}
