// The cron scheduler: turns due jobs into isolated kernel turns. Owns: reading each job's state from the store's
// cron_state table, deciding what is due, the missed-run policy after downtime (`run-once`: one catch-up run;
// `skip`: move on to the next slot), the timer loop, concurrency, reloading jobs, and run history from the
// kernel's run records. Does not own the lease that keeps a job from overlapping itself — in this process or
// in another scheduler on the same store (lease.ts) — running and recording one job (run-job.ts), turns (the
// kernel), schedules' arithmetic (schedule.ts) or transports (channels).
import { CRON_DEFAULTS, type KernelConfig } from "@agent-kernel/config";
import {
  type AnyKernelStore,
  createKernel,
  type Kernel,
  listRuns,
  openKernelStore,
  type RunRecord,
} from "@agent-kernel/kernel";
import { type CronClock, systemClock, type TimerHandle } from "./clock.ts";
import type { CronDeliveryChannel } from "./delivery.ts";
import { type CronJobsReload, diffJobs, isEmptyReload, watchJobsFile } from "./job-reload.ts";
import { type CronJob, jobsFilePath, loadCronJobs, type ResolvedCronJob } from "./jobs.ts";
import {
  type CronJobStats,
  claimLease,
  initialNextRun,
  LeaseTakenError,
  leaseHeld,
  leaseMsOf,
  rescheduleSlot,
  setFirstSlot,
  skipSlot,
} from "./lease.ts";
import { cronSessionKey, runCronJob } from "./run-job.ts";
import { nextRunAfter } from "./schedule.ts";
import type { CronJobView, CronRunResult, CronSchedulerOptions, TickReport } from "./scheduler-types.ts";

export { CRON_ENTRY_POINT, cronSessionKey } from "./run-job.ts";

const DEFAULT_MAX_SLEEP_MS = 60_000;
const DEFAULT_MISSED_GRACE_MS = 60_000;

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
      await rescheduleSlot(store, resolved, now, this.#leaseMs(resolved.job));
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
    return leaseMsOf(job, this.#config, this.#options.leaseMs);
  }

  #leaseHeld(job: CronJob, state: { readonly runningSince?: number } | undefined, now: number): boolean {
    return leaseHeld(state, now, this.#leaseMs(job));
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
        const first = initialNextRun(job, state, now);
        if (first === undefined) continue;
        state = await setFirstSlot(store, resolved, first, now);
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
        const skipped = await skipSlot(store, resolved, slot, next, now, this.#leaseMs(job));
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

  #claim(resolved: ResolvedCronJob, slot: number | undefined, now: number): Promise<CronJobStats> {
    return this.#openStore().then((store) =>
      claimLease(store, resolved, slot, now, this.#leaseMs(resolved.job)),
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
    const context = {
      kernel: () => this.#kernelFor(),
      store: () => this.#openStore(),
      channels: this.#channels,
      clock: this.#clock,
      signal: () => this.#abort.signal,
    };
    const result = await runCronJob(context, resolved, claimed, scheduledAt, catchUp, options);
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
