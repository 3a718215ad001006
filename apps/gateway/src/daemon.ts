// The gateway daemon: one process, one kernel store, running the configured channels (auto-reply's gateway:
// access control, pairing, routing, streamed replies), the follow-up queue (a message for a session whose turn
// is running goes to the followup runner: steered into that turn, queued, collected or interrupting it, by
// queue mode; its follow-up turns' replies go back to the conversation) and the cron scheduler (delivering
// through the same channel adapters). Owns composing them, the pid lock, the status snapshot, one log line per
// turn, start-up (retries, one clear line for a fatal failure) and the graceful stop (turns finish within the
// grace period or are aborted, claimed follow-up items released). Does not own any of their logic.
import {
  type AutoReplyGateway,
  type BusyMessage,
  channelsFromConfig,
  createAutoReplyGateway,
  promptOf,
  STARTUP_EXIT,
  servedUrls,
  startupFailure,
  startWithRetry,
  turnLine,
} from "@agent-kernel/auto-reply";
import type { ChannelAdapter } from "@agent-kernel/channels-core";
import type { KernelConfig } from "@agent-kernel/config";
import { type CronJobsReload, type CronScheduler, createCronScheduler } from "@agent-kernel/cron";
import { createFollowupRunner, type FollowupRunner } from "@agent-kernel/followup";
import {
  type AnyKernelStore,
  createKernelWithSubagents,
  killAllBackgroundProcesses,
  openKernelStore,
} from "@agent-kernel/kernel";
import type { GatewayLog } from "./log-files.ts";
import { acquirePidLock, GatewayLockedError, writeSnapshot } from "./state-files.ts";

/** What the daemon runs on: the config and state dir, its logger and the signal that stops it. */
export interface GatewayDaemonOptions {
  readonly config: KernelConfig;
  readonly stateDir: string;
  readonly log: GatewayLog;
  /** Aborted to stop; `reason` "SIGTERM" makes the exit code 143, anything else 130. */
  readonly signal: AbortSignal;
  /** How long running turns may finish at shutdown before they are aborted (ms). Default 10 000. */
  readonly shutdownGraceMs?: number;
  /** Waits before start-up retries (ms); default auto-reply's backoff (1 s doubling to 30 s). */
  readonly startRetryDelaysMs?: readonly number[];
  /** How often the status snapshot is rewritten (ms). Default 1000. */
  readonly snapshotIntervalMs?: number;
  /**
   * How often the follow-up queue is looked at for items another process stored (`followup enqueue`, the
   * `agent-kernel` command) while the daemon runs (ms). Default 2000.
   */
  readonly queuePollMs?: number;
  /** How often the cron jobs file is looked at for edits (ms). Default 1000. */
  readonly jobsWatchMs?: number;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Runs the daemon until `signal` aborts; resolves to the process's exit code. */
export async function runGatewayDaemon(options: GatewayDaemonOptions): Promise<number> {
  const { config, stateDir, log, signal } = options;
  const stopCode = () => (signal.reason === "SIGTERM" ? 143 : 130);
  let releaseLock: () => void;
  try {
    releaseLock = acquirePidLock(stateDir);
  } catch (error) {
    if (error instanceof GatewayLockedError) {
      log.error(error.message, { event: "locked", pid: error.pid });
      return STARTUP_EXIT.channelFailed;
    }
    throw error;
  }
  const startedAt = new Date().toISOString();
  let store: AnyKernelStore | undefined;
  let runner: FollowupRunner | undefined;
  let gateway: AutoReplyGateway | undefined;
  let scheduler: CronScheduler | undefined;
  let snapshotTimer: NodeJS.Timeout | undefined;
  let queuePoll: NodeJS.Timeout | undefined;
  try {
    store = await openKernelStore({ stateDir, config });
    // Runs here may spawn subagents (`sessions_spawn`) and message other sessions (`sessions_send`) under their
    // tool policy: the daemon outlives a turn, so a child's result can be announced back to its parent.
    const { kernel } = createKernelWithSubagents({ config, store });
    runner = await createFollowupRunner({ config, store, kernel });
    const followups = runner;
    wireFollowupEvents(followups, log, store, () => channels);

    let channels: ChannelAdapter[] = [];
    const openStore = store;
    try {
      gateway = await startWithRetry(
        async () => {
          // Fresh adapters per attempt: one that failed to start cannot be started again.
          channels = channelsFromConfig(config, {
            channelState: openStore.channelState,
            log: (line) => log.warn(line),
          });
          const attempt = createAutoReplyGateway({
            config,
            stateDir,
            channels,
            kernel,
            store: openStore,
            log: (line) => log.info(line),
            onTurnEnd: (turn) =>
              log.info(turnLine(turn), {
                event: "turn",
                channel: turn.inbound.channel,
                chatId: turn.inbound.conversation.chatId,
                sessionKey: turn.route.sessionKey,
                ...(turn.outcome === undefined
                  ? {}
                  : { runId: turn.outcome.runId, status: turn.outcome.status }),
                sent: turn.sent.length,
                interrupted: turn.interrupted,
              }),
            whenBusy: (message) => queueBusyMessage(followups, message, log),
            shutdownGraceMs: options.shutdownGraceMs ?? 10_000,
          });
          await attempt.start();
          return attempt;
        },
        {
          log: (line) => log.warn(line, { event: "start-retry" }),
          signal,
          ...(options.startRetryDelaysMs === undefined ? {} : { delaysMs: options.startRetryDelaysMs }),
        },
      );
    } catch (error) {
      if (signal.aborted) return stopCode();
      const failure = startupFailure(error);
      log.error(failure.line, { event: "start-failed" });
      return failure.exitCode;
    }
    await followups.start();
    // start() again schedules every session with pending items (a drain already under way is not doubled).
    queuePoll = setInterval(() => void followups.start().catch(() => undefined), options.queuePollMs ?? 2000);
    scheduler = createCronScheduler({
      config,
      stateDir,
      store,
      channels,
      onRunFinished: (run) =>
        log.info(
          `cron ${run.jobId}: ${run.status}${run.runId ? ` run ${run.runId}` : ""}${run.delivery === undefined ? "" : `, delivery ${describeDelivery(run.delivery)}`}${run.error ? ` (${run.error})` : ""}`,
          { event: "cron", jobId: run.jobId, status: run.status, runId: run.runId },
        ),
      // `agent-kernel cron add|rm|enable|disable` rewrite the jobs file: picked up without a restart.
      watchJobsFileMs: options.jobsWatchMs ?? 1000,
      onJobsReloaded: (result) => {
        if (result instanceof Error)
          log.error(`cron jobs not reloaded, the previous ones stay: ${result.message}`, {
            event: "cron-reload",
          });
        else log.info(`cron jobs reloaded: ${describeReload(result)}`, { event: "cron-reload", ...result });
      },
    });
    scheduler.start();
    const jobs = await scheduler.list();

    for (const channel of channels)
      log.info(`channel ${channel.id}:${channel.accountId} started`, { event: "channel" });
    for (const line of servedUrls(channels)) log.info(line, { event: "serves" });
    log.info(
      `gateway running (pid ${process.pid}): ${channels.length} channel(s), ${jobs.filter((job) => job.enabled).length} cron job(s), follow-up queue (${config.messages.queue.mode} mode); Ctrl-C stops`,
      { event: "ready" },
    );

    const snapshot = async () => {
      const cronJobs = await scheduler?.list().catch(() => []);
      writeSnapshot(stateDir, {
        pid: process.pid,
        startedAt,
        updatedAt: new Date().toISOString(),
        channels: channels.map((channel) => ({
          id: channel.id,
          accountId: channel.accountId,
          serves: servedUrls([channel]),
        })),
        activeRuns: kernel.activeRuns().map((run) => ({
          runId: run.runId,
          sessionKey: run.sessionKey,
          phase: run.phase,
          entryPoint: run.entryPoint,
        })),
        cron: {
          jobs: cronJobs?.length ?? 0,
          running: (cronJobs ?? [])
            .filter((job) => job.state?.runningSince !== undefined)
            .map((job) => job.id),
        },
      });
    };
    await snapshot();
    snapshotTimer = setInterval(
      () => void snapshot().catch((error: unknown) => log.warn(`status snapshot: ${errorText(error)}`)),
      options.snapshotIntervalMs ?? 1000,
    );

    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    log.info(`stopping (${String(signal.reason ?? "signal")}): letting running turns finish`, {
      event: "stopping",
    });
    return stopCode();
  } finally {
    if (snapshotTimer !== undefined) clearInterval(snapshotTimer);
    if (queuePoll !== undefined) clearInterval(queuePoll);
    // Channels stop receiving first; running turns get the grace period; follow-up turns are aborted at once
    // and their claimed items released (they run again on the next start).
    const [stoppedGateway, released, stoppedCron] = await Promise.allSettled([
      gateway?.stop(),
      runner?.stop({ abort: true }),
      scheduler?.stop(),
    ]);
    for (const result of [stoppedGateway, stoppedCron])
      if (result.status === "rejected") log.warn(`stopping: ${errorText(result.reason)}`);
    if (released.status === "rejected")
      log.warn(`stopping the follow-up queue: ${errorText(released.reason)}`);
    // Background commands the model started (`exec` background, the `process` tool) end with the gateway.
    const killed = killAllBackgroundProcesses();
    if (killed > 0)
      log.info(`stopping: killed ${killed} background command(s)`, { event: "killed_background" });
    await store?.close().catch((error: unknown) => log.warn(`closing the store: ${errorText(error)}`));
    releaseLock();
    log.info("stopped", { event: "stopped" });
  }
}

function describeReload(reload: CronJobsReload): string {
  const parts = [
    ["added", reload.added],
    ["changed", reload.changed],
    ["removed", reload.removed],
  ] as const;
  const said = parts.filter(([, ids]) => ids.length > 0).map(([what, ids]) => `${what} ${ids.join(", ")}`);
  return said.length > 0 ? said.join("; ") : "nothing changed";
}

function describeDelivery(delivery: unknown): string {
  const value = delivery as { status?: string; channel?: string; to?: string; error?: string };
  return `${value.status ?? "?"}${value.channel ? ` to ${value.channel}:${value.to ?? ""}` : ""}${value.error ? ` (${value.error})` : ""}`;
}

/** A message for a busy session into the follow-up queue (steered, queued, collected or interrupting). */
async function queueBusyMessage(
  runner: FollowupRunner,
  message: BusyMessage,
  log: GatewayLog,
): Promise<void> {
  const { inbound, route } = message;
  const result = await runner.accept({
    id: `${inbound.channel}:${inbound.accountId}:${inbound.messageId}`.replace(/\s/g, "_").slice(0, 200),
    text: promptOf(inbound),
    agentId: route.agentId,
    sessionKey: route.sessionKey,
    sender: inbound.sender.displayName ?? inbound.sender.username ?? inbound.sender.id,
    messageContext: {
      channel: inbound.channel,
      accountId: inbound.accountId,
      chatType: route.chatType,
      senderId: inbound.sender.id,
      senderIsOwner: message.senderIsOwner,
      to: inbound.conversation.chatId,
      ...(route.chatType === "direct" ? {} : { groupId: inbound.conversation.chatId }),
      ...(inbound.conversation.threadId === undefined ? {} : { threadId: inbound.conversation.threadId }),
    },
  });
  log.info(
    `queued ${inbound.channel}:${inbound.conversation.chatId} message ${inbound.messageId} for busy session ${result.sessionKey} [${result.settings.mode}]: ${result.status}${result.dropped.length > 0 ? `, dropped ${result.dropped.length}` : ""}`,
    { event: "queued", sessionKey: result.sessionKey, itemId: result.itemId, mode: result.settings.mode },
  );
  void result.steering?.then((delivered) =>
    log.info(
      delivered
        ? `steered message ${inbound.messageId} into the running turn of ${result.sessionKey}`
        : `message ${inbound.messageId} could not be steered; it runs as a follow-up turn`,
      {
        event: delivered ? "steered" : "steer-fallback",
        sessionKey: result.sessionKey,
        itemId: result.itemId,
      },
    ),
  );
}

/** Follow-up turns' replies back to their conversation, and one log line per queue event. */
function wireFollowupEvents(
  runner: FollowupRunner,
  log: GatewayLog,
  store: AnyKernelStore,
  channels: () => readonly ChannelAdapter[],
): void {
  runner.on("delivered", (event) => {
    void (async () => {
      const last = await store.queue.get(event.itemIds.at(-1) ?? "");
      const context = (last?.payload as { messageContext?: Record<string, unknown> } | undefined)
        ?.messageContext;
      const channelId = typeof context?.channel === "string" ? context.channel : undefined;
      const accountId = typeof context?.accountId === "string" ? context.accountId : "default";
      const chatId = typeof context?.to === "string" ? context.to : undefined;
      const threadId = typeof context?.threadId === "string" ? context.threadId : undefined;
      const channel = channels().find(
        (candidate) => candidate.id === channelId && candidate.accountId === accountId,
      );
      let sent = 0;
      if (channel !== undefined && chatId !== undefined) {
        for (const payload of event.payloads) {
          if (!payload.text?.trim()) continue;
          await channel
            .send({
              target: { accountId, chatId, ...(threadId === undefined ? {} : { threadId }) },
              text: payload.text,
            })
            .then(() => (sent += 1))
            .catch((error: unknown) =>
              log.warn(`follow-up reply to ${channelId}:${chatId} failed: ${errorText(error)}`),
            );
        }
      }
      log.info(
        `follow-up turn ${channelId ?? "-"}:${chatId ?? "-"} session ${event.sessionKey} run ${event.runId}: ${event.status}, ${event.itemIds.length} item(s), ${sent} message(s) sent`,
        { event: "followup-turn", sessionKey: event.sessionKey, runId: event.runId, status: event.status },
      );
    })().catch((error: unknown) => log.warn(`follow-up delivery: ${errorText(error)}`));
  });
  runner.on("released", (event) =>
    log.info(`released ${event.itemIds.length} claimed follow-up item(s) back to pending`, {
      event: "released",
      sessionKey: event.sessionKey,
      itemIds: event.itemIds,
    }),
  );
  runner.on("dropped", (event) =>
    log.info(`follow-up item ${event.itemId} of ${event.sessionKey} dropped (${event.reason})`, {
      event: "dropped",
      itemId: event.itemId,
    }),
  );
  runner.on("error", (event) =>
    log.warn(`follow-up items ${event.itemIds.join(", ")} of ${event.sessionKey}: ${errorText(event.error)}`),
  );
}
