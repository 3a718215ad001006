// @agent-kernel/cron: scheduled isolated agent runs. The package's face for the `agent-cron` command, programs
// and the parity harness: `createCronScheduler({ config, stateDir, channels, clock })` with `tick()`, `start()`,
// `stop()`, `runNow()`, `list()` and `history()`; the manual clock that drives it in tests; the pure helpers.
export { type CronClock, ManualClock, systemClock, type TimerHandle } from "./clock.ts";
export {
  type CronDeliveryChannel,
  type DeliveryResult,
  deliverOutcome,
  outboundFor,
  pickLastDeliverablePayload,
} from "./delivery.ts";
export { ERROR_BACKOFF_MS } from "./error-backoff.ts";
export { type CronJobsReload, diffJobs } from "./job-reload.ts";
export {
  type CronJob,
  CronJobsError,
  jobsFilePath,
  type LoadCronJobsOptions,
  loadCronJobs,
  parseJobsDocument,
  type ResolvedCronJob,
} from "./jobs.ts";
export { cronPrompt, cronTimeLine, formatCronTime } from "./prompt.ts";
export { type CronSchedule, CronScheduleError, checkSchedule, nextRunAfter } from "./schedule.ts";
export {
  CRON_ENTRY_POINT,
  CronJobNotFoundError,
  CronScheduler,
  createCronScheduler,
  cronSessionKey,
} from "./scheduler.ts";
export type {
  CronJobView,
  CronRunResult,
  CronSchedulerOptions,
  TickReport,
} from "./scheduler-types.ts";
