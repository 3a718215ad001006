// The values a SQLite run write binds and the rules a journaled run write applies in memory: the update
// columns (`COALESCE(?, column)`), a new run's insert values, what this store knows of a run it started through
// its journal (its row, its events' texts) and appendEvents' rules against that. Owns: those values and rules,
// kept in one place so the direct statements (./runs.ts), the journal's lines (./run-journal.ts) and their fold
// bind the same lists. Does not own: when a write is journaled or written directly (./runs.ts), or the lines
// (./run-journal.ts).
import type { Selectable } from "kysely";
import { IdempotencyConflictError } from "../errors.ts";
import { type RunEvent, type RunUpdate, runEventDataText } from "../runs.ts";
import type { RunsTable } from "../schema.ts";
import type { JournaledEvent, JournaledStart, JournaledUpdateValues } from "./run-journal.ts";

export type RunRow = Selectable<RunsTable>;

/** A run this store started through its journal and has not finished: what it last wrote, and its events. */
export interface KnownRun {
  row: RunRow;
  /** Per seq journaled: `ts`, `stream` and the data's JSON, to apply appendEvents' rules without a read. */
  readonly events: Map<number, string>;
}

/** An update's column values, in `UPDATE_COLUMNS` order: the journal's own tuple (run-journal.ts). */
export type UpdateValues = JournaledUpdateValues;

/** `COALESCE(?, column)`: an absent field (bound as NULL) leaves the column as it is; no field is ever null. */
export const UPDATE_COLUMNS =
  "provider = COALESCE(?, provider), model = COALESCE(?, model), " +
  "thinking_level = COALESCE(?, thinking_level), fallback_chain = COALESCE(?, fallback_chain), " +
  "auth_profile_id = COALESCE(?, auth_profile_id), usage = COALESCE(?, usage), cost_usd = COALESCE(?, cost_usd)";

export function refusalError(refusals: readonly string[]): IdempotencyConflictError {
  return new IdempotencyConflictError(
    `journaled run writes refused when folded into SQLite: ${refusals.slice(0, 5).join("; ")}` +
      (refusals.length > 5 ? ` (and ${refusals.length - 5} more)` : ""),
  );
}

/** The row with an update's present values (`COALESCE(?, column)` in JS). */
export function withValues(row: RunRow, values: UpdateValues): RunRow {
  const [provider, model, thinkingLevel, fallbackChain, authProfileId, usage, costUsd] = values;
  return {
    ...row,
    provider: provider ?? row.provider,
    model: model ?? row.model,
    thinking_level: thinkingLevel ?? row.thinking_level,
    fallback_chain: fallbackChain ?? row.fallback_chain,
    auth_profile_id: authProfileId ?? row.auth_profile_id,
    usage: usage ?? row.usage,
    cost_usd: costUsd ?? row.cost_usd,
  };
}

export function eventKey(event: JournaledEvent): string {
  return `${event.ts}\u0000${event.stream}\u0000${event.data}`;
}

/**
 * appendEvents' rules against what this store journaled of the run: the events not journaled yet; an event
 * again is a no-op, another event with a used seq throws (nothing journaled then).
 */
export function newEvents(runId: string, known: KnownRun, events: readonly RunEvent[]): JournaledEvent[] {
  const fresh: JournaledEvent[] = [];
  const inBatch = new Map<number, string>();
  for (const event of events) {
    const stored: JournaledEvent = {
      seq: event.seq,
      ts: event.ts,
      stream: event.stream,
      data: runEventDataText(event.data),
    };
    const key = eventKey(stored);
    const before = known.events.get(event.seq) ?? inBatch.get(event.seq);
    if (before === key) continue;
    if (before !== undefined)
      throw new IdempotencyConflictError(`run ${runId} already has a different event with seq ${event.seq}`);
    inBatch.set(event.seq, key);
    fresh.push(stored);
  }
  return fresh;
}

export function updateValues(update: RunUpdate): UpdateValues {
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

/**
 * A new run's columns in the order of the insert statement: what `insertRow` binds and what a journaled run
 * start carries (its fold binds the same list), kept in one place so the two cannot drift apart.
 */
export function runRowValues(row: RunRow): JournaledStart {
  return [
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
  ];
}
