// The SQLite implementation of the sessions API: every call as better-sqlite3 statements prepared once per
// store, with the same rules and errors as `KyselySessions` (sessions.ts, the PostgreSQL path). Owns: those
// statements, and doing a patch's read, merge and compare-and-set write without yielding when the patch is
// an object or a synchronous updater. Does not own: the metadata rules (session-meta.ts).
//
// Why synchronous: Kysely's SQLite connection lock wakes every waiter on each release, so hundreds of turns
// queueing their session writes behind it cost time quadratic in the queue. A statement here runs inside the
// call (better-sqlite3 is synchronous) and the promise only carries the answer. The version column still
// guards every write: another process (or an updater that awaits) can win between the read and the write,
// and then the patch is re-applied to the fresh row exactly as before.
import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import type { Selectable } from "kysely";
import { IdempotencyConflictError, RecordNotFoundError, SessionConflictError } from "../errors.ts";
import type { SessionsTable } from "../schema.ts";
import {
  applySessionMetaPatch,
  resetSessionMeta,
  type SessionMeta,
  type SessionMetaPatch,
} from "../session-meta.ts";
import {
  type CreateSessionInput,
  DEFAULT_MAX_ATTEMPTS,
  describeRef,
  type PatchOptions,
  type ResetOptions,
  type SessionRecord,
  type SessionRef,
  type SessionReset,
  type SessionsApi,
  type SessionUpdater,
  toSessionRecord,
} from "../sessions.ts";

type SessionRow = Selectable<SessionsTable>;

export class SqliteSessions implements SessionsApi {
  readonly #byKey: Database.Statement<[string, string], SessionRow>;
  readonly #bySessionId: Database.Statement<[string, string], SessionRow>;
  readonly #byAgent: Database.Statement<[string], SessionRow>;
  readonly #insert: Database.Statement<[string, string, string, number, number, string], SessionRow>;
  readonly #writeIfVersion: Database.Statement<[string, string, number, number, string, string, number]>;
  readonly #delete: Database.Statement<[string, string]>;
  readonly #together: (work: () => unknown) => unknown;
  readonly #raw: Database.Database;
  /** How many `writeTogether` calls are running (better-sqlite3 nests a transaction as a savepoint). */
  #togetherDepth = 0;

  constructor(raw: Database.Database) {
    this.#raw = raw;
    // IMMEDIATE: the write lock first, as a single write takes it (a read inside must not have to upgrade).
    this.#together = raw.transaction((work: () => unknown) => work()).immediate;
    this.#byKey = raw.prepare("SELECT * FROM sessions WHERE agent_id = ? AND session_key = ?");
    this.#bySessionId = raw.prepare("SELECT * FROM sessions WHERE agent_id = ? AND session_id = ?");
    this.#byAgent = raw.prepare(
      "SELECT * FROM sessions WHERE agent_id = ? ORDER BY updated_at DESC, session_key",
    );
    // `RETURNING` answers only when the row was inserted: no row back means the key (or the session id) was taken.
    this.#insert = raw.prepare(
      "INSERT INTO sessions (agent_id, session_key, session_id, version, created_at, updated_at, meta) " +
        "VALUES (?, ?, ?, 1, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING *",
    );
    this.#writeIfVersion = raw.prepare(
      "UPDATE sessions SET session_id = ?, meta = ?, version = ?, updated_at = ? " +
        "WHERE agent_id = ? AND session_key = ? AND version = ?",
    );
    this.#delete = raw.prepare("DELETE FROM sessions WHERE agent_id = ? AND session_key = ?");
  }

  async get(ref: SessionRef): Promise<SessionRecord | undefined> {
    return this.#read(ref);
  }

  /** `SessionsApi.writeTogether`: the writes `work` makes inside its calls commit in one transaction. */
  writeTogether<T>(work: () => T): T {
    this.#togetherDepth++;
    try {
      return this.#together(work) as T;
    } finally {
      this.#togetherDepth--;
    }
  }

  /**
   * Refuses a write inside `writeTogether` once its transaction is gone. SQLITE_FULL, SQLITE_IOERR and
   * SQLITE_NOMEM make SQLite roll the whole transaction back by itself; a write after that would run in
   * autocommit and commit alone, while `writeTogether` still throws at COMMIT — and a caller that retries
   * the whole group (the kernel's session writes) would then apply that write twice.
   */
  #refuseIfGroupCommitAborted(): void {
    if (this.#togetherDepth > 0 && !this.#raw.inTransaction) {
      throw new Error(
        "group commit aborted: SQLite rolled back the writeTogether transaction (disk full or I/O error); " +
          "this write was not made",
      );
    }
  }

  async getBySessionId(agentId: string, sessionId: string): Promise<SessionRecord | undefined> {
    const row = this.#bySessionId.get(agentId, sessionId);
    return row === undefined ? undefined : toSessionRecord(row);
  }

  async list(agentId: string): Promise<SessionRecord[]> {
    return this.#byAgent.all(agentId).map(toSessionRecord);
  }

  async create(input: CreateSessionInput): Promise<SessionRecord> {
    return this.#create(input);
  }

  async ensure(input: CreateSessionInput): Promise<SessionRecord> {
    const stored = this.#read(input);
    if (stored !== undefined) return stored;
    const { sessionId: _ignored, ...rest } = input;
    try {
      return this.#create(input.sessionId === undefined ? rest : input);
    } catch (error) {
      // Another process may have won the insert: then its record is the answer.
      const winner = this.#read(input);
      if (winner !== undefined) return winner;
      throw error;
    }
  }

  async patch(
    ref: SessionRef,
    patch: SessionMetaPatch | SessionUpdater,
    options: PatchOptions = {},
  ): Promise<SessionRecord> {
    const maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const current = this.#read(ref);
      if (current === undefined) throw new RecordNotFoundError(`no session ${describeRef(ref)} to patch`);
      if (options.expectedVersion !== undefined && current.version !== options.expectedVersion) {
        throw new SessionConflictError(
          `session ${describeRef(ref)} is at version ${current.version}, expected ${options.expectedVersion}`,
        );
      }
      const computed = typeof patch === "function" ? patch(current) : patch;
      // Only an updater that returns a promise yields between the read and the write.
      const changes = computed instanceof Promise ? await computed : computed;
      const meta = applySessionMetaPatch(current.meta, changes);
      const written = this.#writeIfVersionMatches(
        current,
        current.sessionId,
        meta,
        options.now ?? Date.now(),
      );
      if (written !== undefined) return written;
      if (options.expectedVersion !== undefined) {
        throw new SessionConflictError(
          `session ${describeRef(ref)} changed concurrently (expected version ${options.expectedVersion})`,
        );
      }
    }
    throw new SessionConflictError(
      `session ${describeRef(ref)} changed concurrently ${maxAttempts} times in a row; the patch was not applied`,
    );
  }

  async reset(ref: SessionRef, options: ResetOptions = {}): Promise<SessionReset> {
    const nextSessionId = options.sessionId ?? randomUUID();
    for (let attempt = 1; attempt <= DEFAULT_MAX_ATTEMPTS; attempt++) {
      const current = this.#read(ref);
      if (current === undefined) throw new RecordNotFoundError(`no session ${describeRef(ref)} to reset`);
      if (current.sessionId === nextSessionId) return { previous: current, current };
      const now = options.now ?? Date.now();
      const meta = resetSessionMeta(current.meta, now);
      const written = this.#writeIfVersionMatches(current, nextSessionId, meta, now);
      if (written !== undefined) return { previous: current, current: written };
    }
    throw new SessionConflictError(`session ${describeRef(ref)} changed concurrently while resetting it`);
  }

  async delete(ref: SessionRef): Promise<boolean> {
    this.#refuseIfGroupCommitAborted();
    return this.#delete.run(ref.agentId, ref.sessionKey).changes > 0;
  }

  #read(ref: SessionRef): SessionRecord | undefined {
    const row = this.#byKey.get(ref.agentId, ref.sessionKey);
    return row === undefined ? undefined : toSessionRecord(row);
  }

  #create(input: CreateSessionInput): SessionRecord {
    const now = input.now ?? Date.now();
    const sessionId = input.sessionId ?? randomUUID();
    const meta = JSON.stringify(input.meta ?? {});
    this.#refuseIfGroupCommitAborted();
    const inserted = this.#insert.get(input.agentId, input.sessionKey, sessionId, now, now, meta);
    if (inserted !== undefined) return toSessionRecord(inserted);
    const stored = this.#read(input);
    if (stored === undefined)
      throw new RecordNotFoundError(`session ${describeRef(input)} vanished while creating it`);
    if (stored.sessionId !== sessionId) {
      throw new IdempotencyConflictError(
        `session ${describeRef(input)} already exists with sessionId ${stored.sessionId}, not ${sessionId}`,
      );
    }
    return stored;
  }

  /** Compare-and-set on the version; undefined when another writer got there first. */
  #writeIfVersionMatches(
    current: SessionRecord,
    sessionId: string,
    meta: SessionMeta,
    now: number,
  ): SessionRecord | undefined {
    const version = current.version + 1;
    this.#refuseIfGroupCommitAborted();
    const result = this.#writeIfVersion.run(
      sessionId,
      JSON.stringify(meta),
      version,
      now,
      current.agentId,
      current.sessionKey,
      current.version,
    );
    if (result.changes !== 1) return undefined;
    return { ...current, sessionId, meta, version, updatedAt: now };
  }
}
