// The run record's later writes and the turn's result. Owns: the fallback chain stored as attempts fail, and
// finishing the run: the `end` event, then one write of the events (run-event-storage.ts), the final status,
// the last attempt's model, level and profile, the fallback chain, usage and cost, and the reason and error
// message; then the `TurnResult` (thrown inside a `TurnNotRecordedError` when the store cannot record the
// run). Does not own: starting the run, or the transcript and when it becomes durable (execute-turn.ts), or
// deciding how the turn ended (attempt-outcome.ts).
import type { ModelCandidate } from "@agent-kernel/runtime-resolver";
import type { FallbackAttempt, FinalRunStatus } from "@agent-kernel/session-store";
import { toStoredRunEvents } from "./run-event-storage.ts";
import { storageFailureOf, TurnNotRecordedError } from "./storage-failure.ts";
import type { TurnScope } from "./turn-state.ts";
import type { AttemptRecord, TurnResult, TurnStatus } from "./types.ts";

const STATUS_TO_RUN: Readonly<Record<TurnStatus, FinalRunStatus>> = {
  ok: "succeeded",
  error: "failed",
  aborted: "aborted",
  timeout: "timed_out",
};

function toFallbackAttempt(attempt: AttemptRecord): FallbackAttempt {
  return {
    provider: attempt.provider,
    model: attempt.model,
    ...(attempt.authProfileId === undefined ? {} : { authProfileId: attempt.authProfileId }),
    ...(attempt.reason === undefined ? {} : { reason: attempt.reason }),
    ...(attempt.error === undefined ? {} : { error: attempt.error }),
  };
}

/** Stores the attempts so far as the run's fallback chain. */
export async function recordFallbackChain(turn: TurnScope): Promise<void> {
  await turn.context.store.runs.update(turn.runId, {
    fallbackChain: turn.state.attempts.map(toFallbackAttempt),
  });
}

/**
 * Ends the run: the `end` event, the run record finished with the turn's events, and the turn's result; a
 * store that cannot record it throws `TurnNotRecordedError` carrying that result.
 */
export async function finishRun(turn: TurnScope, firstCandidate: ModelCandidate): Promise<TurnResult> {
  const { context, runId, log, state } = turn;
  const { status, reason, errorMessage, attempts, usage, answered } = state;
  log.emit("lifecycle", {
    phase: "end",
    status,
    ...(reason === undefined ? {} : { reason }),
    ...(errorMessage === undefined ? {} : { errorMessage }),
  });
  const fallback =
    answered && (answered.provider !== firstCandidate.provider || answered.model !== firstCandidate.model)
      ? { provider: answered.provider, model: answered.model }
      : undefined;
  const result: TurnResult = {
    runId,
    status,
    ...(reason === undefined ? {} : { reason }),
    ...(errorMessage === undefined ? {} : { errorMessage }),
    payloads: state.payloads,
    assistantText: state.finalText,
    partial: state.partial,
    usage,
    ...(answered ? { provider: answered.provider, model: answered.model } : {}),
    ...(answered?.profileId === undefined ? {} : { authProfileId: answered.profileId }),
    attempts,
    ...(fallback ? { fallback } : {}),
    compactions: state.compactions,
    messagingToolTexts: state.messagingTexts,
    events: log.events,
  };
  // The events and the final status in one write (one transaction on SQLite); see run-event-storage.ts for
  // what is stored of the events. A store that cannot take it cannot record the run at all: the result
  // travels with the error instead (its reply can still be shown).
  try {
    await finishRecord(turn, result);
  } catch (error) {
    const failure = storageFailureOf(error, context.store);
    if (failure === undefined) throw error;
    throw new TurnNotRecordedError(result, failure);
  }
  return result;
}

/** The run record finished with the turn's events, status, models, usage and reason. */
async function finishRecord(turn: TurnScope, result: TurnResult): Promise<void> {
  const { context, now, log, state } = turn;
  const { status, reason, errorMessage, attempts, usage } = state;
  const lastAttempt = attempts.at(-1);
  await context.store.runs.finish(result.runId, {
    events: toStoredRunEvents(log.events, context.runEventStorage ?? "coalesce-deltas"),
    status: STATUS_TO_RUN[status],
    endedAt: now(),
    ...(lastAttempt ? { provider: lastAttempt.provider, model: lastAttempt.model } : {}),
    ...(lastAttempt ? { thinkingLevel: lastAttempt.thinkingLevel } : {}),
    ...(lastAttempt?.authProfileId === undefined ? {} : { authProfileId: lastAttempt.authProfileId }),
    fallbackChain: attempts.map(toFallbackAttempt),
    usage: {
      input: usage.input,
      output: usage.output,
      cacheRead: usage.cacheRead,
      cacheWrite: usage.cacheWrite,
      total: usage.total,
    },
    costUsd: usage.costUsd,
    ...(reason === undefined ? {} : { errorReason: reason }),
    ...(errorMessage === undefined ? {} : { errorMessage }),
  });
}
