// Sessions: {agentId, sessionKey} → the current sessionId and its metadata. Owns: create/get/list/delete,
// typed patches with optimistic concurrency (a version column; a lost race re-reads the row and re-applies the
// patch, a bounded number of times), and reset (a new sessionId, metadata per `resetSessionMeta`). Does not
// own: the transcript (transcript.ts) or choosing keys (runtime-resolver).
import { randomUUID } from "node:crypto";
import type { Kysely, Selectable } from "kysely";
import { IdempotencyConflictError, RecordNotFoundError, SessionConflictError } from "./errors.ts";
import type { ControlPlaneDatabase, SessionsTable } from "./schema.ts";
import {
  applySessionMetaPatch,
  resetSessionMeta,
  type SessionMeta,
  type SessionMetaPatch,
} from "./session-meta.ts";

export interface SessionRef {
  readonly agentId: string;
  readonly sessionKey: string;
}

export interface SessionRecord extends SessionRef {
  readonly sessionId: string;
  /** Bumped by every write; a patch with a stale `expectedVersion` fails. */
  readonly version: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly meta: SessionMeta;
}

export interface CreateSessionInput extends SessionRef {
  /** Default: a new UUID. Creating again with the same sessionId returns the stored record (idempotent). */
  readonly sessionId?: string;
  /** Stored as given (the caller sets `sessionStartedAt` and friends; an import keeps the legacy values). */
  readonly meta?: SessionMeta;
  readonly now?: number;
}

/** Computes the patch from the freshest row; called again with the new row when a concurrent write won. */
export type SessionUpdater = (current: SessionRecord) => SessionMetaPatch | Promise<SessionMetaPatch>;

export interface PatchOptions {
  /** Fail with `SessionConflictError` (no retry) unless the stored version is this one. */
  readonly expectedVersion?: number;
  /** How many read-apply-write attempts before giving up with `SessionConflictError` (default 5). */
  readonly maxAttempts?: number;
  readonly now?: number;
}

export interface ResetOptions {
  /** The new session id (default a new UUID). Resetting again to the same id changes nothing (idempotent). */
  readonly sessionId?: string;
  readonly now?: number;
}

export interface SessionReset {
  readonly previous: SessionRecord;
  readonly current: SessionRecord;
}

export interface SessionsApi {
  get(ref: SessionRef): Promise<SessionRecord | undefined>;
  getBySessionId(agentId: string, sessionId: string): Promise<SessionRecord | undefined>;
  /** Most recently updated first. */
  list(agentId: string): Promise<SessionRecord[]>;
  /** Throws `IdempotencyConflictError` when the key already maps to another sessionId. */
  create(input: CreateSessionInput): Promise<SessionRecord>;
  /** The stored record, or a new one from `input`. */
  ensure(input: CreateSessionInput): Promise<SessionRecord>;
  patch(
    ref: SessionRef,
    patch: SessionMetaPatch | SessionUpdater,
    options?: PatchOptions,
  ): Promise<SessionRecord>;
  reset(ref: SessionRef, options?: ResetOptions): Promise<SessionReset>;
  delete(ref: SessionRef): Promise<boolean>;
  /**
   * Optional. Runs `work` — calls of this API that do their writes inside the call (a `patch` with an object or
   * a synchronous updater) — in one transaction, so that those writes commit together: one commit instead of
   * one each. Each call's promise settles as on its own (a refused patch rejects only its own promise). When
   * this throws, nothing `work` wrote was committed. A store without it commits each write on its own.
   */
  writeTogether?<T>(work: () => T): T;
}

/** Read-apply-write attempts of `patch` and `reset` before `SessionConflictError`. */
export const DEFAULT_MAX_ATTEMPTS = 5;

export class KyselySessions implements SessionsApi {
  readonly #db: Kysely<ControlPlaneDatabase>;

  constructor(db: Kysely<ControlPlaneDatabase>) {
    this.#db = db;
  }

  async get(ref: SessionRef): Promise<SessionRecord | undefined> {
    const row = await this.#db
      .selectFrom("sessions")
      .selectAll()
      .where("agent_id", "=", ref.agentId)
      .where("session_key", "=", ref.sessionKey)
      .executeTakeFirst();
    return row === undefined ? undefined : toSessionRecord(row);
  }

  async getBySessionId(agentId: string, sessionId: string): Promise<SessionRecord | undefined> {
    const row = await this.#db
      .selectFrom("sessions")
      .selectAll()
      .where("agent_id", "=", agentId)
      .where("session_id", "=", sessionId)
      .executeTakeFirst();
    return row === undefined ? undefined : toSessionRecord(row);
  }

  async list(agentId: string): Promise<SessionRecord[]> {
    const rows = await this.#db
      .selectFrom("sessions")
      .selectAll()
      .where("agent_id", "=", agentId)
      .orderBy("updated_at", "desc")
      .orderBy("session_key")
      .execute();
    return rows.map(toSessionRecord);
  }

  async create(input: CreateSessionInput): Promise<SessionRecord> {
    const now = input.now ?? Date.now();
    const sessionId = input.sessionId ?? randomUUID();
    const meta: SessionMeta = input.meta ?? {};
    const inserted = await this.#db
      .insertInto("sessions")
      .values({
        agent_id: input.agentId,
        session_key: input.sessionKey,
        session_id: sessionId,
        version: 1,
        created_at: now,
        updated_at: now,
        meta: JSON.stringify(meta),
      })
      .onConflict((conflict) => conflict.doNothing())
      .executeTakeFirst();
    const stored = await this.get(input);
    if (stored === undefined)
      throw new RecordNotFoundError(`session ${describeRef(input)} vanished while creating it`);
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0 && stored.sessionId !== sessionId) {
      throw new IdempotencyConflictError(
        `session ${describeRef(input)} already exists with sessionId ${stored.sessionId}, not ${sessionId}`,
      );
    }
    return stored;
  }

  async ensure(input: CreateSessionInput): Promise<SessionRecord> {
    const stored = await this.get(input);
    if (stored !== undefined) return stored;
    const { sessionId: _ignored, ...rest } = input;
    // A concurrent creator may win the insert: then its record is the answer.
    return this.create(input.sessionId === undefined ? rest : input).catch(async (error: unknown) => {
      const winner = await this.get(input);
      if (winner !== undefined) return winner;
      throw error;
    });
  }

  async patch(
    ref: SessionRef,
    patch: SessionMetaPatch | SessionUpdater,
    options: PatchOptions = {},
  ): Promise<SessionRecord> {
    const maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const current = await this.get(ref);
      if (current === undefined) throw new RecordNotFoundError(`no session ${describeRef(ref)} to patch`);
      if (options.expectedVersion !== undefined && current.version !== options.expectedVersion) {
        throw new SessionConflictError(
          `session ${describeRef(ref)} is at version ${current.version}, expected ${options.expectedVersion}`,
        );
      }
      const changes = typeof patch === "function" ? await patch(current) : patch;
      const meta = applySessionMetaPatch(current.meta, changes);
      const written = await this.#writeIfVersion(current, current.sessionId, meta, options.now ?? Date.now());
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
      const current = await this.get(ref);
      if (current === undefined) throw new RecordNotFoundError(`no session ${describeRef(ref)} to reset`);
      if (current.sessionId === nextSessionId) return { previous: current, current };
      const now = options.now ?? Date.now();
      const written = await this.#writeIfVersion(
        current,
        nextSessionId,
        resetSessionMeta(current.meta, now),
        now,
      );
      if (written !== undefined) return { previous: current, current: written };
    }
    throw new SessionConflictError(`session ${describeRef(ref)} changed concurrently while resetting it`);
  }

  async delete(ref: SessionRef): Promise<boolean> {
    const result = await this.#db
      .deleteFrom("sessions")
      .where("agent_id", "=", ref.agentId)
      .where("session_key", "=", ref.sessionKey)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Compare-and-set on the version; undefined when another writer got there first. */
  async #writeIfVersion(
    current: SessionRecord,
    sessionId: string,
    meta: SessionMeta,
    now: number,
  ): Promise<SessionRecord | undefined> {
    const result = await this.#db
      .updateTable("sessions")
      .set({
        session_id: sessionId,
        meta: JSON.stringify(meta),
        version: current.version + 1,
        updated_at: now,
      })
      .where("agent_id", "=", current.agentId)
      .where("session_key", "=", current.sessionKey)
      .where("version", "=", current.version)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    return { ...current, sessionId, meta, version: current.version + 1, updatedAt: now };
  }
}

export function toSessionRecord(row: Selectable<SessionsTable>): SessionRecord {
  return {
    agentId: row.agent_id,
    sessionKey: row.session_key,
    sessionId: row.session_id,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    meta: JSON.parse(row.meta) as SessionMeta,
  };
}

export function describeRef(ref: SessionRef): string {
  return `${ref.agentId}/${ref.sessionKey}`;
}
