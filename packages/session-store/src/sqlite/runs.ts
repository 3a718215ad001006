// The SQLite fast path of the runs API: the calls every turn makes (start, update, finish, get, appendEvents,
// listForSession) as better-sqlite3 statements prepared once per store, with the same rules and errors as `KyselyRuns`
// (which stays the implementation for everything else and for PostgreSQL). Owns: those statements and doing
// each call's reads and writes in as few statements as SQLite allows (`RETURNING` instead of a read after
// the write; a run just inserted is answered from its own values). Does not own: the rules (runs.ts).
//
// Why bypassing Kysely is safe here: the store runs no Kysely transaction on SQLite (this class replaces the
// only one, `appendEvents`), so every Kysely query is one autocommit statement and a synchronous statement
// of ours can never land inside someone else's open transaction.
import { unlinkSync } from "node:fs";
import type Database from "better-sqlite3";
import type { Kysely, Selectable } from "kysely";
import { IdempotencyConflictError, RecordNotFoundError } from "../errors.ts";
import {
  type FinishRunInput,
  isRunOwnerAlive,
  KyselyRuns,
  type RunEvent,
  type RunOwner,
  type RunRecord,
  type RunUpdate,
  runEventDataText,
  type StartRunInput,
  sameRunEventData,
  toRunRecord,
} from "../runs.ts";
import type { ControlPlaneDatabase, RunEventsTable } from "../schema.ts";
import type { SessionRef } from "../sessions.ts";
import { StorageFailure, toStorageFailure } from "../storage-errors.ts";
import {
  hasLines,
  listRunJournals,
  RunJournal,
  type RunJournalReplay,
  type RunOp,
  RunOpStatements,
  readRunJournal,
} from "./run-journal.ts";
import {
  eventKey,
  type KnownRun,
  newEvents,
  type RunRow,
  refusalError,
  runRowValues,
  UPDATE_COLUMNS,
  type UpdateValues,
  updateValues,
  withValues,
} from "./run-rows.ts";

export type { RunRow } from "./run-rows.ts";

export class SqliteRuns extends KyselyRuns {
  readonly #raw: Database.Database;
  readonly #ownerColumns: RunOwner;
  #journal: RunJournal | undefined;
  #controlPlanePath = "";
  readonly #ops: RunOpStatements;
  #foldTransaction: ((ops: readonly RunOp[]) => string[]) | undefined;
  #applyTransaction: ((path: string) => ReturnType<typeof readRunJournal> & { applied: number }) | undefined;
  readonly #known = new Map<string, KnownRun>();
  /** The last group commit failed (a later fold has not succeeded yet). */
  #groupCommitFailed = false;
  /** What folds refused and no write has reported yet. */
  #refusals: string[] = [];
  /** Journals of owners that were gone, applied and removed (see `replayed`). */
  readonly replayed: RunJournalReplay[] = [];
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
    this.#raw = raw;
    this.#ownerColumns = owner;
    this.#ops = new RunOpStatements(raw, UPDATE_COLUMNS);
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
        const data = runEventDataText(event.data);
        if (insertEvent.run(runId, event.seq, event.ts, event.stream, data).changes > 0) continue;
        const stored = selectEvent.get(runId, event.seq);
        if (
          stored?.ts !== event.ts ||
          stored.stream !== event.stream ||
          !sameRunEventData(stored.data, data)
        ) {
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

  /**
   * The per-turn writes of runs this store starts go through a run journal next to `controlPlanePath` from
   * now on (./run-journal.ts): durable when they return, folded into SQLite by a group commit.
   */
  enableJournal(controlPlanePath: string): void {
    this.#controlPlanePath = controlPlanePath;
    this.#journal = new RunJournal(controlPlanePath, this.#ownerColumns, () => this.#foldQuietly());
    journaledRuns.add(this);
    foldRunJournalsOnExit();
  }

  /** The journal's file, while there is one. */
  get journalPath(): string | undefined {
    return this.#journal?.path;
  }

  // The journaled writes. Each returns undefined (or false) when the write cannot be journaled — no journal,
  // a caller's transaction open, a refusal not reported yet, a run this store does not know as running —
  // after which the caller folds and writes directly, under the runs' full rules.

  /** Journals the start of a new run (its id not in SQLite, not started by this store); the row it will be. */
  journalStart(input: StartRunInput): RunRow | undefined {
    const journal = this.#journal;
    if (journal === undefined || this.#raw.inTransaction || this.#refusals.length > 0) return undefined;
    if (this.#known.has(input.runId) || this.#selectRun.get(input.runId) !== undefined) return undefined;
    const row = this.#newRow(input);
    const op: RunOp = {
      o: "start",
      v: runRowValues(row),
    };
    if (!journal.write(op)) return undefined;
    this.#known.set(row.run_id, { row, events: new Map() });
    this.#foldIfFull();
    return row;
  }

  /** Journals an update of a running run this store started; the updated row. */
  journalUpdate(runId: string, update: RunUpdate): RunRow | undefined {
    const known = this.#journalable(runId);
    if (known === undefined) return undefined;
    const now = Date.now();
    const values = updateValues(update);
    if (!this.#journal?.write({ o: "update", id: runId, v: values, t: now })) return undefined;
    known.row = { ...withValues(known.row, values), updated_at: now };
    this.#foldIfFull();
    return known.row;
  }

  /** Journals events of a running run this store started (appendEvents' rules); false: not journaled. */
  journalEvents(runId: string, events: readonly RunEvent[]): boolean {
    const known = this.#journalable(runId);
    if (known === undefined) return false;
    const fresh = newEvents(runId, known, events);
    if (fresh.length > 0 && !this.#journal?.write({ o: "events", id: runId, e: fresh })) return false;
    for (const event of fresh) known.events.set(event.seq, eventKey(event));
    this.#foldIfFull();
    return true;
  }

  /** Journals the finish (with its events) of a running run this store started; the finished row. */
  journalFinish(runId: string, input: FinishRunInput): RunRow | undefined {
    const known = this.#journalable(runId);
    if (known === undefined) return undefined;
    const fresh = newEvents(runId, known, input.events ?? []);
    const endedAt = input.endedAt ?? Date.now();
    const values = updateValues(input);
    const op: RunOp = {
      o: "finish",
      id: runId,
      v: values,
      s: input.status,
      at: endedAt,
      r: input.errorReason ?? null,
      m: input.errorMessage ?? null,
      e: fresh,
    };
    if (!this.#journal?.write(op)) return undefined;
    this.#known.delete(runId);
    this.#foldIfFull();
    return {
      ...withValues(known.row, values),
      status: input.status,
      ended_at: endedAt,
      error_reason: input.errorReason ?? null,
      error_message: input.errorMessage ?? null,
      updated_at: endedAt,
    };
  }

  /** After a journaled write: a long run of pending lines is folded now (a failure waits for the next call). */
  #foldIfFull(): void {
    if (this.#journal?.full) this.#foldQuietly();
  }

  #journalable(runId: string): KnownRun | undefined {
    if (this.#journal === undefined || this.#raw.inTransaction || this.#refusals.length > 0) return undefined;
    return this.#known.get(runId);
  }

  /**
   * Before a direct write: SQLite gets this store's journaled writes first (their order is the runs' order),
   * and a refusal a fold found is thrown (once).
   */
  beforeWrite(runId?: string): void {
    // What this store knew of the run stops being the whole truth once a write bypasses the journal.
    if (runId !== undefined) this.#known.delete(runId);
    this.#foldOrExplain();
    this.reportRefusals();
  }

  /**
   * Before a read: this store's journaled writes folded, and every other owner's journal next to the control
   * plane applied (read-through: another process's writes it has not folded yet are seen), a gone owner's
   * then removed and kept in `replayed`.
   */
  beforeRead(): void {
    this.#foldOrExplain();
    if (this.#controlPlanePath === "") return;
    const own = this.#journal?.path;
    for (const journal of listRunJournals(this.#controlPlanePath)) {
      if (journal.path === own || !hasLines(journal.path)) continue;
      this.#applyJournal(journal.path, journal.owner);
    }
  }

  /** Applies another owner's journal under the write lock; removes it when its owner is gone. */
  #applyJournal(path: string, owner: RunOwner): void {
    this.#applyTransaction ??= this.#raw.transaction((file: string) => {
      const read = readRunJournal(file);
      let applied = 0;
      for (const { line, op } of read.ops) {
        const refused = this.#ops.apply(op);
        if (refused === undefined) applied++;
        else read.problems.push({ line, problem: refused });
      }
      return { ...read, applied };
    }).immediate;
    const gone = !isRunOwnerAlive(owner);
    const result = this.#applyTransaction(path);
    if (!gone) return;
    if (result.problems[0]?.line === 0) return;
    try {
      unlinkSync(path);
    } catch {
      // Applied already: applying it again stores nothing new.
    }
    this.replayed.push({ path, owner, applied: result.applied, problems: result.problems });
  }

  /** Folds this store's journaled writes now; a failure throws (they stay pending, and journaled). */
  #foldOrExplain(): void {
    try {
      this.#foldPending();
    } catch (error) {
      const failure = toStorageFailure(error, this.#controlPlanePath);
      const journal = this.#journal;
      if (failure === undefined || journal === undefined) throw error;
      throw new StorageFailure({
        kind: failure.kind,
        path: failure.path,
        code: failure.code,
        problem: failure.problem,
        hint:
          `${failure.hint}; the ${journal.pending.length} run writes not in it yet are kept in the run ` +
          `journal ${journal.path}, stored by the next fold (or by the next reader or opener once this ` +
          `process is gone) when the file can take them`,
        keptIn: journal.path,
        cause: failure.cause,
      });
    }
  }

  #foldQuietly(): void {
    try {
      this.#foldPending();
      this.#groupCommitFailed = false;
    } catch {
      // Kept pending (and journaled); the next call folds again and reports the failure.
      this.#groupCommitFailed = true;
    }
  }

  #foldPending(): void {
    const journal = this.#journal;
    if (journal === undefined || journal.pending.length === 0 || !this.#raw.open || this.#raw.inTransaction)
      return;
    const ops = journal.pending;
    this.#foldTransaction ??= this.#raw.transaction((batch: readonly RunOp[]) => {
      const refused: string[] = [];
      for (const op of batch) {
        const reason = this.#ops.apply(op);
        if (reason !== undefined) refused.push(reason);
      }
      return refused;
    }).immediate;
    const refused = this.#foldTransaction(ops);
    journal.folded(ops.length);
    this.#refusals.push(...refused);
  }

  /** Folds and closes the journal (removing its file when everything is in SQLite); throws a failed fold. */
  closeJournal(): void {
    const journal = this.#journal;
    if (journal === undefined) return;
    try {
      this.#foldOrExplain();
    } finally {
      journal.close();
      this.#journal = undefined;
      journaledRuns.delete(this);
    }
  }

  /**
   * Throws (once) what folds refused so far (`store.durable`). Folds nothing, unless the last group commit
   * failed with lines still pending (the control plane refuses writes): then it folds again now, throwing the
   * `StorageFailure` that says where they are kept.
   */
  reportRefusals(): void {
    if (this.#groupCommitFailed && (this.#journal?.pending.length ?? 0) > 0) this.#foldOrExplain();
    if (this.#refusals.length === 0) return;
    const refusals = this.#refusals;
    this.#refusals = [];
    throw refusalError(refusals);
  }

  override async start(input: StartRunInput): Promise<RunRecord> {
    const journaled = this.journalStart(input);
    if (journaled !== undefined) return toRunRecord(journaled);
    this.beforeWrite(input.runId);
    const row = this.insertRow(input);
    // Inserted: the row is exactly these values. Not inserted: the same runId again (the rules decide).
    return row === undefined ? super.start(input) : toRunRecord(row);
  }

  // The synchronous writes of start, update, finish and appendEvents, so that ./fenced.ts can run each inside
  // its fencing transaction.

  /** Inserts the run; undefined when a run with its id exists already (nothing was written). */
  insertRow(input: StartRunInput): RunRow | undefined {
    const row = this.#newRow(input);
    const inserted = this.#insertRun.run(...runRowValues(row));
    return inserted.changes === 1 ? row : undefined;
  }

  #newRow(input: StartRunInput): RunRow {
    const now = input.startedAt ?? Date.now();
    const owner = this.#ownerColumns;
    return {
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
    const journaled = this.journalUpdate(runId, update);
    if (journaled !== undefined) return toRunRecord(journaled);
    this.beforeWrite(runId);
    const row = this.updateRow(runId, update);
    if (row === undefined) throw new RecordNotFoundError(`no run ${runId}`);
    return toRunRecord(row);
  }

  override async finish(runId: string, input: FinishRunInput): Promise<RunRecord> {
    const journaled = this.journalFinish(runId, input);
    if (journaled !== undefined) return toRunRecord(journaled);
    this.beforeWrite(runId);
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
    this.beforeRead();
    // A negative LIMIT is no limit in SQLite.
    return this.#listForSession.all(ref.agentId, ref.sessionKey, options.limit ?? -1).map(toRunRecord);
  }

  override async get(runId: string): Promise<RunRecord | undefined> {
    this.beforeRead();
    const row = this.#selectRun.get(runId);
    return row === undefined ? undefined : toRunRecord(row);
  }

  override async events(runId: string, options: { readonly afterSeq?: number } = {}): Promise<RunEvent[]> {
    this.beforeRead();
    return super.events(runId, options);
  }

  override async recoverInterrupted(now?: number): Promise<RunRecord[]> {
    this.beforeRead();
    return super.recoverInterrupted(now);
  }

  override async appendEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    if (this.journalEvents(runId, events)) return;
    this.beforeWrite(runId);
    this.appendEventsNow(runId, events);
  }
}

/** The runs of every open store with a run journal in this process. */
const journaledRuns = new Set<SqliteRuns>();
let exitHookInstalled = false;

/**
 * A process that exits without closing its stores (a CLI that returns from main) still folds and removes its
 * run journals (`exit` listeners run synchronously, as better-sqlite3 does); one whose fold fails there stays
 * for the next reader or opener to apply.
 */
function foldRunJournalsOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const runs of [...journaledRuns]) {
      try {
        runs.closeJournal();
      } catch {
        // Left on disk: applied by the next reader or opener.
      }
    }
  });
}
