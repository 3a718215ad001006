// The auto-reply gateway through `createAutoReplyGateway` with an in-memory TestChannel: each inbound message
// is received as an adapter would hand it over (the next one after the gateway went idle, or at once when the
// scenario sends it concurrently), and what the channel was sent is the delivery (channels-core's TestChannel:
// formatted and split as a real adapter would). Typing is recorded as one item (how often it is renewed
// depends on timing).
import { AUTO_REPLY_DELIVERY_POLICY, createAutoReplyGateway } from "@agent-kernel/auto-reply";
import { TestChannel } from "@agent-kernel/channels-core/testing";
import { type Cell, SENDER_ID, TEST_CHANNEL } from "../cell.ts";
import { normaliseText } from "../kernel-outcome.ts";
import type { AppDeliveryPolicy, CellRun, Delivered } from "../types.ts";
import { type AppAdapter, abortWhenRequested } from "./adapter.ts";

export const AUTO_REPLY_POLICY: AppDeliveryPolicy = { ...AUTO_REPLY_DELIVERY_POLICY, messageTool: true };

export const autoReplyApp: AppAdapter = {
  name: "auto-reply",
  policy: AUTO_REPLY_POLICY,
  async run(cell: Cell): Promise<CellRun> {
    const channel = new TestChannel({ id: TEST_CHANNEL });
    const logs: string[] = [];
    const gateway = createAutoReplyGateway({
      config: cell.config,
      stateDir: cell.stateDir,
      channels: [channel],
      kernelOptions: { executorSettings: { transientRetryDelayMs: 1 } },
      log: (line) => logs.push(line),
    });
    await gateway.start();
    const inboundIds: string[] = [];
    const stopWatching = abortWhenRequested(cell, () => {
      for (const run of gateway.kernel.activeRuns()) gateway.kernel.abort(run.runId);
    });
    try {
      const pending: Promise<unknown>[] = [];
      for (const inbound of cell.scenario.inbound) {
        if (!inbound.concurrentWithPrevious) await gateway.idle();
        const message = channel.inbound({ text: inbound.text, sender: { id: SENDER_ID } });
        inboundIds.push(message.messageId);
        pending.push(channel.receive(message));
      }
      await Promise.all(pending);
      await gateway.idle();
    } finally {
      stopWatching();
      await gateway.stop();
    }
    const replyTo = (id: string | undefined) => {
      if (id === undefined) return undefined;
      const index = inboundIds.indexOf(id);
      return index === -1 ? id : `<inbound:${index + 1}>`;
    };
    const delivered: Delivered[] = [];
    if (channel.typing.length > 0) delivered.push({ kind: "typing" });
    for (const sent of channel.sent) {
      const to = replyTo(sent.replyToMessageId);
      const media = (sent.media ?? []).map((item) => item.url ?? item.path ?? "");
      delivered.push({
        kind: "channel",
        ...(sent.text === "" ? {} : { text: normaliseText(sent.text, cell) }),
        ...(media.length === 0 ? {} : { media }),
        ...(sent.isBlock ? { isBlock: true } : {}),
        ...(to === undefined ? {} : { replyTo: to }),
      });
    }
    return { stateDir: cell.stateDir, delivered };
  },
};
