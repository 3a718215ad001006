// One cron run: the job as a new session under `agent:<agentId>:cron:<jobId>` through prepareSession and
// executeTurn, delivering the last deliverable payload, then recording the run's result and the job's next
// slot (with error backoff) in its cron_state row, which also ends the lease. Owns: that run and its record.
// Does not own: when a job runs or its lease (scheduler.ts, lease.ts), turns (the kernel) or transports.
import { randomUUID } from "node:crypto";
import type { AnyKernelStore, Kernel, TurnOutcome } from "@agent-kernel/kernel";
import type { CronClock } from "./clock.ts";
import { type CronDeliveryChannel, type DeliveryResult, deliverOutcome } from "./delivery.ts";
import { withErrorBackoff } from "./error-backoff.ts";
import type { ResolvedCronJob } from "./jobs.ts";
import type { CronJobStats } from "./lease.ts";
import { cronPrompt } from "./prompt.ts";
import { nextRunAfter } from "./schedule.ts";
import type { CronRunResult } from "./scheduler-types.ts";

/** The entry point recorded on every cron run. */
export const CRON_ENTRY_POINT = "cron";

/** `agent:<agentId>:cron:<jobId>`: the session key every run of a job starts a new session under. */
export function cronSessionKey(agentId: string, jobId: string): string {
  return `agent:${agentId.toLowerCase()}:cron:${jobId.toLowerCase()}`;
}

/** What a run needs from its scheduler. */
export interface CronRunContext {
  readonly kernel: () => Promise<Kernel>;
  readonly store: () => Promise<AnyKernelStore>;
  readonly channels: readonly CronDeliveryChannel[];
  readonly clock: CronClock;
  /** The scheduler's current stop signal (read when the turn starts and when it ends). */
  readonly signal: () => AbortSignal;
}

/** The run as a turn: its outcome, new session id, delivery and error (never throws). */
async function runTurn(
  context: CronRunContext,
  resolved: ResolvedCronJob,
  sessionKey: string,
  startedAt: number,
): Promise<{ outcome?: TurnOutcome; sessionId?: string; delivery?: DeliveryResult; error?: string }> {
  const { job, agentId } = resolved;
  let outcome: TurnOutcome | undefined;
  let sessionId: string | undefined;
  let delivery: DeliveryResult | undefined;
  let error: string | undefined;
  try {
    const kernel = await context.kernel();
    const model = job.payload.model;
    const prepared = await kernel.prepareSession({
      agentId,
      sessionKey,
      runOptions: {
        entryPoint: CRON_ENTRY_POINT,
        // An isolated run: a new session id every time (OpenClaw `sessionTarget: "isolated"`).
        forceNewSession: true,
        ...(model === undefined
          ? {}
          : { cronPayload: typeof model === "string" ? { primary: model } : model }),
        ...(job.payload.thinking === undefined ? {} : { thinking: job.payload.thinking }),
        ...(job.payload.timeoutSeconds === undefined ? {} : { timeoutSeconds: job.payload.timeoutSeconds }),
      },
    });
    sessionId = prepared.transcript.sessionId;
    outcome = await kernel.executeTurn(prepared, {
      prompt: cronPrompt(job, startedAt),
      runId: randomUUID(),
      signal: context.signal(),
    });
    if (outcome.status !== "ok") {
      error = [outcome.status, outcome.result.reason, outcome.result.errorMessage].filter(Boolean).join(": ");
    } else if (
      job.delivery?.mode === "announce" &&
      job.delivery.channel !== undefined &&
      job.delivery.to !== undefined
    ) {
      delivery = await deliverOutcome(
        context.channels,
        { channel: job.delivery.channel, to: job.delivery.to },
        outcome,
      );
      if (delivery.status === "failed")
        error = `delivery to ${delivery.channel}:${delivery.to} failed: ${delivery.error}`;
    }
  } catch (thrown) {
    error = thrown instanceof Error ? thrown.message : String(thrown);
  }
  return {
    ...(outcome === undefined ? {} : { outcome }),
    ...(sessionId === undefined ? {} : { sessionId }),
    ...(delivery === undefined ? {} : { delivery }),
    ...(error === undefined ? {} : { error }),
  };
}

/** Runs a claimed job once and records it; `keepNextRunAt` (a manual run) leaves the job's next slot. */
export async function runCronJob(
  context: CronRunContext,
  resolved: ResolvedCronJob,
  claimed: CronJobStats,
  scheduledAt: number,
  catchUp: boolean,
  options: { readonly keepNextRunAt?: boolean },
): Promise<CronRunResult> {
  const { job, agentId } = resolved;
  const startedAt = claimed.runningSince ?? context.clock.now();
  const sessionKey = cronSessionKey(agentId, job.id);
  const { outcome, sessionId, delivery, error } = await runTurn(context, resolved, sessionKey, startedAt);
  const endedAt = context.clock.now();
  // stopped by `stop()` (the abort reached the run, or the run failed to start once it was aborted)
  const stopped = context.signal().aborted && (outcome === undefined || outcome.status === "aborted");
  const status = stopped ? "aborted" : error === undefined ? "ok" : "error";
  const store = await context.store();
  const slotAfter = nextRunAfter(
    job.schedule,
    endedAt,
    job.schedule.kind === "every" ? scheduledAt : undefined,
  );
  const next =
    status === "aborted"
      ? scheduledAt
      : withErrorBackoff(job, slotAfter, status, endedAt, claimed.consecutiveErrors + 1);
  await store.cron.update(
    job.id,
    (current) => {
      const {
        runningSince: _running,
        nextRunAt: currentNext,
        lastError: _lastError,
        lastRunId: _lastRunId,
        ...rest
      } = current;
      const nextRunAt = options.keepNextRunAt ? currentNext : next;
      return {
        ...rest,
        agentId,
        ...(nextRunAt === undefined ? {} : { nextRunAt }),
        lastRunAt: startedAt,
        lastStatus: status,
        lastDurationMs: endedAt - startedAt,
        ...(outcome === undefined ? {} : { lastRunId: outcome.runId }),
        ...(error === undefined ? {} : { lastError: error }),
        consecutiveErrors:
          status === "ok"
            ? 0
            : status === "aborted"
              ? current.consecutiveErrors
              : current.consecutiveErrors + 1,
      };
    },
    { now: endedAt },
  );
  return {
    jobId: job.id,
    agentId,
    sessionKey,
    ...(sessionId === undefined ? {} : { sessionId }),
    ...(outcome === undefined ? {} : { runId: outcome.runId, outcome }),
    scheduledAt,
    startedAt,
    endedAt,
    catchUp,
    status,
    ...(error === undefined ? {} : { error }),
    ...(delivery === undefined ? {} : { delivery }),
  };
}
