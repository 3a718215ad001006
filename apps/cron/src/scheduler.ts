// The cron scheduler: turns due jobs into isolated kernel turns. Owns: reading each job's state from the store's
// cron_state table, deciding what is due, the missed-run policy after downtime (`run-once`: one catch-up run;
// `skip`: move on to the next slot), the lease that keeps a job from overlapping itself — in this process or in
// another scheduler on the same store (`running_since`, claimed by a versioned compare-and-set) — running the
// job as a new session under `agent:<agentId>:cron:<jobId>` through prepareSession/executeTurn, delivering the
// last deliverable payload, recording the run's result and the next slot, and run history from the kernel's
// run records. Does not own turns (the kernel), schedules' arithmetic (schedule.ts) or transports (channels).
import { randomUUID } from "node:crypto";
import { CRON_DEFAULTS, type KernelConfig } from "@agent-kernel/config";
import {
  type AnyKernelStore,
  createKernel,
  type Kernel,
  listRuns,
  openKernelStore,
  type RunRecord,
  type TurnOutcome,
} from "@agent-kernel/kernel";
import { type CronClock, systemClock, type TimerHandle } from "./clock.ts";
import { type CronDeliveryChannel, type DeliveryResult, deliverOutcome } from "./delivery.ts";
import { withErrorBackoff } from "./error-backoff.ts";
import { type CronJobsReload, diffJobs, isEmptyReload, watchJobsFile } from "./job-reload.ts";
import { type CronJob, jobsFilePath, loadCronJobs, type ResolvedCronJob } from "./jobs.ts";
import { cronPrompt } from "./prompt.ts";
import { nextRunAfter } from "./schedule.ts";
import type {
  CronJobState,
  CronJobView,
  CronRunResult,
  CronSchedulerOptions,
  TickReport,
} from "./scheduler-types.ts";

type CronJobStats = Parameters<Parameters<AnyKernelStore["cron"]["update"]>[1]>[0];

/** The entry point recorded on every cron run. */
export const CRON_ENTRY_POINT = "cron";

/** `agent:<agentId>:cron:<jobId>`: the session key every run of a job starts a new session under. */
export function cronSessionKey(agentId: string, jobId: string): string {
  return `agent:${agentId.toLowerCase()}:cron:${jobId.toLowerCase()}`;
}

/** The job is being run by someone else, or its slot moved on since we looked. */
class LeaseTakenError extends Error {}

const DEFAULT_MAX_SLEEP_MS = 60_000;
const DEFAULT_MISSED_GRACE_MS = 60_000;
const MIN_LEASE_MS = 10 * 60_000;

export class CronScheduler {
  readonly #options: CronSchedulerOptions;
  readonly #config: KernelConfig;
  readonly #clock: CronClock;
  #jobs: readonly ResolvedCronJob[];
  #stopWatching: (() => void) | undefined;
  #reloading: Promise<CronJobsReload> | undefined;
  readonly #channels: readonly CronDeliveryChannel[];
  readonly #ownsStore: boolean;
  readonly #stateDir: string | undefined;
  #store: AnyKernelStore | undefined;
  #kernel: Kernel | undefined;
  #opening: Promise<AnyKernelStore> | undefined;
  /** Runs in flight in this scheduler, by job id. */
  readonly #running = new Map<string, Promise<CronRunResult>>();
  /** `jobId@slot` seen due in time (then waiting for capacity): not missed however late it starts. */
  readonly #seenOnTime = new Set<string>();
  #ticking: Promise<TickReport> | undefined;
  /** The loop's current look: a tick, then arming the timer for the next one. */
  #cycle: Promise<void> | undefined;
  #started = false;
  #timer: TimerHandle | undefined;
  #abort = new AbortController();

  constructor(options: CronSchedulerOptions) {
    this.#options = options;
    this.#config = options.config;
    this.#clock = options.clock ?? systemClock();
    this.#stateDir = options.stateDir ?? options.config.store.stateDir;
    this.#jobs = this.#loadJobs();
    this.#channels = options.channels ?? [];
    this.#store = options.store;
    this.#ownsStore = options.store === undefined;
    if (options.store === undefined && this.#stateDir === undefined) {
      throw new Error(
        "createCronScheduler needs a store or a state dir (options.stateDir or config.store.stateDir)",
      );
    }
  }

  /** Every job with its stored state. */
  async list(): Promise<CronJobView[]> {
    const store = await this.#openStore();
    return Promise.all(
      this.#jobs.map(async ({ job, agentId, source }) => {
        const state = await store.cron.get(job.id);
        return {
          id: job.id,
          ...(job.name === undefined ? {} : { name: job.name }),
          agentId,
          enabled: job.enabled,
          source,
          schedule: job.schedule,
          ...(state === undefined ? {} : { state }),
        };
      }),
    );
  }

  /** The kernel's run records of a job, newest first. */
  async history(jobId: string, options: { readonly limit?: number } = {}): Promise<RunRecord[]> {
    const resolved = this.#job(jobId);
    const store = await this.#openStore();
    return listRuns(store, this.#config, {
      agentId: resolved.agentId,
      sessionKey: cronSessionKey(resolved.agentId, resolved.job.id),
      limit: options.limit ?? 50,
    });
  }

  /** Looks at every enabled job once and starts the due ones (runs go on in the background; see `idle()`). */
  tick(): Promise<TickReport> {
    // One tick at a time; a failed tick (its caller saw the error) does not fail the next.
    const previous = this.#ticking?.catch(() => undefined) ?? Promise.resolve(undefined);
    const ticking = previous.then(() => this.#tickOnce());
    this.#ticking = ticking;
    return ticking;
  }

  /** Runs a job now, outside its schedule, under the same lease; resolves when it finished. */
  async runNow(jobId: string): Promise<CronRunResult> {
    const resolved = this.#job(jobId);
    const store = await this.#openStore();
    const now = this.#clock.now();
    const state = await store.cron.get(resolved.job.id);
    const claimed = await this.#claim(resolved, state?.nextRunAt, now).catch((error: unknown) => {
      if (error instanceof LeaseTakenError) {
        throw new Error(
          `cron job "${resolved.job.id}" is already running (since ${new Date(state?.runningSince ?? now).toISOString()})`,
        );
      }
      throw error;
    });
    return this.#startRun(resolved, claimed, now, false, { keepNextRunAt: true });
  }

  /** Starts the timer loop: a tick now, then one at every next due slot (at least every `maxSleepMs`). */
  start(): void {
    if (this.#started) return;
    if (!this.#config.cron.enabled) return;
    this.#started = true;
    if (this.#abort.signal.aborted) this.#abort = new AbortController();
    this.#watchJobs();
    this.#loop();
  }

  /**
   * Loads the jobs again (the config's, the jobs file, the program's) and schedules by them from now on: an
   * added job gets its first slot, a removed one is no longer started (a run in flight finishes), a job whose
   * schedule changed takes its next slot from the new schedule. A jobs file that does not load throws and
   * leaves the jobs as they were.
   */
  reload(): Promise<CronJobsReload> {
    const previous = this.#reloading?.catch(() => undefined) ?? Promise.resolve(undefined);
    const reloading = previous.then(() => this.#reloadOnce());
    this.#reloading = reloading;
    return reloading;
  }

  /** Stops the loop, aborts runs in flight (stored as aborted) and closes the store it opened. */
  async stop(): Promise<void> {
    this.#started = false;
    this.#stopWatching?.();
    this.#stopWatching = undefined;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#abort.abort();
    await this.idle();
    if (this.#ownsStore && this.#store !== undefined) {
      await this.#store.close();
      this.#store = undefined;
      this.#kernel = undefined;
    }
  }

  /** Resolves when the current tick is done (runs it started may still be going). */
  async settled(): Promise<void> {
    for (;;) {
      const cycle = this.#cycle;
      const ticking = this.#ticking;
      if (cycle === undefined && ticking === undefined) return;
      await Promise.allSettled([cycle, ticking]);
      if (this.#cycle === cycle) this.#cycle = undefined;
      if (this.#ticking === ticking) this.#ticking = undefined;
    }
  }

  /** Resolves when no tick and no run is in flight. */
  async idle(): Promise<void> {
    for (;;) {
      await this.settled();
      if (this.#running.size === 0) return;
      await Promise.allSettled([...this.#running.values()]);
    }
  }

  #loadJobs(): ResolvedCronJob[] {
    return loadCronJobs({
      config: this.#config,
      stateDir: this.#stateDir,
      jobsFile: this.#options.jobsFile,
      jobs: this.#options.jobs,
    });
  }

  async #reloadOnce(): Promise<CronJobsReload> {
    const next = this.#loadJobs();
    const reload = diffJobs(this.#jobs, next);
    if (isEmptyReload(reload)) return reload;
    // The new jobs are in force before their states are touched: should a state update below fail, the jobs
    // stay the file's and only that job's next slot is the old schedule's (its run then follows the new one).
    this.#jobs = next;
    const store = await this.#openStore();
    const now = this.#clock.now();
    for (const id of reload.rescheduled) {
      const resolved = next.find(({ job }) => job.id === id);
      if (resolved === undefined) continue;
      const { job } = resolved;
      // A one-shot time the operator moved runs at its new time even though the job has a state row.
      const slot = job.schedule.kind === "at" ? Date.parse(job.schedule.at) : nextRunAfter(job.schedule, now);
      await store.cron.update(
        job.id,
        (current) => {
          // A run in flight sets the next slot when it ends; the slot after that follows the new schedule.
          if (this.#leaseHeld(job, current, now)) return current;
          const { nextRunAt: _, ...rest } = current;
          return { ...rest, agentId: resolved.agentId, ...(slot === undefined ? {} : { nextRunAt: slot }) };
        },
        { now },
      );
    }
    if (this.#started) {
      if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
      this.#loop();
    }
    return reload;
  }

  #watchJobs(): void {
    const intervalMs = this.#options.watchJobsFileMs;
    if (intervalMs === undefined || intervalMs === false || this.#stopWatching !== undefined) return;
    const path =
      this.#options.jobsFile === false
        ? undefined
        : (this.#options.jobsFile ??
          (this.#stateDir === undefined ? undefined : jobsFilePath(this.#stateDir)));
    if (path === undefined) return;
    this.#stopWatching = watchJobsFile(path, intervalMs, () => {
      this.reload().then(
        (reload) => this.#options.onJobsReloaded?.(reload),
        (error: unknown) =>
          this.#options.onJobsReloaded?.(error instanceof Error ? error : new Error(String(error))),
      );
    });
  }

  #job(jobId: string): ResolvedCronJob {
    const wanted = jobId.trim().toLowerCase();
    const resolved = this.#jobs.find(({ job }) => job.id.toLowerCase() === wanted);
    if (resolved === undefined) {
      const known = this.#jobs.map(({ job }) => job.id);
      throw new CronJobNotFoundError(
        `no cron job "${jobId}" (jobs: ${known.length > 0 ? known.join(", ") : "none configured"})`,
      );
    }
    return resolved;
  }

  #openStore(): Promise<AnyKernelStore> {
    if (this.#store !== undefined) return Promise.resolve(this.#store);
    const stateDir = this.#stateDir;
    if (stateDir === undefined) throw new Error("no state dir");
    this.#opening ??= openKernelStore({ stateDir, config: this.#config }).then((store) => {
      this.#store = store;
      return store;
    });
    return this.#opening;
  }

  async #kernelFor(): Promise<Kernel> {
    const store = await this.#openStore();
    this.#kernel ??= createKernel({
      // Every run forces a new session id, but the kernel's prewarm cache would hand back the previous
      // preparation (and its session id) for the same input: cron runs are rare, so it stays off here.
      prewarm: false,
      ...(this.#options.kernelOptions ?? {}),
      config: this.#config,
      store,
      now: () => this.#clock.now(),
    });
    return this.#kernel;
  }

  #loop(): void {
    if (!this.#started) return;
    this.#timer = undefined;
    const maxSleep = this.#options.maxSleepMs ?? DEFAULT_MAX_SLEEP_MS;
    const cycle = this.tick()
      .then(() => this.#nextWakeUp())
      .then(
        (wakeAt) =>
          Math.min(maxSleep, Math.max(0, wakeAt === undefined ? maxSleep : wakeAt - this.#clock.now())),
        // A failing store must not stop the loop for good: look again after the longest sleep.
        () => maxSleep,
      )
      .then((delay) => {
        if (!this.#started || this.#cycle !== cycle) return;
        if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
        this.#timer = this.#clock.setTimer(() => this.#loop(), delay);
      });
    this.#cycle = cycle;
  }

  /**
   * When to look again: the earliest future slot, or the expiry of a lease another scheduler holds. A slot
   * already due is not a reason to wake (it is running, or waits for capacity, which a finishing run frees).
   */
  async #nextWakeUp(): Promise<number | undefined> {
    const store = await this.#openStore();
    const now = this.#clock.now();
    let earliest: number | undefined;
    const consider = (at: number | undefined) => {
      if (at !== undefined && at > now && (earliest === undefined || at < earliest)) earliest = at;
    };
    for (const { job } of this.#jobs) {
      if (!job.enabled || this.#running.has(job.id)) continue;
      const state = await store.cron.get(job.id);
      consider(state?.nextRunAt);
      if (state?.runningSince !== undefined) consider(state.runningSince + this.#leaseMs(job));
    }
    return earliest;
  }

  #leaseMs(job: CronJob): number {
    if (this.#options.leaseMs !== undefined) return this.#options.leaseMs;
    const timeoutSeconds = job.payload.timeoutSeconds ?? this.#config.agents.defaults.timeoutSeconds ?? 0;
    return Math.max(MIN_LEASE_MS, timeoutSeconds * 2000);
  }

  #leaseHeld(job: CronJob, state: { readonly runningSince?: number } | undefined, now: number): boolean {
    return state?.runningSince !== undefined && now - state.runningSince < this.#leaseMs(job);
  }

  /** The first slot of a job that has no state yet (or whose schedule lost its next slot). */
  #initialNextRun(job: CronJob, state: CronJobState, now: number): number | undefined {
    if (job.schedule.kind === "at") {
      // A one-shot time runs once, however late it is first seen, and never again: once the job has a state
      // row, its slot was taken (run or skipped).
      return state === undefined ? Date.parse(job.schedule.at) : undefined;
    }
    return nextRunAfter(job.schedule, now);
  }

  async #tickOnce(): Promise<TickReport> {
    const report = { started: [], skipped: [], busy: [], deferred: [] } as {
      started: { jobId: string; scheduledAt: number; catchUp: boolean }[];
      skipped: { jobId: string; missedAt: number; nextRunAt?: number }[];
      busy: string[];
      deferred: string[];
    };
    if (!this.#config.cron.enabled) return report;
    const store = await this.#openStore();
    const maxConcurrent = this.#config.cron.maxConcurrentRuns ?? CRON_DEFAULTS.maxConcurrentRuns;
    for (const resolved of this.#jobs) {
      const { job } = resolved;
      if (!job.enabled) continue;
      const now = this.#clock.now();
      let state = await store.cron.get(job.id);
      if (state?.nextRunAt === undefined && !this.#leaseHeld(job, state, now)) {
        const first = this.#initialNextRun(job, state, now);
        if (first === undefined) continue;
        state = await store.cron.update(
          job.id,
          (current) =>
            current.nextRunAt === undefined
              ? { ...current, agentId: resolved.agentId, nextRunAt: first }
              : current,
          { now },
        );
      }
      const slot = state?.nextRunAt;
      if (slot === undefined || slot > now) continue;
      if (this.#running.has(job.id) || this.#leaseHeld(job, state, now)) {
        report.busy.push(job.id);
        continue;
      }
      const slotKey = `${job.id}@${slot}`;
      const late = now - slot > (this.#options.missedGraceMs ?? DEFAULT_MISSED_GRACE_MS);
      const missed = late && !this.#seenOnTime.has(slotKey);
      if (!missed) this.#seenOnTime.add(slotKey);
      if (this.#running.size >= maxConcurrent) {
        report.deferred.push(job.id);
        continue;
      }
      if (missed && job.missedRuns === "skip") {
        const next = nextRunAfter(job.schedule, now, slot);
        const skipped = await store.cron
          .update(
            job.id,
            (current) => {
              if (current.nextRunAt !== slot || this.#leaseHeld(job, current, now))
                throw new LeaseTakenError();
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
        if (skipped)
          report.skipped.push({
            jobId: job.id,
            missedAt: slot,
            ...(next === undefined ? {} : { nextRunAt: next }),
          });
        else report.busy.push(job.id);
        continue;
      }
      let claimed: CronJobStats;
      try {
        claimed = await this.#claim(resolved, slot, now);
      } catch (error) {
        if (error instanceof LeaseTakenError) {
          report.busy.push(job.id);
          continue;
        }
        throw error;
      }
      this.#seenOnTime.delete(slotKey);
      void this.#startRun(resolved, claimed, slot, missed);
      report.started.push({ jobId: job.id, scheduledAt: slot, catchUp: missed });
    }
    return report;
  }

  /**
   * Takes the job's lease: sets `running_since` if no live lease is held and the slot is still the one we saw.
   * The store's update is a compare-and-set on the row's version, so of two schedulers claiming at once
   * one wins and the other re-reads, sees the lease and gets `LeaseTakenError`.
   */
  #claim(resolved: ResolvedCronJob, slot: number | undefined, now: number): Promise<CronJobStats> {
    return this.#openStore().then((store) =>
      store.cron.update(
        resolved.job.id,
        (current) => {
          if (this.#leaseHeld(resolved.job, current, now) || current.nextRunAt !== slot)
            throw new LeaseTakenError();
          return { ...current, agentId: resolved.agentId, runningSince: now };
        },
        { now },
      ),
    );
  }

  #startRun(
    resolved: ResolvedCronJob,
    claimed: CronJobStats,
    scheduledAt: number,
    catchUp: boolean,
    options: { readonly keepNextRunAt?: boolean } = {},
  ): Promise<CronRunResult> {
    const running = this.#run(resolved, claimed, scheduledAt, catchUp, options).finally(() => {
      this.#running.delete(resolved.job.id);
      // A finished run frees a slot for a deferred job and sets this job's next slot: look again.
      if (this.#started) {
        if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
        this.#loop();
      }
    });
    this.#running.set(resolved.job.id, running);
    return running;
  }

  async #run(
    resolved: ResolvedCronJob,
    claimed: CronJobStats,
    scheduledAt: number,
    catchUp: boolean,
    options: { readonly keepNextRunAt?: boolean },
  ): Promise<CronRunResult> {
    const { job, agentId } = resolved;
    const startedAt = claimed.runningSince ?? this.#clock.now();
    const sessionKey = cronSessionKey(agentId, job.id);
    let outcome: TurnOutcome | undefined;
    let sessionId: string | undefined;
    let delivery: DeliveryResult | undefined;
    let error: string | undefined;
    try {
      const kernel = await this.#kernelFor();
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
        signal: this.#abort.signal,
      });
      if (outcome.status !== "ok") {
        error = [outcome.status, outcome.result.reason, outcome.result.errorMessage]
          .filter(Boolean)
          .join(": ");
      } else if (
        job.delivery?.mode === "announce" &&
        job.delivery.channel !== undefined &&
        job.delivery.to !== undefined
      ) {
        delivery = await deliverOutcome(
          this.#channels,
          { channel: job.delivery.channel, to: job.delivery.to },
          outcome,
        );
        if (delivery.status === "failed")
          error = `delivery to ${delivery.channel}:${delivery.to} failed: ${delivery.error}`;
      }
    } catch (thrown) {
      error = thrown instanceof Error ? thrown.message : String(thrown);
    }
    const endedAt = this.#clock.now();
    // stopped by `stop()` (the abort reached the run, or the run failed to start once it was aborted)
    const stopped = this.#abort.signal.aborted && (outcome === undefined || outcome.status === "aborted");
    const status = stopped ? "aborted" : error === undefined ? "ok" : "error";
    const store = await this.#openStore();
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
    const result: CronRunResult = {
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
    this.#options.onRunFinished?.(result);
    return result;
  }
}

/** `history`/`runNow` of a job id no source defines. */
export class CronJobNotFoundError extends Error {
  override readonly name = "CronJobNotFoundError";
}

/** A scheduler over the config's jobs (and the jobs file); call `start()` for the timer loop or drive `tick()`. */
export function createCronScheduler(options: CronSchedulerOptions): CronScheduler {
  return new CronScheduler(options);
}
