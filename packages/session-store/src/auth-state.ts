// Auth-profile usage state (openclaw-behaviors §8): last use, failure counts per reason, cooldown, disabled and
// blocked windows, and the model a model-scoped cooldown applies to. Owns: storing it per {agentId, profileId}
// with optimistic concurrency (an updater re-applied to the fresh row). Does not own: the cooldown arithmetic
// or the rotation order (runtime-resolver).
import type { Kysely, Selectable } from "kysely";
import { SessionConflictError } from "./errors.ts";
import type { AuthProfileStateTable, ControlPlaneDatabase } from "./schema.ts";

/** OpenClaw's per-profile usage stats; times are epoch milliseconds. */
export interface AuthProfileStats {
  readonly lastUsed?: number;
  readonly lastFailureAt?: number;
  readonly errorCount: number;
  /** Failure count per failover reason (`rate_limit`, `billing`, `auth`, ...). */
  readonly failureCounts: Readonly<Record<string, number>>;
  readonly cooldownUntil?: number;
  readonly cooldownReason?: string;
  /** Set when the cooldown's reason is model-scoped (rate_limit, timeout, model_not_found): siblings stay usable. */
  readonly cooldownModel?: string;
  readonly disabledUntil?: number;
  readonly disabledReason?: string;
  /** A provider-reported window (a subscription reset). */
  readonly blockedUntil?: number;
}

export interface AuthProfileState extends AuthProfileStats {
  readonly agentId: string;
  readonly profileId: string;
  readonly version: number;
  readonly updatedAt: number;
}

/** Read-apply-write attempts of `update` before `SessionConflictError`. */
export const AUTH_UPDATE_MAX_ATTEMPTS = 5;

export const EMPTY_AUTH_PROFILE_STATS: AuthProfileStats = { errorCount: 0, failureCounts: {} };

export interface AuthStateApi {
  get(agentId: string, profileId: string): Promise<AuthProfileState | undefined>;
  list(agentId: string): Promise<AuthProfileState[]>;
  /** Creates the row from `EMPTY_AUTH_PROFILE_STATS` when missing; retries on a concurrent change. */
  update(
    agentId: string,
    profileId: string,
    updater: (current: AuthProfileStats) => AuthProfileStats,
    options?: { readonly now?: number; readonly maxAttempts?: number },
  ): Promise<AuthProfileState>;
  delete(agentId: string, profileId: string): Promise<boolean>;
}

export class KyselyAuthState implements AuthStateApi {
  readonly #db: Kysely<ControlPlaneDatabase>;

  constructor(db: Kysely<ControlPlaneDatabase>) {
    this.#db = db;
  }

  async get(agentId: string, profileId: string): Promise<AuthProfileState | undefined> {
    const row = await this.#db
      .selectFrom("auth_profile_state")
      .selectAll()
      .where("agent_id", "=", agentId)
      .where("profile_id", "=", profileId)
      .executeTakeFirst();
    return row === undefined ? undefined : toAuthProfileState(row);
  }

  async list(agentId: string): Promise<AuthProfileState[]> {
    const rows = await this.#db
      .selectFrom("auth_profile_state")
      .selectAll()
      .where("agent_id", "=", agentId)
      .orderBy("profile_id")
      .execute();
    return rows.map(toAuthProfileState);
  }

  async update(
    agentId: string,
    profileId: string,
    updater: (current: AuthProfileStats) => AuthProfileStats,
    options: { readonly now?: number; readonly maxAttempts?: number } = {},
  ): Promise<AuthProfileState> {
    const maxAttempts = Math.max(1, options.maxAttempts ?? AUTH_UPDATE_MAX_ATTEMPTS);
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const now = options.now ?? Date.now();
      const current = await this.get(agentId, profileId);
      const next = updater(current ?? EMPTY_AUTH_PROFILE_STATS);
      const columns = toAuthColumns(next, now);
      if (current === undefined) {
        const inserted = await this.#db
          .insertInto("auth_profile_state")
          .values({ agent_id: agentId, profile_id: profileId, version: 1, ...columns })
          .onConflict((conflict) => conflict.doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) {
          return { ...next, agentId, profileId, version: 1, updatedAt: now };
        }
        continue;
      }
      const updated = await this.#db
        .updateTable("auth_profile_state")
        .set({ ...columns, version: current.version + 1 })
        .where("agent_id", "=", agentId)
        .where("profile_id", "=", profileId)
        .where("version", "=", current.version)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 1) {
        return { ...next, agentId, profileId, version: current.version + 1, updatedAt: now };
      }
    }
    throw authConflict(agentId, profileId, maxAttempts);
  }

  async delete(agentId: string, profileId: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom("auth_profile_state")
      .where("agent_id", "=", agentId)
      .where("profile_id", "=", profileId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

export function toAuthColumns(stats: AuthProfileStats, now: number) {
  return {
    last_used: stats.lastUsed ?? null,
    last_failure_at: stats.lastFailureAt ?? null,
    error_count: stats.errorCount,
    failure_counts: JSON.stringify(stats.failureCounts),
    cooldown_until: stats.cooldownUntil ?? null,
    cooldown_reason: stats.cooldownReason ?? null,
    cooldown_model: stats.cooldownModel ?? null,
    disabled_until: stats.disabledUntil ?? null,
    disabled_reason: stats.disabledReason ?? null,
    blocked_until: stats.blockedUntil ?? null,
    updated_at: now,
  };
}

export function toAuthProfileState(row: Selectable<AuthProfileStateTable>): AuthProfileState {
  return {
    agentId: row.agent_id,
    profileId: row.profile_id,
    version: row.version,
    updatedAt: row.updated_at,
    errorCount: row.error_count,
    failureCounts: JSON.parse(row.failure_counts) as Record<string, number>,
    ...(row.last_used === null ? {} : { lastUsed: row.last_used }),
    ...(row.last_failure_at === null ? {} : { lastFailureAt: row.last_failure_at }),
    ...(row.cooldown_until === null ? {} : { cooldownUntil: row.cooldown_until }),
    ...(row.cooldown_reason === null ? {} : { cooldownReason: row.cooldown_reason }),
    ...(row.cooldown_model === null ? {} : { cooldownModel: row.cooldown_model }),
    ...(row.disabled_until === null ? {} : { disabledUntil: row.disabled_until }),
    ...(row.disabled_reason === null ? {} : { disabledReason: row.disabled_reason }),
    ...(row.blocked_until === null ? {} : { blockedUntil: row.blocked_until }),
  };
}

export function authConflict(agentId: string, profileId: string, attempts: number): SessionConflictError {
  return new SessionConflictError(
    `auth profile ${agentId}/${profileId} changed concurrently ${attempts} times in a row`,
  );
}
