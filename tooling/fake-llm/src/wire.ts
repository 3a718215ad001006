// What both wire formats share: a response step reduced to ordered content blocks with ids, a stop reason
// and usage; the chunking of text into deltas; and the frame list a renderer produces. Owns no wire syntax
// (openai-wire.ts and anthropic-wire.ts do) and no I/O (server.ts writes the frames).
import type { ContentBlock, ResponseFields, UsageSpec, WireProvider } from "./types.ts";

/** One SSE frame. `delta` marks content deltas, the unit `afterDeltas` counts. */
export interface Frame {
  event?: string;
  data: string;
  delta: boolean;
}

export interface ResolvedToolCall {
  type: "toolCall";
  id: string;
  name: string;
  /** The exact argument text sent on the wire. */
  argumentsText: string;
}

export type ResolvedBlock = Exclude<ContentBlock, { type: "toolCall" }> | ResolvedToolCall;

export interface ResolvedResponse {
  blocks: ResolvedBlock[];
  /** pi-ai name ("stop" | "toolUse" | "length") or a raw provider value sent verbatim. */
  stopReason: string;
  usage: Required<UsageSpec>;
  chunkSize: number | undefined;
  /** How many times each text block is streamed (`ResponseFields.repeat`). */
  repeat: number;
  reasoningField: NonNullable<ResponseFields["reasoningField"]>;
}

/** The ordered content of a response: explicit `content`, else thinking, text, tool calls. */
export function responseBlocks(fields: ResponseFields): ContentBlock[] {
  if (fields.content) return fields.content;
  const blocks: ContentBlock[] = [];
  if (fields.thinking !== undefined) blocks.push({ type: "thinking", thinking: fields.thinking });
  if (fields.text !== undefined) blocks.push({ type: "text", text: fields.text });
  for (const call of fields.toolCalls ?? []) blocks.push({ type: "toolCall", ...call });
  return blocks;
}

export function resolveResponse(fields: ResponseFields, provider: WireProvider): ResolvedResponse {
  let toolNumber = 0;
  let streamedChars = 0;
  const repeat = fields.repeat ?? 1;
  const blocks = responseBlocks(fields).map((block): ResolvedBlock => {
    if (block.type !== "toolCall") {
      streamedChars += block.type === "text" ? block.text.length * repeat : block.thinking.length;
      return block;
    }
    toolNumber += 1;
    const argumentsText =
      typeof block.arguments === "string" ? block.arguments : JSON.stringify(block.arguments);
    streamedChars += argumentsText.length;
    return {
      type: "toolCall",
      id: block.id ?? (provider === "anthropic" ? `toolu_${toolNumber}` : `call_${toolNumber}`),
      name: block.name,
      argumentsText,
    };
  });
  const hasToolCall = blocks.some((block) => block.type === "toolCall");
  return {
    blocks,
    stopReason: fields.stopReason ?? (hasToolCall ? "toolUse" : "stop"),
    usage: {
      input: fields.usage?.input ?? 10,
      output: fields.usage?.output ?? Math.max(1, Math.ceil(streamedChars / 4)),
      cacheRead: fields.usage?.cacheRead ?? 0,
      cacheWrite: fields.usage?.cacheWrite ?? 0,
      reasoning: fields.usage?.reasoning ?? 0,
    },
    chunkSize: fields.chunkSize,
    repeat,
    reasoningField: fields.reasoningField ?? "reasoning_content",
  };
}

/** Text deltas: fixed-size pieces when `chunkSize` is set, else one piece per word (leading spaces kept). */
export function chunkText(text: string, chunkSize: number | undefined): string[] {
  if (text.length === 0) return [];
  if (chunkSize !== undefined) {
    const pieces: string[] = [];
    for (let start = 0; start < text.length; start += chunkSize)
      pieces.push(text.slice(start, start + chunkSize));
    return pieces;
  }
  return text.match(/\s*\S+|\s+$/g) ?? [text];
}

/** A text block's deltas, `repeat` times over, made as they are read (the whole text is never built). */
export function* repeatedText(
  text: string,
  chunkSize: number | undefined,
  repeat: number,
): Generator<string> {
  const pieces = chunkText(text, chunkSize);
  for (let round = 0; round < repeat; round++) yield* pieces;
}

/** The text a JSON body carries for a text block (the repetitions in full). */
export function wholeText(text: string, repeat: number): string {
  return repeat === 1 ? text : text.repeat(repeat);
}

/** Tool-argument deltas: fixed-size pieces when `chunkSize` is set, else three roughly equal parts. */
export function chunkArguments(argumentsText: string, chunkSize: number | undefined): string[] {
  if (argumentsText.length === 0) return [];
  const size = chunkSize ?? Math.max(1, Math.ceil(argumentsText.length / 3));
  return chunkText(argumentsText, size);
}

/** Tool arguments as an object for non-streaming bodies (a raw string that is not JSON becomes `{}`). */
export function argumentsObject(argumentsText: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export function jsonFrame(value: unknown, delta: boolean, event?: string): Frame {
  return event === undefined
    ? { data: JSON.stringify(value), delta }
    : { event, data: JSON.stringify(value), delta };
}
