// The event bridge: pi's AgentSession events → the run's one `AgentEventPayload` stream (lifecycle,
// assistant, tool, compaction, error) with run id and gap-free sequence numbers, and pi's assistant events →
// the attempt's ReplyStream. Owns: the mapping, the sequence, telling the turn's limits about provider activity
// and every streamed piece (only what a response's budget keeps reaches the log and the reply; a cut
// response's later events are dropped, its end rewritten by the limits), and collecting the attempt's assistant
// messages (for usage and the outcome). Does not own the limits themselves (turn-limits.ts) or
// persistence: pi calls listeners synchronously without awaiting them and before the entry is stored
// (pi-sdk.md §4.2), so the transcript is written only by the session manager and run events only after the
// turn, from the collected list.
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { AgentSession, AgentSessionEvent } from "@earendil-works/pi-coding-agent";
import type { ReplyStream } from "../streaming/index.ts";
import type { StreamLimits } from "./turn-limits.ts";
import type { AgentEventPayload, AgentEventStream, TurnCallbacks } from "./types.ts";

/** The run's event log: every event gets the next sequence number and reaches the subscriber at once. */
export class TurnEventLog {
  readonly events: AgentEventPayload[] = [];
  readonly #runId: string;
  readonly #now: () => number;
  readonly #subscriber: ((event: AgentEventPayload) => void) | undefined;
  #seq = 0;

  constructor(runId: string, now: () => number, subscriber?: (event: AgentEventPayload) => void) {
    this.#runId = runId;
    this.#now = now;
    this.#subscriber = subscriber;
  }

  emit(stream: AgentEventStream, data: Readonly<Record<string, unknown>>): AgentEventPayload {
    this.#seq += 1;
    const event: AgentEventPayload = { runId: this.#runId, seq: this.#seq, ts: this.#now(), stream, data };
    this.events.push(event);
    if (this.#subscriber) {
      try {
        this.#subscriber(event);
      } catch {
        // A subscriber's failure must not end the turn; the event is in the log either way.
      }
    }
    return event;
  }
}

/** What the bridge learned about one attempt. */
export interface AttemptObservation {
  /** Every assistant message that ended in this attempt, in order. */
  readonly assistantMessages: AssistantMessage[];
  /** Text streamed for the assistant message in progress (kept when the attempt is cut). */
  streamingText: string;
}

export interface BridgeTargets {
  readonly log: TurnEventLog;
  readonly reply: ReplyStream;
  readonly callbacks: TurnCallbacks | undefined;
  /** The turn's stream watchdog and response budget (turn-limits.ts). */
  readonly limits: StreamLimits;
}

function textOfResult(result: unknown): string {
  const content = (result as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : ""))
    .join("");
}

export function assistantText(message: AssistantMessage): string {
  return message.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("")
    .trim();
}

const STREAMED_KIND = { text_delta: "text", thinking_delta: "thinking", toolcall_delta: "toolcall" } as const;

/** Subscribes the bridge to a session; returns the observation and the unsubscribe function. */
export function bridgeSession(
  session: AgentSession,
  targets: BridgeTargets,
): { observation: AttemptObservation; unsubscribe: () => void } {
  const observation: AttemptObservation = { assistantMessages: [], streamingText: "" };
  const { log, reply, callbacks, limits } = targets;
  const unsubscribe = session.subscribe((event: AgentSessionEvent) => {
    switch (event.type) {
      case "turn_start":
        limits.activity(true);
        return;
      case "message_start":
        if (event.message.role === "assistant") {
          observation.streamingText = "";
          limits.activity(true);
          reply.handle({ type: "start", partial: event.message as AssistantMessage });
          log.emit("assistant", { type: "message_start" });
        }
        return;
      case "message_update": {
        limits.activity(true);
        if (limits.cutting) return;
        let update = event.assistantMessageEvent;
        if (
          update.type === "text_delta" ||
          update.type === "thinking_delta" ||
          update.type === "toolcall_delta"
        ) {
          const kept = limits.keep(update.delta, STREAMED_KIND[update.type]);
          if (kept.length === 0) return;
          if (kept.length < update.delta.length) update = { ...update, delta: kept };
        }
        reply.handle(update);
        if (update.type === "text_delta") {
          observation.streamingText += update.delta;
          log.emit("assistant", { type: "text_delta", delta: update.delta });
        } else if (update.type === "thinking_delta") {
          log.emit("assistant", { type: "thinking_delta", delta: update.delta });
        } else if (update.type === "toolcall_end") {
          log.emit("assistant", {
            type: "tool_call",
            toolCallId: update.toolCall.id,
            name: update.toolCall.name,
          });
        }
        return;
      }
      case "message_end": {
        if (event.message.role !== "assistant") return;
        const message = event.message as AssistantMessage;
        // A cut response ends as its kept text plus one line saying it was cut (rewritten before pi stores it).
        const tail = limits.finishCutResponse(message);
        if (tail !== undefined) {
          observation.streamingText += tail;
          reply.handle({ type: "text_delta", contentIndex: 0, delta: tail, partial: message });
          log.emit("assistant", { type: "text_delta", delta: tail });
        }
        observation.assistantMessages.push(message);
        limits.activity(false);
        // pi ends a message with message_end, not a message_update carrying the stream's done/error event.
        if (message.stopReason === "error" || message.stopReason === "aborted")
          reply.handle({ type: "error", reason: message.stopReason, error: message });
        else if (message.stopReason !== "pending")
          reply.handle({ type: "done", reason: message.stopReason, message });
        log.emit("assistant", {
          type: "message_end",
          stopReason: message.stopReason,
          text: assistantText(message),
          provider: message.provider,
          model: message.model,
          ...(message.errorMessage === undefined ? {} : { errorMessage: message.errorMessage }),
        });
        return;
      }
      case "tool_execution_start":
        limits.activity(false);
        reply.toolStart();
        log.emit("tool", {
          phase: "start",
          toolCallId: event.toolCallId,
          name: event.toolName,
          args: event.args as unknown,
        });
        return;
      case "tool_execution_update":
        log.emit("tool", {
          phase: "update",
          toolCallId: event.toolCallId,
          name: event.toolName,
          text: textOfResult(event.partialResult),
        });
        return;
      case "tool_execution_end": {
        const text = textOfResult(event.result);
        log.emit("tool", {
          phase: "end",
          toolCallId: event.toolCallId,
          name: event.toolName,
          isError: event.isError,
          text,
        });
        callbacks?.onToolResult?.({
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          isError: event.isError,
          text,
        });
        return;
      }
      case "compaction_start":
        log.emit("compaction", { phase: "start", reason: event.reason });
        return;
      case "compaction_end":
        log.emit("compaction", {
          phase: "end",
          reason: event.reason,
          aborted: event.aborted,
          ...(event.result ? { tokensBefore: event.result.tokensBefore } : {}),
          ...(event.errorMessage === undefined ? {} : { errorMessage: event.errorMessage }),
        });
        return;
      default:
        return;
    }
  });
  return { observation, unsubscribe };
}
