// Runs: one row per turn and its ordered events. Owns: starting, updating and finishing a run (each keyed by
// runId so a repeated write changes nothing), events keyed by (runId, seq), and marking runs whose owning
// process is gone as `interrupted` (gone: its pid is free, or now belongs to a process that started at
// another time or in another boot, see owner-process.ts). Does not own: what a run does (kernel, turn-pipeline) or the event
// envelope's meaning.
import { hostname } from "node:os";
import type { Kysely, Selectable } from "kysely";
import { IdempotencyConflictError, RecordNotFoundError } from "./errors.ts";
import { currentBootId, isOtherProcess, ownProcessStart, readProcessStart } from "./owner-process.ts";
import type { ControlPlaneDatabase, RunEventsTable, RunsTable } from "./schema.ts";
import type { SessionRef } from "./sessions.ts";

export type RunStatus = "running" | "succeeded" | "failed" | "aborted" | "timed_out" | "interrupted";
export type FinalRunStatus = Exclude<RunStatus, "running" | "interrupted">;

/** One model tried while walking the fallback chain. */
export interface FallbackAttempt {
  readonly provider: string;
  readonly model: string;
  readonly authProfileId?: string;
  /** The failover reason that moved on to the next candidate (absent for the one that answered). */
  readonly reason?: string;
  readonly error?: string;
}

export interface RunUsage {
  readonly input?: number;
  readonly output?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  readonly total?: number;
}

export interface RunRecord extends SessionRef {
  readonly runId: string;
  readonly sessionId: string;
  /** Which entry point started the turn: `agent`, `auto-reply`, `followup`, `cron`, `hybrid-planner`, ... */
  readonly entryPoint: string;
  readonly status: RunStatus;
  readonly startedAt: number;
  readonly endedAt?: number;
  /** The provider and model that actually answered. */
  readonly provider?: string;
  readonly model?: string;
  readonly thinkingLevel?: string;
  readonly fallbackChain: readonly FallbackAttempt[];
  readonly authProfileId?: string;
  readonly usage?: RunUsage;
  readonly costUsd?: number;
  readonly errorReason?: string;
  readonly errorMessage?: string;
}

export interface StartRunInput extends SessionRef {
  readonly runId: string;
  readonly sessionId: string;
  readonly entryPoint: string;
  readonly startedAt?: number;
  readonly provider?: string;
  readonly model?: string;
  readonly thinkingLevel?: string;
}

export interface RunUpdate {
  readonly provider?: string;
  readonly model?: string;
  readonly thinkingLevel?: string;
  readonly fallbackChain?: readonly FallbackAttempt[];
  readonly authProfileId?: string;
  readonly usage?: RunUsage;
  readonly costUsd?: number;
}

export interface FinishRunInput extends RunUpdate {
  readonly status: FinalRunStatus;
  readonly endedAt?: number;
  readonly errorReason?: string;
  readonly errorMessage?: string;
  /**
   * Events to append with the finish, by `appendEvents`' rules: a turn that buffers its events stores them
   * and ends its run in one write (one transaction on SQLite: the events and the final status together).
   */
  readonly events?: readonly RunEvent[];
}

/** One event of a run's stream (the `AgentEventPayload` envelope minus runId). */
export interface RunEvent {
  readonly seq: number;
  readonly ts: number;
  readonly stream: string;
  readonly data: unknown;
}

/**
 * An event's data given as its JSON text already (`RunEvent.data`): the store keeps the text as it is instead
 * of serialising the data again, and reading the event back parses it. For data made once and reused (the
 * kernel's decisions, the same for every turn of a preparation but a few fields). `json` must be the text of
 * one JSON value; it may escape what `JSON.stringify` leaves as it is (`"\u2014"` for "—"), which is the same
 * value. Anything that serialises the event itself (`JSON.stringify`) gets the value, through `toJSON`.
 */
export class RunEventJson {
  readonly json: string;
  /**
   * Throws a `TypeError` when `json` is not the text of one JSON value. A text with line breaks (pretty-printed)
   * is kept as its one-line serialisation: the run journal keeps one write per line.
   */
  constructor(json: string) {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (error) {
      throw new TypeError(`RunEventJson: not the text of one JSON value (${(error as Error).message})`);
    }
    this.json = json.includes("\n") || json.includes("\r") ? JSON.stringify(value) : json;
  }
  toJSON(): unknown {
    return JSON.parse(this.json);
  }
}

/** The text an event's data is stored as: `RunEventJson`'s own, else the data serialised. */
export function runEventDataText(data: unknown): string {
  // JSON.stringify answers undefined for a function or a symbol: stored as null, as inside an array
  return data instanceof RunEventJson ? data.json : (JSON.stringify(data ?? null) ?? "null");
}

/**
 * Whether two stored texts of event data hold the same value: the same text, or texts that differ only in how
 * they are written (escapes; a journal line carries the data as JSON, not as its text). Parsed only then.
 */
export function sameRunEventData(stored: string, given: string): boolean {
  if (stored === given) return true;
  try {
    return JSON.stringify(JSON.parse(stored)) === JSON.stringify(JSON.parse(given));
  } catch {
    return false;
  }
}

export interface RunsApi {
  /** Starting the same runId again with the same identity returns the stored run; another identity throws. */
  start(input: StartRunInput): Promise<RunRecord>;
  update(runId: string, update: RunUpdate): Promise<RunRecord>;
  /** Finishing again with the same status returns the stored run unchanged; another status throws. */
  finish(runId: string, input: FinishRunInput): Promise<RunRecord>;
  get(runId: string): Promise<RunRecord | undefined>;
  /** Newest first. */
  listForSession(ref: SessionRef, options?: { readonly limit?: number }): Promise<RunRecord[]>;
  /** Keyed by (runId, seq): the same event again is a no-op, another event with a used seq throws. */
  appendEvents(runId: string, events: readonly RunEvent[]): Promise<void>;
  /** In seq order. */
  events(runId: string, options?: { readonly afterSeq?: number }): Promise<RunEvent[]>;
  /** Marks `running` runs whose owner process is gone as `interrupted`; returns them. Runs on every open. */
  recoverInterrupted(now?: number): Promise<RunRecord[]>;
}

/** Which process and which open store own a running run. */
export interface RunOwner {
  readonly host: string;
  readonly pid: number;
  readonly token: string;
  /**
   * When the owning process started (Linux: clock ticks since boot) and the boot it started in, so that a pid
   * reused by another process, or a reboot, is not mistaken for the owner. Absent off Linux and on rows
   * written before they were recorded: the pid alone decides then.
   */
  readonly startTime?: number | undefined;
  readonly bootId?: string | undefined;
}

/** A new owner for a store opened by this process: this host, pid and start, and a fresh token. */
/**
 * A runs API that makes its own writes and answers reads from another (the fenced views: each write checks a
 * session lease first; reading needs no lease).
 */
export abstract class WritesOwnReadsFrom implements RunsApi {
  readonly #reads: RunsApi;

  protected constructor(reads: RunsApi) {
    this.#reads = reads;
  }

  abstract start(input: StartRunInput): Promise<RunRecord>;
  abstract update(runId: string, update: RunUpdate): Promise<RunRecord>;
  abstract finish(runId: string, input: FinishRunInput): Promise<RunRecord>;
  abstract appendEvents(runId: string, events: readonly RunEvent[]): Promise<void>;

  get(runId: string): Promise<RunRecord | undefined> {
    return this.#reads.get(runId);
  }
  listForSession(...args: Parameters<RunsApi["listForSession"]>): Promise<RunRecord[]> {
    return this.#reads.listForSession(...args);
  }
  events(...args: Parameters<RunsApi["events"]>): Promise<RunEvent[]> {
    return this.#reads.events(...args);
  }
  recoverInterrupted(now?: number): Promise<RunRecord[]> {
    return this.#reads.recoverInterrupted(now);
  }
}

export function newRunOwner(token: string): RunOwner {
  const start = ownProcessStart();
  return { host: hostname(), pid: process.pid, token, ...start };
}

/** Tokens of the stores open in this process: a run owned by a closed store of this process is orphaned. */
const liveOwnerTokens = new Set<string>();

export function registerRunOwner(owner: RunOwner): void {
  liveOwnerTokens.add(owner.token);
}

export function unregisterRunOwner(owner: RunOwner): void {
  liveOwnerTokens.delete(owner.token);
}

export function isRunOwnerAlive(owner: RunOwner): boolean {
  // Another machine's process cannot be probed; SQLite is single-machine, PostgreSQL will use leases.
  if (owner.host !== hostname()) return true;
  if (owner.pid === process.pid) return liveOwnerTokens.has(owner.token);
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    const exists = typeof error === "object" && error !== null && "code" in error && error.code === "EPERM";
    if (!exists) return false;
  }
  // The pid is taken; by the owner only if that process started when (and in the boot) the owner recorded.
  if (owner.startTime === undefined && owner.bootId === undefined) return true;
  return !isOtherProcess(owner, readProcessStart(owner.pid), currentBootId());
}

/** The owner recorded in a run row (start columns are null on rows written before migration 6). */
export function runOwnerOf(row: {
  readonly owner_host: string;
  readonly owner_pid: number;
  readonly owner_token: string;
  readonly owner_start_time: number | null;
  readonly owner_boot_id: string | null;
}): RunOwner {
  return {
    host: row.owner_host,
    pid: row.owner_pid,
    token: row.owner_token,
    ...(row.owner_start_time === null ? {} : { startTime: Number(row.owner_start_time) }),
    ...(row.owner_boot_id === null ? {} : { bootId: row.owner_boot_id }),
  };
}

export class KyselyRuns implements RunsApi {
  readonly #db: Kysely<ControlPlaneDatabase>;
  readonly #owner: RunOwner;

  constructor(db: Kysely<ControlPlaneDatabase>, owner: RunOwner) {
    this.#db = db;
    this.#owner = owner;
  }

  async start(input: StartRunInput): Promise<RunRecord> {
    const now = input.startedAt ?? Date.now();
    await this.#db
      .insertInto("runs")
      .values({
        run_id: input.runId,
        agent_id: input.agentId,
        session_key: input.sessionKey,
        session_id: input.sessionId,
        entry_point: input.entryPoint,
        status: "running",
        started_at: now,
        provider: input.provider ?? null,
        model: input.model ?? null,
        thinking_level: input.thinkingLevel ?? null,
        fallback_chain: "[]",
        owner_host: this.#owner.host,
        owner_pid: this.#owner.pid,
        owner_token: this.#owner.token,
        owner_start_time: this.#owner.startTime ?? null,
        owner_boot_id: this.#owner.bootId ?? null,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.column("run_id").doNothing())
      .execute();
    const stored = await this.#require(input.runId);
    const same =
      stored.agentId === input.agentId &&
      stored.sessionKey === input.sessionKey &&
      stored.sessionId === input.sessionId &&
      stored.entryPoint === input.entryPoint;
    if (!same) {
      throw new IdempotencyConflictError(
        `run ${input.runId} already exists for ${stored.agentId}/${stored.sessionKey} session ${stored.sessionId} ` +
          `(${stored.entryPoint}); refusing to start it again for ${input.agentId}/${input.sessionKey} session ${input.sessionId} (${input.entryPoint})`,
      );
    }
    return stored;
  }

  async update(runId: string, update: RunUpdate): Promise<RunRecord> {
    await this.#db
      .updateTable("runs")
      .set({ ...updateColumns(update), updated_at: Date.now() })
      .where("run_id", "=", runId)
      .execute();
    return this.#require(runId);
  }

  async finish(runId: string, input: FinishRunInput): Promise<RunRecord> {
    if (input.events !== undefined) await this.appendEvents(runId, input.events);
    const endedAt = input.endedAt ?? Date.now();
    const result = await this.#db
      .updateTable("runs")
      .set({
        ...updateColumns(input),
        status: input.status,
        ended_at: endedAt,
        error_reason: input.errorReason ?? null,
        error_message: input.errorMessage ?? null,
        updated_at: endedAt,
      })
      .where("run_id", "=", runId)
      .where("status", "=", "running")
      .executeTakeFirst();
    const stored = await this.#require(runId);
    if (Number(result.numUpdatedRows) === 0 && stored.status !== input.status) {
      throw new IdempotencyConflictError(
        `run ${runId} already ended as ${stored.status}; cannot finish it as ${input.status}`,
      );
    }
    return stored;
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    const row = await this.#db.selectFrom("runs").selectAll().where("run_id", "=", runId).executeTakeFirst();
    return row === undefined ? undefined : toRunRecord(row);
  }

  async listForSession(ref: SessionRef, options: { readonly limit?: number } = {}): Promise<RunRecord[]> {
    let query = this.#db
      .selectFrom("runs")
      .selectAll()
      .where("agent_id", "=", ref.agentId)
      .where("session_key", "=", ref.sessionKey)
      .orderBy("started_at", "desc")
      .orderBy("run_id", "desc");
    if (options.limit !== undefined) query = query.limit(options.limit);
    return (await query.execute()).map(toRunRecord);
  }

  async appendEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.#require(runId);
    await this.#db.transaction().execute(async (trx) => {
      for (const event of events) {
        const data = runEventDataText(event.data);
        const inserted = await trx
          .insertInto("run_events")
          .values({ run_id: runId, seq: event.seq, ts: event.ts, stream: event.stream, data })
          .onConflict((conflict) => conflict.columns(["run_id", "seq"]).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) continue;
        const stored = await trx
          .selectFrom("run_events")
          .selectAll()
          .where("run_id", "=", runId)
          .where("seq", "=", event.seq)
          .executeTakeFirstOrThrow();
        if (
          stored.ts !== event.ts ||
          stored.stream !== event.stream ||
          !sameRunEventData(stored.data, data)
        ) {
          throw new IdempotencyConflictError(
            `run ${runId} already has a different event with seq ${event.seq}`,
          );
        }
      }
    });
  }

  async events(runId: string, options: { readonly afterSeq?: number } = {}): Promise<RunEvent[]> {
    const rows = await this.#db
      .selectFrom("run_events")
      .selectAll()
      .where("run_id", "=", runId)
      .where("seq", ">", options.afterSeq ?? Number.MIN_SAFE_INTEGER)
      .orderBy("seq")
      .execute();
    return rows.map(toRunEvent);
  }

  async recoverInterrupted(now: number = Date.now()): Promise<RunRecord[]> {
    const running = await this.#db.selectFrom("runs").selectAll().where("status", "=", "running").execute();
    const orphaned = running.filter((row) => !isRunOwnerAlive(runOwnerOf(row)));
    const recovered: RunRecord[] = [];
    for (const row of orphaned) {
      const result = await this.#db
        .updateTable("runs")
        .set({
          status: "interrupted",
          ended_at: now,
          error_reason: "interrupted",
          error_message: `the process that ran it (pid ${row.owner_pid} on ${row.owner_host}) ended before the run finished`,
          updated_at: now,
        })
        .where("run_id", "=", row.run_id)
        .where("status", "=", "running")
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) recovered.push(await this.#require(row.run_id));
    }
    return recovered;
  }

  async #require(runId: string): Promise<RunRecord> {
    const run = await this.get(runId);
    if (run === undefined) throw new RecordNotFoundError(`no run ${runId}`);
    return run;
  }
}

function updateColumns(update: RunUpdate): Partial<Selectable<RunsTable>> {
  return {
    ...(update.provider === undefined ? {} : { provider: update.provider }),
    ...(update.model === undefined ? {} : { model: update.model }),
    ...(update.thinkingLevel === undefined ? {} : { thinking_level: update.thinkingLevel }),
    ...(update.fallbackChain === undefined ? {} : { fallback_chain: JSON.stringify(update.fallbackChain) }),
    ...(update.authProfileId === undefined ? {} : { auth_profile_id: update.authProfileId }),
    ...(update.usage === undefined ? {} : { usage: JSON.stringify(update.usage) }),
    ...(update.costUsd === undefined ? {} : { cost_usd: update.costUsd }),
  };
}

export function toRunRecord(row: Selectable<RunsTable>): RunRecord {
  return {
    runId: row.run_id,
    agentId: row.agent_id,
    sessionKey: row.session_key,
    sessionId: row.session_id,
    entryPoint: row.entry_point,
    status: row.status as RunStatus,
    startedAt: row.started_at,
    fallbackChain: JSON.parse(row.fallback_chain) as FallbackAttempt[],
    ...(row.ended_at === null ? {} : { endedAt: row.ended_at }),
    ...(row.provider === null ? {} : { provider: row.provider }),
    ...(row.model === null ? {} : { model: row.model }),
    ...(row.thinking_level === null ? {} : { thinkingLevel: row.thinking_level }),
    ...(row.auth_profile_id === null ? {} : { authProfileId: row.auth_profile_id }),
    ...(row.usage === null ? {} : { usage: JSON.parse(row.usage) as RunUsage }),
    ...(row.cost_usd === null ? {} : { costUsd: row.cost_usd }),
    ...(row.error_reason === null ? {} : { errorReason: row.error_reason }),
    ...(row.error_message === null ? {} : { errorMessage: row.error_message }),
  };
}

function toRunEvent(row: Selectable<RunEventsTable>): RunEvent {
  return { seq: row.seq, ts: row.ts, stream: row.stream, data: JSON.parse(row.data) as unknown };
}
