// What of a run's event stream is stored (session-store's run events). Owns: projecting the executor's
// fine-grained `AgentEventPayload` list onto the rows written at the end of the turn, and the one choice in
// it: whether streamed assistant deltas are stored one row each or coalesced. Does not own: the events
// themselves (event-bridge.ts) or what callers receive (always every event, live, in `TurnResult.events`).
//
// Coalescing: a run of consecutive `assistant` events of the same delta type (`text_delta` or
// `thinking_delta`, i.e. one streamed block) becomes one row `{ type: "text" | "thinking", text, deltas }`
// carrying the block's whole text, stored at the seq of the block's first delta with the ts of its last.
// Lifecycle, tool, compaction and error events, message start/end (whose `text` is the final text) and tool
// calls are stored as they are. Stored seqs then have gaps where deltas were merged; `seq` order and
// `events(runId, { afterSeq })` are unchanged. A real provider streams a delta every few tokens, so a reply
// of a few hundred tokens stores a handful of rows instead of hundreds.
import type { RunEvent } from "@agent-kernel/session-store";
import type { AgentEventPayload } from "./types.ts";

/** `every-event`: one row per event (deltas included). `coalesce-deltas`: one row per streamed block. */
export type RunEventStorage = "every-event" | "coalesce-deltas";

const COALESCED: Readonly<Record<string, string>> = { text_delta: "text", thinking_delta: "thinking" };

/** The rows to store for a run's events (without the run id, which the store keys them by). */
export function toStoredRunEvents(
  events: readonly AgentEventPayload[],
  storage: RunEventStorage,
): RunEvent[] {
  if (storage === "every-event")
    return events.map(({ seq, ts, stream, data }) => ({ seq, ts, stream, data }));
  const stored: RunEvent[] = [];
  let block: { seq: number; ts: number; kind: string; text: string; deltas: number } | undefined;
  const flush = () => {
    if (block === undefined) return;
    stored.push({
      seq: block.seq,
      ts: block.ts,
      stream: "assistant",
      data: { type: block.kind, text: block.text, deltas: block.deltas },
    });
    block = undefined;
  };
  for (const event of events) {
    const deltaType = event.stream === "assistant" ? event.data.type : undefined;
    const kind = typeof deltaType === "string" ? COALESCED[deltaType] : undefined;
    if (kind === undefined) {
      flush();
      stored.push({ seq: event.seq, ts: event.ts, stream: event.stream, data: event.data });
      continue;
    }
    const delta = typeof event.data.delta === "string" ? event.data.delta : "";
    if (block !== undefined && block.kind === kind) {
      block.text += delta;
      block.ts = event.ts;
      block.deltas += 1;
      continue;
    }
    flush();
    block = { seq: event.seq, ts: event.ts, kind, text: delta, deltas: 1 };
  }
  flush();
  return stored;
}
