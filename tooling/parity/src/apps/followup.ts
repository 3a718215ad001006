// The follow-up runner through `createFollowupRunner`: each inbound message is accepted into the store's
// queue (with the test sender's message context), then the queue is drained; messages sent concurrently are
// both accepted before draining, so the runner runs them one after the other in arrival order. What the app
// hands over for delivery is each `delivered` event (status and payloads, sent after the run); a failed turn
// is reported by that status, with no user message (OpenClaw's follow-up runner logs and drops it).
import { createFollowupRunner } from "@agent-kernel/followup";
import { type Cell, SENDER_ID, TEST_CHANNEL } from "../cell.ts";
import { normaliseValue } from "../kernel-outcome.ts";
import type { AppDeliveryPolicy, CellRun, Delivered } from "../types.ts";
import { type AppAdapter, abortWhenRequested } from "./adapter.ts";

export const FOLLOWUP_POLICY: AppDeliveryPolicy = {
  app: "followup",
  streaming: "none",
  final: "all",
  errors: "status-error",
  silent: "suppressed",
  messagingToolDedupe: true,
  replyThreading: true,
  typing: false,
  messageTool: false,
};

export const followupApp: AppAdapter = {
  name: "followup",
  policy: FOLLOWUP_POLICY,
  async run(cell: Cell): Promise<CellRun> {
    const runner = await createFollowupRunner({
      config: cell.config,
      stateDir: cell.stateDir,
      kernelOptions: { executorSettings: { transientRetryDelayMs: 1 } },
    });
    const delivered: Delivered[] = [];
    const errors: string[] = [];
    runner.on("delivered", (event) => {
      delivered.push({
        kind: "result",
        value: normaliseValue({ status: event.status, payloads: event.payloads }, cell),
      });
    });
    runner.on("error", (event) => errors.push(String(event.error)));
    const stopWatching = abortWhenRequested(cell, () => {
      for (const run of runner.kernel.activeRuns()) runner.kernel.abort(run.runId);
    });
    try {
      const inbound = cell.scenario.inbound;
      for (let index = 0; index < inbound.length; index++) {
        const message = inbound[index];
        if (message === undefined) continue;
        await runner.accept({
          text: message.text,
          messageContext: {
            channel: TEST_CHANNEL,
            chatType: "direct",
            senderId: SENDER_ID,
            senderIsOwner: true,
          },
        });
        // A message sent together with the next one is drained with it.
        if (inbound[index + 1]?.concurrentWithPrevious !== true) await runner.drain();
      }
      await runner.whenIdle();
    } finally {
      stopWatching();
      await runner.stop();
    }
    if (errors.length > 0) throw new Error(`the follow-up runner reported errors: ${errors.join("; ")}`);
    return { stateDir: cell.stateDir, delivered };
  },
};
