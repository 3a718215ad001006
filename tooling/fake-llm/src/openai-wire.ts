// OpenAI chat-completions wire syntax: `chat.completion.chunk` SSE frames (role, reasoning, content and
// tool_calls deltas, finish_reason, an optional usage chunk, `[DONE]`) and the non-streaming
// `chat.completion` body, shaped the way pi-ai 0.87.1's openai-completions provider reads them.
// Does no I/O and no step selection.
import {
  chunkArguments,
  chunkText,
  type Frame,
  jsonFrame,
  type ResolvedResponse,
  repeatedText,
  wholeText,
} from "./wire.ts";

export interface OpenAiRenderContext {
  id: string;
  model: string;
  created: number;
  includeUsage: boolean;
}

const FINISH_REASONS: Record<string, string> = { stop: "stop", toolUse: "tool_calls", length: "length" };

function finishReason(stopReason: string): string {
  return FINISH_REASONS[stopReason] ?? stopReason;
}

function wireUsage(response: ResolvedResponse): Record<string, unknown> {
  const { input, output, cacheRead, cacheWrite, reasoning } = response.usage;
  const promptTokens = input + cacheRead + cacheWrite;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: output,
    total_tokens: promptTokens + output,
    prompt_tokens_details: {
      cached_tokens: cacheRead,
      ...(cacheWrite > 0 ? { cache_write_tokens: cacheWrite } : {}),
    },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

/** The SSE frames, made as they are read (a repeated text is never built whole). */
export function* openAiFrames(response: ResolvedResponse, context: OpenAiRenderContext): Generator<Frame> {
  const base = {
    id: context.id,
    object: "chat.completion.chunk",
    created: context.created,
    model: context.model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null, isDelta: boolean): Frame =>
    jsonFrame({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] }, isDelta);
  yield chunk({ role: "assistant", content: "" }, null, false);
  let toolIndex = 0;
  for (const block of response.blocks) {
    if (block.type === "text") {
      for (const piece of repeatedText(block.text, response.chunkSize, response.repeat))
        yield chunk({ content: piece }, null, true);
    } else if (block.type === "thinking") {
      for (const piece of chunkText(block.thinking, response.chunkSize)) {
        yield chunk({ [response.reasoningField]: piece }, null, true);
      }
    } else {
      const index = toolIndex++;
      yield chunk(
        {
          tool_calls: [
            { index, id: block.id, type: "function", function: { name: block.name, arguments: "" } },
          ],
        },
        null,
        false,
      );
      for (const piece of chunkArguments(block.argumentsText, response.chunkSize)) {
        yield chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null, true);
      }
    }
  }
  yield chunk({}, finishReason(response.stopReason), false);
  if (context.includeUsage) yield jsonFrame({ ...base, choices: [], usage: wireUsage(response) }, false);
  yield { data: "[DONE]", delta: false };
}

export function openAiCompletionBody(response: ResolvedResponse, context: OpenAiRenderContext): unknown {
  const text = response.blocks
    .flatMap((block) => (block.type === "text" ? [wholeText(block.text, response.repeat)] : []))
    .join("");
  const thinking = response.blocks
    .flatMap((block) => (block.type === "thinking" ? [block.thinking] : []))
    .join("");
  const toolCalls = response.blocks.flatMap((block) =>
    block.type === "toolCall"
      ? [{ id: block.id, type: "function", function: { name: block.name, arguments: block.argumentsText } }]
      : [],
  );
  return {
    id: context.id,
    object: "chat.completion",
    created: context.created,
    model: context.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: text.length > 0 ? text : null,
          ...(thinking.length > 0 ? { [response.reasoningField]: thinking } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finishReason(response.stopReason),
      },
    ],
    usage: wireUsage(response),
  };
}

/** An in-stream error frame (the OpenAI SDK throws an APIError when a chunk carries `error`). */
export function openAiStreamErrorFrame(error: Record<string, unknown>): Frame {
  return jsonFrame({ error }, false);
}
