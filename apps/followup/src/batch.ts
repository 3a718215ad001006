// Which items become one follow-up turn (chosen and claimed), and that turn's prompt: pending overflow summaries plus
// the next message (followup, steer, interrupt), or in collect mode every queued message when they share
// one route. Owns: the choice and the prompt text. Does not own: queue IO (queue-access.ts), running the
// turn (runner.ts) or the prompt wording (prompts.ts).
import { ITEM_KIND, type QueueMode, routeKey, type SummaryPayload } from "./inbound.ts";
import { keptSummaryLines } from "./overflow.ts";
import { collectPrompt, followupPrompt, overflowSummaryPrompt } from "./prompts.ts";
import { isMessage, messagePayload, type QueueAccess } from "./queue-access.ts";
import type { FollowupSettings, QueueItem } from "./runner-types.ts";

/** Claimed items that become one turn. */
export interface Batch {
  readonly summaries: readonly QueueItem[];
  readonly messages: readonly QueueItem[];
  readonly mode: QueueMode;
  readonly cap: number;
}

/**
 * The items wanted for the next turn of a session, from its available items (oldest first). In collect
 * mode, `individualCollect` (the sessions draining one message at a time, kept by the caller across
 * turns) is updated: OpenClaw drains one at a time while the queue spans routes.
 */
function chooseBatch(
  pending: readonly QueueItem[],
  settings: FollowupSettings,
  sessionKey: string,
  individualCollect: Set<string>,
): Batch | undefined {
  const messages = pending.filter(isMessage);
  const first = messages[0];
  const chosen: QueueItem[] = [];
  let mode = settings.mode;
  if (first !== undefined) {
    if (settings.mode === "collect") {
      // OpenClaw: while the queued messages span more than one route they drain one at a time (plain
      // follow-ups), and keep doing so until two or more of one route are left; then they merge.
      const crossRoute = new Set(messages.map((message) => routeKey(messagePayload(message)))).size > 1;
      if (crossRoute) individualCollect.add(sessionKey);
      else if (messages.length > 1) individualCollect.delete(sessionKey);
      if (individualCollect.has(sessionKey)) {
        chosen.push(first);
        mode = "followup";
      } else {
        chosen.push(...messages);
      }
    } else {
      chosen.push(first);
    }
  }
  const summaries = pending.filter((item) => item.kind === ITEM_KIND.summary);
  if (chosen.length === 0 && summaries.length === 0) return undefined;
  return { summaries, messages: chosen, mode, cap: settings.cap };
}

/**
 * Claims the next batch of a session (the caller holds the session's lock): pending summaries plus the
 * next message (followup, steer, interrupt), or in collect mode every queued message when they share one
 * route, else the next one on its own. Undefined when nothing could be claimed.
 */
export async function claimBatch(
  queue: QueueAccess,
  session: { readonly agentId: string; readonly sessionKey: string; readonly settings: FollowupSettings },
  individualCollect: Set<string>,
): Promise<Batch | undefined> {
  const { agentId, sessionKey, settings } = session;
  const wanted = chooseBatch(
    await queue.pending(agentId, sessionKey),
    settings,
    sessionKey,
    individualCollect,
  );
  if (wanted === undefined) return undefined;
  const ids = [...wanted.summaries, ...wanted.messages].map((item) => item.itemId);
  return claimedPart(wanted, await queue.claimItems(agentId, sessionKey, ids));
}

/** The batch restricted to the items actually claimed; undefined when none were. */
function claimedPart(batch: Batch, claimed: readonly QueueItem[]): Batch | undefined {
  const claimedIds = new Set(claimed.map((item) => item.itemId));
  const part = {
    summaries: batch.summaries.filter((item) => claimedIds.has(item.itemId)),
    messages: batch.messages.filter((item) => claimedIds.has(item.itemId)),
    mode: batch.mode,
    cap: batch.cap,
  };
  return part.summaries.length + part.messages.length === 0 ? undefined : part;
}

/** The turn's prompt: the overflow block first, then the message or the collect prompt (OpenClaw
 * 2026.9.6's `buildLocalQueuedPrompt`). */
export function batchPrompt(batch: Batch): string {
  const summary = overflowSummaryPrompt({
    droppedCount: batch.summaries.length,
    summaryLines: keptSummaryLines(
      batch.summaries.map((item) => (item.payload as SummaryPayload).line),
      batch.cap,
    ),
  });
  const texts = batch.messages.map(messagePayload);
  return followupPrompt(
    batch.mode === "collect" && texts.length > 0
      ? collectPrompt(texts.map((payload) => ({ text: payload.text, sender: payload.sender })))
      : (texts[0]?.text ?? ""),
    summary,
  );
}
