// Anthropic Messages wire syntax: the SSE event sequence (message_start, content_block_start/delta/stop for
// thinking with signature, text and tool_use with input_json_delta, message_delta with stop_reason and usage,
// message_stop) and the non-streaming `message` body, shaped the way pi-ai 0.87.1's anthropic-messages
// provider reads them. Does no I/O and no step selection.
import {
  argumentsObject,
  chunkArguments,
  chunkText,
  type Frame,
  jsonFrame,
  type ResolvedResponse,
  repeatedText,
  wholeText,
} from "./wire.ts";

export interface AnthropicRenderContext {
  id: string;
  model: string;
}

const STOP_REASONS: Record<string, string> = { stop: "end_turn", toolUse: "tool_use", length: "max_tokens" };

function stopReason(name: string): string {
  return STOP_REASONS[name] ?? name;
}

const DEFAULT_SIGNATURE = "sig-fake";

function event(type: string, payload: Record<string, unknown>, isDelta = false): Frame {
  return jsonFrame({ type, ...payload }, isDelta, type);
}

/** The SSE events, made as they are read (a repeated text is never built whole). */
export function* anthropicFrames(
  response: ResolvedResponse,
  context: AnthropicRenderContext,
): Generator<Frame> {
  const { input, output, cacheRead, cacheWrite } = response.usage;
  yield event("message_start", {
    message: {
      id: context.id,
      type: "message",
      role: "assistant",
      model: context.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: input,
        output_tokens: 1,
        cache_read_input_tokens: cacheRead,
        cache_creation_input_tokens: cacheWrite,
      },
    },
  });
  for (const [index, block] of response.blocks.entries()) {
    if (block.type === "text") {
      yield event("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const piece of repeatedText(block.text, response.chunkSize, response.repeat)) {
        yield event("content_block_delta", { index, delta: { type: "text_delta", text: piece } }, true);
      }
    } else if (block.type === "thinking") {
      yield event("content_block_start", {
        index,
        content_block: { type: "thinking", thinking: "", signature: "" },
      });
      for (const piece of chunkText(block.thinking, response.chunkSize)) {
        yield event(
          "content_block_delta",
          { index, delta: { type: "thinking_delta", thinking: piece } },
          true,
        );
      }
      yield event("content_block_delta", {
        index,
        delta: { type: "signature_delta", signature: block.signature ?? DEFAULT_SIGNATURE },
      });
    } else {
      yield event("content_block_start", {
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      for (const piece of chunkArguments(block.argumentsText, response.chunkSize)) {
        yield event(
          "content_block_delta",
          { index, delta: { type: "input_json_delta", partial_json: piece } },
          true,
        );
      }
    }
    yield event("content_block_stop", { index });
  }
  yield event("message_delta", {
    delta: { stop_reason: stopReason(response.stopReason), stop_sequence: null },
    usage: { output_tokens: output },
  });
  yield event("message_stop", {});
}

export function anthropicMessageBody(response: ResolvedResponse, context: AnthropicRenderContext): unknown {
  const { input, output, cacheRead, cacheWrite } = response.usage;
  return {
    id: context.id,
    type: "message",
    role: "assistant",
    model: context.model,
    content: response.blocks.map((block) => {
      if (block.type === "text") return { type: "text", text: wholeText(block.text, response.repeat) };
      if (block.type === "thinking") {
        return {
          type: "thinking",
          thinking: block.thinking,
          signature: block.signature ?? DEFAULT_SIGNATURE,
        };
      }
      return {
        type: "tool_use",
        id: block.id,
        name: block.name,
        input: argumentsObject(block.argumentsText),
      };
    }),
    stop_reason: stopReason(response.stopReason),
    stop_sequence: null,
    usage: {
      input_tokens: input,
      output_tokens: output,
      cache_read_input_tokens: cacheRead,
      cache_creation_input_tokens: cacheWrite,
    },
  };
}

/** An in-stream `event: error` (pi-ai throws its data as the error message). */
export function anthropicStreamErrorFrame(error: Record<string, unknown>): Frame {
  return jsonFrame({ type: "error", error }, false, "error");
}
