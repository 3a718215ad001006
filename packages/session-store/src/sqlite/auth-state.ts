// The SQLite implementation of the auth-state API (read on every turn, written after each attempt): every
// call as a better-sqlite3 statement prepared once per store, with the same rules and errors as
// `KyselyAuthState` (auth-state.ts, the PostgreSQL path). Owns: those statements. Does not own: the stats'
// shape or the cooldown arithmetic.
//
// `update` reads, applies the (synchronous) updater and writes without yielding, so updates in this process
// never race each other; the version column still guards against another process, with the same retries.
import type Database from "better-sqlite3";
import type { Selectable } from "kysely";
import {
  AUTH_UPDATE_MAX_ATTEMPTS,
  type AuthProfileState,
  type AuthProfileStats,
  type AuthStateApi,
  authConflict,
  EMPTY_AUTH_PROFILE_STATS,
  toAuthColumns,
  toAuthProfileState,
} from "../auth-state.ts";
import type { AuthProfileStateTable } from "../schema.ts";

type AuthRow = Selectable<AuthProfileStateTable>;
type AuthWrite = ReturnType<typeof toAuthColumns> & {
  agent_id: string;
  profile_id: string;
  version: number;
};

const STAT_COLUMNS = [
  "last_used",
  "last_failure_at",
  "error_count",
  "failure_counts",
  "cooldown_until",
  "cooldown_reason",
  "cooldown_model",
  "disabled_until",
  "disabled_reason",
  "blocked_until",
  "updated_at",
] as const;

export class SqliteAuthState implements AuthStateApi {
  readonly #one: Database.Statement<[string, string], AuthRow>;
  readonly #byAgent: Database.Statement<[string], AuthRow>;
  readonly #insert: Database.Statement<[AuthWrite]>;
  /** Binds `version` as the new version; the row must be at `version - 1`. */
  readonly #updateIfVersion: Database.Statement<[AuthWrite]>;
  readonly #delete: Database.Statement<[string, string]>;

  constructor(raw: Database.Database) {
    this.#one = raw.prepare("SELECT * FROM auth_profile_state WHERE agent_id = ? AND profile_id = ?");
    this.#byAgent = raw.prepare("SELECT * FROM auth_profile_state WHERE agent_id = ? ORDER BY profile_id");
    const columns = ["agent_id", "profile_id", "version", ...STAT_COLUMNS];
    this.#insert = raw.prepare(
      `INSERT INTO auth_profile_state (${columns.join(", ")}) ` +
        `VALUES (${columns.map((c) => `@${c}`).join(", ")}) ON CONFLICT DO NOTHING`,
    );
    this.#updateIfVersion = raw.prepare(
      `UPDATE auth_profile_state SET ${STAT_COLUMNS.map((c) => `${c} = @${c}`).join(", ")}, version = @version ` +
        "WHERE agent_id = @agent_id AND profile_id = @profile_id AND version = @version - 1",
    );
    this.#delete = raw.prepare("DELETE FROM auth_profile_state WHERE agent_id = ? AND profile_id = ?");
  }

  async get(agentId: string, profileId: string): Promise<AuthProfileState | undefined> {
    const row = this.#one.get(agentId, profileId);
    return row === undefined ? undefined : toAuthProfileState(row);
  }

  async list(agentId: string): Promise<AuthProfileState[]> {
    return this.#byAgent.all(agentId).map(toAuthProfileState);
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
      const row = this.#one.get(agentId, profileId);
      const current = row === undefined ? undefined : toAuthProfileState(row);
      const next = updater(current ?? EMPTY_AUTH_PROFILE_STATS);
      const version = (current?.version ?? 0) + 1;
      const values: AuthWrite = {
        ...toAuthColumns(next, now),
        agent_id: agentId,
        profile_id: profileId,
        version,
      };
      const written = (current === undefined ? this.#insert : this.#updateIfVersion).run(values).changes;
      if (written === 1) return { ...next, agentId, profileId, version, updatedAt: now };
    }
    throw authConflict(agentId, profileId, maxAttempts);
  }

  async delete(agentId: string, profileId: string): Promise<boolean> {
    return this.#delete.run(agentId, profileId).changes > 0;
  }
}
