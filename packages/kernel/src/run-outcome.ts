// How a turn ends, as the kernel reports and records it. Owns: the normalised `TurnOutcome` (status, result,
// decisions, session metadata, timings with the kernel's phases), and the records of runs the executor did
// not finish — it threw (`executorFailed`: the run failed with what it streamed so far) or the run ended
// before it started (`endedBeforeStart`: aborted while queued, or a lease that stayed busy past the timeout).
// Does not own: running the turn or its lane (kernel.ts), the decisions themselves (run-decisions.ts), the
// phase clock (phase-clock.ts), or runs the executor finished (it records them itself).
import { performance } from "node:perf_hooks";
import type { SessionStore } from "@agent-kernel/session-store";
import {
  STORAGE_REASON,
  storageFailureOf,
  TurnNotRecordedError,
  type TurnResult,
} from "@agent-kernel/turn-pipeline";
import type { PhaseClock } from "./phase-clock.ts";
import type { RunDecisionMaker } from "./run-decisions.ts";
import type { RunRegistry } from "./run-registry.ts";
import type { AgentEventPayload, PreparedSession, RunDecisions, TurnInput, TurnOutcome } from "./types.ts";

/** What the endings of runs outside the executor need from their kernel. */
export interface RunEndingDeps {
  /** The kernel's store itself (not the executor's view). */
  readonly store: SessionStore;
  readonly registry: RunRegistry;
  readonly decisions: RunDecisionMaker;
  readonly now: () => number;
}

const EMPTY_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, costUsd: 0 } as const;

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function turnOutcome(
  runId: string,
  result: TurnResult,
  decisions: RunDecisions,
  sessionMeta: TurnOutcome["sessionMeta"],
  started: number,
  queuedMs: number,
  executorMs: number,
  clock: PhaseClock,
): TurnOutcome {
  const totalMs = performance.now() - started;
  return {
    runId,
    status: result.status,
    result,
    events: result.events,
    ...(result.fallback ? { fallback: result.fallback } : {}),
    decisions,
    sessionMeta,
    timings: {
      queuedMs,
      executorMs,
      totalMs,
      overheadMs: Math.max(0, totalMs - queuedMs - executorMs),
      // Final once `executeTurn` returns (it adds settling the run).
      kernelMs: clock.totalMs,
      phases: clock.phases,
    },
  };
}

async function startRunRecord(
  deps: RunEndingDeps,
  prepared: PreparedSession,
  runId: string,
  decisions?: RunDecisions,
): Promise<void> {
  const runtime = prepared.runtimeContext;
  await deps.store.runs.start({
    runId,
    agentId: runtime.agentId.value,
    sessionKey: runtime.sessionKey.value,
    sessionId: prepared.transcript.sessionId,
    entryPoint: prepared.defaults.entryPoint,
    startedAt: deps.now(),
    provider: runtime.model.value.provider,
    model: runtime.model.value.model,
    thinkingLevel: runtime.thinking.value,
  });
  if (decisions === undefined) return;
  await deps.store.runs.appendEvents(runId, [
    { seq: 0, ts: deps.now(), stream: "lifecycle", data: decisions },
  ]);
}

/**
 * The executor threw (a store failure, a bug): end the run as failed with what it streamed so far. A store
 * that failed it (full, read-only, damaged, unreadable: see turn-pipeline's storage-failure.ts) is thrown on,
 * as the kernel's contract says — classified, naming the file, after one try at recording the run as failed
 * with reason `storage` — rather than ending in a result whose later writes would fail less clearly (a run
 * that never started is "no run" to them). A `TurnNotRecordedError` carries the turn's result along.
 */
export async function executorFailed(
  deps: RunEndingDeps,
  prepared: PreparedSession,
  runId: string,
  events: AgentEventPayload[],
  error: unknown,
  signal: AbortSignal,
): Promise<TurnResult> {
  const storage = storageFailureOf(error, deps.store);
  if (storage !== undefined) {
    await recordStorageFailure(deps, prepared, runId, events, storage.message);
    throw error instanceof TurnNotRecordedError ? error : storage;
  }
  const message = errorText(error);
  // A lost lease aborts the turn (kernel's doing, not the caller's): that is a failure.
  const leaseLost = error instanceof Error && error.name === "LeaseLostError";
  const status = signal.aborted && !leaseLost ? "aborted" : "error";
  const end: AgentEventPayload = {
    runId,
    seq: (events.at(-1)?.seq ?? 0) + 1,
    ts: deps.now(),
    stream: "lifecycle",
    data: { phase: "end", status, reason: "internal", errorMessage: message },
  };
  events.push(end);
  deps.registry.publish(end);
  try {
    // The executor may have thrown before it created the record; starting it again changes nothing.
    await startRunRecord(deps, prepared, runId);
    await deps.store.runs.appendEvents(
      runId,
      events.map(({ seq, ts, stream, data }) => ({ seq, ts, stream, data })),
    );
    await deps.store.runs.finish(runId, {
      status: status === "aborted" ? "aborted" : "failed",
      errorReason: "internal",
      errorMessage: message,
    });
  } catch {
    // The record may already be final (the executor finished it before throwing); the outcome says why.
  }
  return {
    runId,
    status,
    reason: "internal",
    errorMessage: message,
    payloads: [],
    assistantText: "",
    partial: false,
    usage: EMPTY_USAGE,
    attempts: [],
    compactions: 0,
    messagingToolTexts: [],
    events: [...events],
  };
}

/** One try at storing the run as failed for its store; the store failing again leaves it to recovery. */
async function recordStorageFailure(
  deps: RunEndingDeps,
  prepared: PreparedSession,
  runId: string,
  events: AgentEventPayload[],
  message: string,
): Promise<void> {
  const end: AgentEventPayload = {
    runId,
    seq: (events.at(-1)?.seq ?? 0) + 1,
    ts: deps.now(),
    stream: "lifecycle",
    data: { phase: "end", status: "error", reason: STORAGE_REASON, errorMessage: message },
  };
  events.push(end);
  deps.registry.publish(end);
  try {
    await startRunRecord(deps, prepared, runId);
    await deps.store.runs.finish(runId, {
      status: "failed",
      errorReason: STORAGE_REASON,
      errorMessage: message,
      events: events.map(({ seq, ts, stream, data }) => ({ seq, ts, stream, data })),
    });
  } catch {
    // Still failing (the usual case): the run stays `running` until the next open marks it interrupted.
  }
}

/**
 * The run ended before it reached the front of its lane: aborted while queued, or (with leases) its
 * session's lease stayed with another process past the turn's timeout. Recorded, never sent to a model.
 * Rare, so its store writes are timed as whole awaits (an upper bound) rather than split per segment.
 */
export async function endedBeforeStart(
  deps: RunEndingDeps,
  prepared: PreparedSession,
  turn: TurnInput,
  runId: string,
  started: number,
  clock: PhaseClock,
  how: "aborted" | "timeout",
  why?: string,
): Promise<TurnOutcome> {
  clock.enter("bookkeepingMs");
  const queuedMs = performance.now() - started;
  const { lines } = deps.decisions.policyFor(prepared, turn);
  const decisions = deps.decisions.decisions(prepared, queuedMs, lines);
  clock.enter("runRecordMs");
  await startRunRecord(deps, prepared, runId, decisions);
  const errorMessage =
    how === "aborted"
      ? "aborted while queued; the turn never started"
      : `timed out while queued; the turn never started: ${why ?? "the session stayed busy"}`;
  const ts = deps.now();
  const events: AgentEventPayload[] = [
    {
      runId,
      seq: 1,
      ts,
      stream: "lifecycle",
      data: {
        phase: "start",
        entryPoint: prepared.defaults.entryPoint,
        sessionId: prepared.transcript.sessionId,
      },
    },
    {
      runId,
      seq: 2,
      ts,
      stream: "lifecycle",
      data: { phase: "end", status: how, reason: how, errorMessage },
    },
  ];
  for (const event of events) {
    deps.registry.publish(event);
    turn.callbacks?.onAgentEvent?.(event);
  }
  await deps.store.runs.appendEvents(
    runId,
    events.map(({ seq, ts: at, stream, data }) => ({ seq, ts: at, stream, data })),
  );
  await deps.store.runs.finish(runId, {
    status: how === "aborted" ? "aborted" : "timed_out",
    errorReason: how,
    errorMessage,
  });
  const result: TurnResult = {
    runId,
    status: how,
    reason: how,
    errorMessage,
    payloads: [],
    assistantText: "",
    partial: false,
    usage: EMPTY_USAGE,
    attempts: [],
    compactions: 0,
    messagingToolTexts: [],
    events,
  };
  clock.enter("sessionUpdateMs");
  const row = await deps.store.sessions.get({
    agentId: prepared.runtimeContext.agentId.value,
    sessionKey: prepared.runtimeContext.sessionKey.value,
  });
  clock.enter("outcomeMs");
  const outcome = turnOutcome(runId, result, decisions, row?.meta ?? {}, started, queuedMs, 0, clock);
  clock.pause();
  await turn.delivery?.onFinal?.([], outcome);
  return outcome;
}
