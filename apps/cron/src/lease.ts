// A cron job's lease and slot bookkeeping in the store's cron_state row: how long a lease lasts, whether one
// is held, taking it (a versioned compare-and-set on `running_since`, so two schedulers on one store never
// both run a slot), skipping a missed slot under the same rule, a new job's first slot and a reloaded job's new slot. Owns: those
// row transitions. Does not own: when to look (scheduler.ts), running the job (run-job.ts) or schedule
// arithmetic (schedule.ts).
import type { KernelConfig } from "@agent-kernel/config";
import type { AnyKernelStore } from "@agent-kernel/kernel";
import type { CronJob, ResolvedCronJob } from "./jobs.ts";
import { nextRunAfter } from "./schedule.ts";
import type { CronJobState } from "./scheduler-types.ts";

/** A job's stored row as the store's `cron.update` hands it over. */
export type CronJobStats = Parameters<Parameters<AnyKernelStore["cron"]["update"]>[1]>[0];

/** The job is being run by someone else, or its slot moved on since we looked. */
export class LeaseTakenError extends Error {}

const MIN_LEASE_MS = 10 * 60_000;

/** How long a run's lease holds: the configured lease, else twice the job's timeout (at least 10 minutes). */
export function leaseMsOf(job: CronJob, config: KernelConfig, configured: number | undefined): number {
  if (configured !== undefined) return configured;
  const timeoutSeconds = job.payload.timeoutSeconds ?? config.agents.defaults.timeoutSeconds ?? 0;
  return Math.max(MIN_LEASE_MS, timeoutSeconds * 2000);
}

export function leaseHeld(
  state: { readonly runningSince?: number } | undefined,
  now: number,
  leaseMs: number,
): boolean {
  return state?.runningSince !== undefined && now - state.runningSince < leaseMs;
}

/** The first slot of a job that has no state yet (or whose schedule lost its next slot). */
export function initialNextRun(job: CronJob, state: CronJobState, now: number): number | undefined {
  if (job.schedule.kind === "at") {
    // A one-shot time runs once, however late it is first seen, and never again: once the job has a state
    // row, its slot was taken (run or skipped).
    return state === undefined ? Date.parse(job.schedule.at) : undefined;
  }
  return nextRunAfter(job.schedule, now);
}

/**
 * Takes the job's lease: sets `running_since` if no live lease is held and the slot is still the one we saw.
 * The store's update is a compare-and-set on the row's version, so of two schedulers claiming at once
 * one wins and the other re-reads, sees the lease and gets `LeaseTakenError`.
 */
export function claimLease(
  store: AnyKernelStore,
  resolved: ResolvedCronJob,
  slot: number | undefined,
  now: number,
  leaseMs: number,
): Promise<CronJobStats> {
  return store.cron.update(
    resolved.job.id,
    (current) => {
      if (leaseHeld(current, now, leaseMs) || current.nextRunAt !== slot) throw new LeaseTakenError();
      return { ...current, agentId: resolved.agentId, runningSince: now };
    },
    { now },
  );
}

/**
 * Moves a missed slot on to `next` without running it (`missedRuns: "skip"`), under the lease's rule;
 * false when another scheduler holds the lease or already moved the slot.
 */
export function skipSlot(
  store: AnyKernelStore,
  resolved: ResolvedCronJob,
  slot: number,
  next: number | undefined,
  now: number,
  leaseMs: number,
): Promise<boolean> {
  return store.cron
    .update(
      resolved.job.id,
      (current) => {
        if (current.nextRunAt !== slot || leaseHeld(current, now, leaseMs)) throw new LeaseTakenError();
        const { nextRunAt: _, ...rest } = current;
        return {
          ...rest,
          agentId: resolved.agentId,
          ...(next === undefined ? {} : { nextRunAt: next }),
        };
      },
      { now },
    )
    .then(
      () => true,
      (error: unknown) => {
        if (error instanceof LeaseTakenError) return false;
        throw error;
      },
    );
}

/** Records a new job's first slot, unless another scheduler recorded one meanwhile. */
export function setFirstSlot(
  store: AnyKernelStore,
  resolved: ResolvedCronJob,
  first: number,
  now: number,
): ReturnType<AnyKernelStore["cron"]["update"]> {
  return store.cron.update(
    resolved.job.id,
    (current) =>
      current.nextRunAt === undefined ? { ...current, agentId: resolved.agentId, nextRunAt: first } : current,
    { now },
  );
}

/** A reloaded job whose schedule changed takes its next slot from the new schedule. */
export async function rescheduleSlot(
  store: AnyKernelStore,
  resolved: ResolvedCronJob,
  now: number,
  leaseMs: number,
): Promise<void> {
  const { job } = resolved;
  // A one-shot time the operator moved runs at its new time even though the job has a state row.
  const slot = job.schedule.kind === "at" ? Date.parse(job.schedule.at) : nextRunAfter(job.schedule, now);
  await store.cron.update(
    job.id,
    (current) => {
      // A run in flight sets the next slot when it ends; the slot after that follows the new schedule.
      if (leaseHeld(current, now, leaseMs)) return current;
      const { nextRunAt: _, ...rest } = current;
      return { ...rest, agentId: resolved.agentId, ...(slot === undefined ? {} : { nextRunAt: slot }) };
    },
    { now },
  );
}
