// The callback form of ReplyStream's events (onPartialReply, onBlockReply, onReasoningStream): subscribers of
// the one stream, never separate code paths. Owns only the mapping from events to callbacks.
import type { ReplyPayload } from "./reply-payload.ts";
import type { ReplyStream } from "./reply-stream.ts";

export type ReplyCallbacks = {
  onPartialReply?: (payload: { text: string; delta: string }) => void;
  onBlockReply?: (payload: ReplyPayload) => void;
  onReasoningStream?: (payload: { text: string; delta: string }) => void;
};

/** Callbacks as subscribers of the one stream. */
export function subscribeReplyCallbacks(stream: ReplyStream, callbacks: ReplyCallbacks): () => void {
  return stream.subscribe((event) => {
    if (event.type === "partial") callbacks.onPartialReply?.({ text: event.text, delta: event.delta });
    else if (event.type === "block") callbacks.onBlockReply?.(event.payload);
    else if (event.type === "reasoning")
      callbacks.onReasoningStream?.({ text: event.text, delta: event.delta });
  });
}
