// The SQLite fast path of the runs API: the calls every turn makes (start, update, finish, get, appendEvents,
// listForSession) as better-sqlite3 statements prepared once per store, with the same rules and errors as `KyselyRuns`
// (which stays the implementation for everything else and for PostgreSQL). Owns: those statements and doing
// each call's reads and writes in as few statements as SQLite allows (`RETURNING` instead of a read after
// the write; a run just inserted is answered from its own values). Does not own: the rules (runs.ts).
//
// Why bypassing Kysely is safe here: the store runs no Kysely transaction on SQLite (this class replaces the
// only one, `appendEvents`), so every Kysely query is one autocommit statement and a synchronous statement
// of ours can never land inside someone else's open transaction.
import type Database from "better-sqlite3";
import type { Kysely, Selectable } from "kysely";
import { IdempotencyConflictError, RecordNotFoundError } from "../errors.ts";
import {
  type FinishRunInput,
  KyselyRuns,
  type RunEvent,
  type RunOwner,
  type RunRecord,
  type RunUpdate,
  type StartRunInput,
  toRunRecord,
} from "../runs.ts";
import type { ControlPlaneDatabase, RunEventsTable, RunsTable } from "../schema.ts";
import type { SessionRef } from "../sessions.ts";

export type RunRow = Selectable<RunsTable>;
type UpdateValues = [
  provider: string | null,
  model: string | null,
  thinkingLevel: string | null,
  fallbackChain: string | null,
  authProfileId: string | null,
  usage: string | null,
  costUsd: number | null,
];

/** `COALESCE(?, column)`: an absent field (bound as NULL) leaves the column as it is; no field is ever null. */
const UPDATE_COLUMNS =
  "provider = COALESCE(?, provider), model = COALESCE(?, model), " +
  "thinking_level = COALESCE(?, thinking_level), fallback_chain = COALESCE(?, fallback_chain), " +
  "auth_profile_id = COALESCE(?, auth_profile_id), usage = COALESCE(?, usage), cost_usd = COALESCE(?, cost_usd)";

export class SqliteRuns extends KyselyRuns {
  readonly #ownerColumns: RunOwner;
  readonly #insertRun: Database.Statement<unknown[]>;
  readonly #selectRun: Database.Statement<[string], RunRow>;
  readonly #listForSession: Database.Statement<[string, string, number], RunRow>;
  readonly #updateRun: Database.Statement<[...UpdateValues, number, string], RunRow>;
  readonly #finishRun: Database.Statement<
    [...UpdateValues, string, number, string | null, string | null, number, string],
    RunRow
  >;
  readonly #appendEvents: (runId: string, events: readonly RunEvent[]) => void;
  readonly #finishWithEvents: (runId: string, input: FinishRunInput) => RunRow | undefined;

  constructor(db: Kysely<ControlPlaneDatabase>, raw: Database.Database, owner: RunOwner) {
    super(db, owner);
    this.#ownerColumns = owner;
    this.#insertRun = raw.prepare(
      "INSERT INTO runs (run_id, agent_id, session_key, session_id, entry_point, status, started_at, provider, " +
        "model, thinking_level, fallback_chain, owner_host, owner_pid, owner_token, owner_start_time, " +
        "owner_boot_id, updated_at) " +
        "VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, '[]', ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING",
    );
    this.#selectRun = raw.prepare("SELECT * FROM runs WHERE run_id = ?");
    // The kernel asks at every turn under a lease (a run left running by a holder that lost it): without this
    // statement the first turn of a process would load Kysely for it.
    this.#listForSession = raw.prepare(
      "SELECT * FROM runs WHERE agent_id = ? AND session_key = ? ORDER BY started_at DESC, run_id DESC LIMIT ?",
    );
    this.#updateRun = raw.prepare(
      `UPDATE runs SET ${UPDATE_COLUMNS}, updated_at = ? WHERE run_id = ? RETURNING *`,
    );
    this.#finishRun = raw.prepare(
      `UPDATE runs SET ${UPDATE_COLUMNS}, status = ?, ended_at = ?, error_reason = ?, error_message = ?, ` +
        "updated_at = ? WHERE run_id = ? AND status = 'running' RETURNING *",
    );
    const runExists = raw.prepare<[string], { one: number }>("SELECT 1 AS one FROM runs WHERE run_id = ?");
    const insertEvent = raw.prepare<[string, number, number, string, string]>(
      "INSERT INTO run_events (run_id, seq, ts, stream, data) VALUES (?, ?, ?, ?, ?) " +
        "ON CONFLICT (run_id, seq) DO NOTHING",
    );
    const selectEvent = raw.prepare<[string, number], Selectable<RunEventsTable>>(
      "SELECT * FROM run_events WHERE run_id = ? AND seq = ?",
    );
    // One IMMEDIATE transaction for the whole batch: one commit, and a concurrent writer waits (busy
    // timeout) instead of failing when a read would have to upgrade to a write.
    const append = (runId: string, events: readonly RunEvent[]): void => {
      if (runExists.get(runId) === undefined) throw new RecordNotFoundError(`no run ${runId}`);
      for (const event of events) {
        const data = JSON.stringify(event.data ?? null);
        if (insertEvent.run(runId, event.seq, event.ts, event.stream, data).changes > 0) continue;
        const stored = selectEvent.get(runId, event.seq);
        if (stored?.ts !== event.ts || stored.stream !== event.stream || stored.data !== data) {
          throw new IdempotencyConflictError(
            `run ${runId} already has a different event with seq ${event.seq}`,
          );
        }
      }
    };
    this.#appendEvents = raw.transaction(append).immediate;
    // A refused event rolls the finish back with it: the run is final only with all its events.
    this.#finishWithEvents = raw.transaction((runId: string, input: FinishRunInput) => {
      append(runId, input.events ?? []);
      return this.#finishRow(runId, input);
    }).immediate;
  }

  override async start(input: StartRunInput): Promise<RunRecord> {
    const row = this.insertRow(input);
    // Inserted: the row is exactly these values. Not inserted: the same runId again (the rules decide).
    return row === undefined ? super.start(input) : toRunRecord(row);
  }

  // The synchronous writes of start, update, finish and appendEvents, so that ./fenced.ts can run each inside
  // its fencing transaction.

  /** Inserts the run; undefined when a run with its id exists already (nothing was written). */
  insertRow(input: StartRunInput): RunRow | undefined {
    const now = input.startedAt ?? Date.now();
    const owner = this.#ownerColumns;
    const row: RunRow = {
      run_id: input.runId,
      agent_id: input.agentId,
      session_key: input.sessionKey,
      session_id: input.sessionId,
      entry_point: input.entryPoint,
      status: "running",
      started_at: now,
      ended_at: null,
      provider: input.provider ?? null,
      model: input.model ?? null,
      thinking_level: input.thinkingLevel ?? null,
      fallback_chain: "[]",
      auth_profile_id: null,
      usage: null,
      cost_usd: null,
      error_reason: null,
      error_message: null,
      owner_host: owner.host,
      owner_pid: owner.pid,
      owner_token: owner.token,
      owner_start_time: owner.startTime ?? null,
      owner_boot_id: owner.bootId ?? null,
      updated_at: now,
    };
    const inserted = this.#insertRun.run(
      row.run_id,
      row.agent_id,
      row.session_key,
      row.session_id,
      row.entry_point,
      row.started_at,
      row.provider,
      row.model,
      row.thinking_level,
      row.owner_host,
      row.owner_pid,
      row.owner_token,
      row.owner_start_time,
      row.owner_boot_id,
      row.updated_at,
    );
    return inserted.changes === 1 ? row : undefined;
  }

  /** The updated row; undefined when there is no such run. */
  updateRow(runId: string, update: RunUpdate): RunRow | undefined {
    return this.#updateRun.get(...updateValues(update), Date.now(), runId);
  }

  /** The finished row (with its events); undefined when the run is not running (final already, or missing). */
  finishRunRow(runId: string, input: FinishRunInput): RunRow | undefined {
    return input.events === undefined || input.events.length === 0
      ? this.#finishRow(runId, input)
      : this.#finishWithEvents(runId, input);
  }

  /** Appends the events in one transaction (a savepoint inside a caller's). */
  appendEventsNow(runId: string, events: readonly RunEvent[]): void {
    if (events.length > 0) this.#appendEvents(runId, events);
  }

  override async update(runId: string, update: RunUpdate): Promise<RunRecord> {
    const row = this.updateRow(runId, update);
    if (row === undefined) throw new RecordNotFoundError(`no run ${runId}`);
    return toRunRecord(row);
  }

  override async finish(runId: string, input: FinishRunInput): Promise<RunRecord> {
    const row = this.finishRunRow(runId, input);
    if (row !== undefined) return toRunRecord(row);
    return this.finishedAlready(runId, input);
  }

  /** `finish` of a run that was not running: the rules of a repeated finish. */
  async finishedAlready(runId: string, input: FinishRunInput): Promise<RunRecord> {
    // Not running (already final, or no such run): the rules of a repeated finish apply.
    const stored = await this.get(runId);
    if (stored === undefined) throw new RecordNotFoundError(`no run ${runId}`);
    if (stored.status !== input.status) {
      throw new IdempotencyConflictError(
        `run ${runId} already ended as ${stored.status}; cannot finish it as ${input.status}`,
      );
    }
    return stored;
  }

  /** The finished row, or undefined when the run is not running (final already, or missing). */
  #finishRow(runId: string, input: FinishRunInput): RunRow | undefined {
    const endedAt = input.endedAt ?? Date.now();
    return this.#finishRun.get(
      ...updateValues(input),
      input.status,
      endedAt,
      input.errorReason ?? null,
      input.errorMessage ?? null,
      endedAt,
      runId,
    );
  }

  override async listForSession(
    ref: SessionRef,
    options: { readonly limit?: number } = {},
  ): Promise<RunRecord[]> {
    // A negative LIMIT is no limit in SQLite.
    return this.#listForSession.all(ref.agentId, ref.sessionKey, options.limit ?? -1).map(toRunRecord);
  }

  override async get(runId: string): Promise<RunRecord | undefined> {
    const row = this.#selectRun.get(runId);
    return row === undefined ? undefined : toRunRecord(row);
  }

  override async appendEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    this.appendEventsNow(runId, events);
  }
}

function updateValues(update: RunUpdate): UpdateValues {
  return [
    update.provider ?? null,
    update.model ?? null,
    update.thinkingLevel ?? null,
    update.fallbackChain === undefined ? null : JSON.stringify(update.fallbackChain),
    update.authProfileId ?? null,
    update.usage === undefined ? null : JSON.stringify(update.usage),
    update.costUsd ?? null,
  ];
}
