// The cron scheduler's public shapes: its options, a run's result, a tick's report and a job as listed. Owns
// nothing but the types; the behaviour is scheduler.ts's.
import type { KernelConfig } from "@agent-kernel/config";
import type { AnyKernelStore, KernelOptions, TurnOutcome } from "@agent-kernel/kernel";
import type { CronClock } from "./clock.ts";
import type { CronDeliveryChannel, DeliveryResult } from "./delivery.ts";
import type { CronJobsReload } from "./job-reload.ts";
import type { CronJob } from "./jobs.ts";

/** A job's stored state (`store.cron.get`). */
export type CronJobState = Awaited<ReturnType<AnyKernelStore["cron"]["get"]>>;

export interface CronSchedulerOptions {
  readonly config: KernelConfig;
  /** The state dir holding the store (and the jobs file); default the config's `store.stateDir`. */
  readonly stateDir?: string | undefined;
  /** A store to share (not closed by `stop()`); default one opened under `stateDir`. */
  readonly store?: AnyKernelStore | undefined;
  /** See `loadCronJobs`: default `<stateDir>/cron/jobs.json` when present; `false`: none. */
  readonly jobsFile?: string | false | undefined;
  /** Jobs a program adds, in the config's `cron.jobs[]` shape. */
  readonly jobs?: readonly unknown[] | undefined;
  /** Delivery targets by channel id (`delivery.channel`). */
  readonly channels?: readonly CronDeliveryChannel[] | undefined;
  /** Default the system clock. Tests and the parity harness pass a `ManualClock`. */
  readonly clock?: CronClock | undefined;
  /** Longest wait between two looks at the store while started (other schedulers change it); default 60 s. */
  readonly maxSleepMs?: number | undefined;
  /**
   * A slot this much overdue when first seen was missed (the scheduler was not running) and the job's
   * `missedRuns` policy applies; default 60 s.
   */
  readonly missedGraceMs?: number | undefined;
  /**
   * A `running_since` older than this belongs to a scheduler that died mid-run and may be taken over;
   * default twice the job's timeout, at least 10 minutes.
   */
  readonly leaseMs?: number | undefined;
  /** Extra kernel options (executor settings, native providers); `config`, `store` and `now` are set here. */
  readonly kernelOptions?: Omit<KernelOptions, "config" | "store" | "now"> | undefined;
  /** Called after every run, with its result. */
  readonly onRunFinished?: ((run: CronRunResult) => void) | undefined;
  /**
   * While started, poll the jobs file (every this many ms; `false` or absent: never) and `reload()` when it
   * changes, so jobs added, edited or removed by `agent-kernel cron …` are picked up without a restart.
   */
  readonly watchJobsFileMs?: number | false | undefined;
  /** Called after each reload the watch did: what changed, or why the file was not taken (old jobs kept). */
  readonly onJobsReloaded?: ((result: CronJobsReload | Error) => void) | undefined;
}

export interface CronRunResult {
  readonly jobId: string;
  readonly agentId: string;
  readonly sessionKey: string;
  /** The run's new session id. */
  readonly sessionId?: string;
  /** The kernel run id; absent when the run failed before it started (e.g. an unknown model). */
  readonly runId?: string;
  /** The slot this run was for. */
  readonly scheduledAt: number;
  readonly startedAt: number;
  readonly endedAt: number;
  /** True for a catch-up run of a slot missed while no scheduler was running. */
  readonly catchUp: boolean;
  /**
   * `aborted`: the scheduler stopped while the run was in flight. Its slot is not used up (the next start runs
   * it as a catch-up, as after a crash) and it does not count as a failure.
   */
  readonly status: "ok" | "error" | "aborted";
  readonly error?: string;
  readonly delivery?: DeliveryResult;
  readonly outcome?: TurnOutcome;
}

export interface TickReport {
  /** Jobs whose run started in this tick (see `idle()` to wait for them). */
  readonly started: readonly {
    readonly jobId: string;
    readonly scheduledAt: number;
    readonly catchUp: boolean;
  }[];
  /** Jobs whose missed slots were skipped (`missedRuns: "skip"`). */
  readonly skipped: readonly {
    readonly jobId: string;
    readonly missedAt: number;
    readonly nextRunAt?: number;
  }[];
  /** Due jobs already running (here or in another scheduler): not started again. */
  readonly busy: readonly string[];
  /** Due jobs waiting for a free slot under `cron.maxConcurrentRuns`. */
  readonly deferred: readonly string[];
}

export interface CronJobView {
  readonly id: string;
  readonly name?: string;
  readonly agentId: string;
  readonly enabled: boolean;
  readonly source: string;
  readonly schedule: CronJob["schedule"];
  readonly state?: NonNullable<CronJobState>;
}
