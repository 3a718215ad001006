// The cron scheduler through `createCronScheduler`: each inbound message becomes the payload of a job (one
// job per message) run with `runNow`, announcing to the test channel. What differs at the kernel level is
// declared, not hidden: the prompt is shaped (`[cron:<id> <name>] <message>` plus a time block; the harness
// maps it back to the message) and every run is a new session, so scenarios that need one session across
// turns do not apply. Delivery: the last deliverable payload of a successful run, sent after the run;
// a failed run is reported as the run's error status, with no message to anyone. Aborting a run is stopping
// the scheduler (runs in flight are aborted, stored as aborted and reported with status "aborted").

import { TestChannel } from "@agent-kernel/channels-core/testing";
import { createCronScheduler } from "@agent-kernel/cron";
import { type Cell, SENDER_ID, TEST_CHANNEL } from "../cell.ts";
import { normaliseText } from "../kernel-outcome.ts";
import type { AppDeliveryPolicy, CellRun, Delivered } from "../types.ts";
import { type AppAdapter, abortWhenRequested } from "./adapter.ts";

export const CRON_POLICY: AppDeliveryPolicy = {
  app: "cron",
  streaming: "none",
  final: "last",
  errors: "status-error",
  silent: "suppressed",
  messagingToolDedupe: true,
  replyThreading: false,
  typing: false,
  messageTool: false,
};

/** `[cron:<id> <name>] <message>\nCurrent time: …\nReference UTC: …` back to `<message>`. */
export function unshapeCronPrompt(text: string): string {
  return text
    .replace(/^\[cron:[^\s\]]+ [^\]]*\] /, "")
    .replace(/\nCurrent time: [^\n]*\nReference UTC: [^\n]*$/, "");
}

export const cronApp: AppAdapter = {
  name: "cron",
  policy: CRON_POLICY,
  kernelDifferences: { unshapePrompt: unshapeCronPrompt, isolatedSessions: true },
  async run(cell: Cell): Promise<CellRun> {
    const channel = new TestChannel({ id: TEST_CHANNEL });
    const jobs = cell.scenario.inbound.map((message, index) => ({
      id: `parity-${index + 1}`,
      name: "Parity",
      schedule: { kind: "every", everySeconds: 86_400 },
      payload: { message: message.text },
      delivery: { mode: "announce", channel: TEST_CHANNEL, to: SENDER_ID },
    }));
    const scheduler = createCronScheduler({
      config: cell.config,
      stateDir: cell.stateDir,
      jobsFile: false,
      jobs,
      channels: [channel],
      kernelOptions: { executorSettings: { transientRetryDelayMs: 1 } },
    });
    const delivered: Delivered[] = [];
    const notes: string[] = [];
    const stopWatching = abortWhenRequested(cell, () => void scheduler.stop());
    try {
      const pending: Promise<unknown>[] = [];
      for (const [index, job] of jobs.entries()) {
        if (cell.scenario.inbound[index]?.concurrentWithPrevious === true)
          notes.push("concurrent jobs run as separate isolated sessions");
        const run = scheduler.runNow(job.id).then((result) => {
          delivered.push({ kind: "result", value: { job: job.id, status: result.status } });
        });
        if (cell.scenario.inbound[index + 1]?.concurrentWithPrevious === true) pending.push(run);
        else await Promise.all([...pending.splice(0), run]);
      }
    } finally {
      stopWatching();
      await scheduler.stop();
    }
    for (const sent of channel.sent) {
      const media = (sent.media ?? []).map((item) => item.url ?? item.path ?? "");
      delivered.push({
        kind: "channel",
        ...(sent.text === "" ? {} : { text: normaliseText(sent.text, cell) }),
        ...(media.length === 0 ? {} : { media }),
      });
    }
    return { stateDir: cell.stateDir, delivered, notes };
  },
};
