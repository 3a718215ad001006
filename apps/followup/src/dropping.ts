// What a new message drops from its session's queue: the oldest messages over the cap (stored as a summary
// line first under `drop: summarize`), and under `interrupt` every older message it supersedes. Owns: those
// drops and their events. Does not own: the cap's arithmetic (overflow.ts), queue IO (queue-access.ts) or
// the decision to accept (runner.ts).
import type { AnyKernelStore } from "@agent-kernel/kernel";
import type { FollowupEmitter } from "./events.ts";
import { ITEM_KIND, type SummaryPayload } from "./inbound.ts";
import { droppedSummaryLine } from "./overflow.ts";
import { messagePayload, type QueueAccess } from "./queue-access.ts";
import type { FollowupSettings, QueueItem } from "./runner-types.ts";

export interface DropContext {
  readonly store: AnyKernelStore;
  readonly queue: QueueAccess;
  readonly events: FollowupEmitter;
  readonly agentId: string;
  readonly sessionKey: string;
}

/** Drops `victims` (the oldest pending messages) to make room; returns the ids actually dropped. */
export async function dropForCap(
  context: DropContext,
  victims: readonly QueueItem[],
  dropPolicy: FollowupSettings["dropPolicy"],
  now: number,
): Promise<string[]> {
  const { store, queue, events, agentId, sessionKey } = context;
  const dropped: string[] = [];
  for (const victim of victims) {
    if (dropPolicy === "summarize") {
      // Stored before the victim is dropped: a crash in between keeps the message, never loses it.
      const summary: SummaryPayload = {
        droppedItemId: victim.itemId,
        line: droppedSummaryLine(messagePayload(victim).text),
      };
      await store.queue.enqueue({
        itemId: `${victim.itemId}#summary`,
        agentId,
        sessionKey,
        kind: ITEM_KIND.summary,
        payload: summary,
        now: queue.stamp(),
        availableAt: now,
      });
    }
    const reason = dropPolicy === "summarize" ? "cap-summarize" : "cap-old";
    if (await queue.dropItem(agentId, sessionKey, victim.itemId, `dropped by the queue cap (${reason})`)) {
      dropped.push(victim.itemId);
      events.emit({ type: "dropped", agentId, sessionKey, itemId: victim.itemId, reason });
    }
  }
  return dropped;
}

/** Interrupt mode: drops every older pending message not already dropped; adds their ids to `dropped`. */
export async function supersedeOlder(
  context: DropContext,
  older: readonly QueueItem[],
  dropped: string[],
): Promise<void> {
  const { queue, events, agentId, sessionKey } = context;
  for (const item of older) {
    if (dropped.includes(item.itemId)) continue;
    if (await queue.dropItem(agentId, sessionKey, item.itemId, "superseded by a newer message (interrupt)")) {
      dropped.push(item.itemId);
      events.emit({ type: "dropped", agentId, sessionKey, itemId: item.itemId, reason: "interrupt" });
    }
  }
}
