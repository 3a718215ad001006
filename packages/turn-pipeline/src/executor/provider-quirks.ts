// Provider quirks applied to what the model is sent (never to the stored transcript), as OpenClaw 2026.9.6's
// sanitizers do: Anthropic's refusal magic string scrubbed (`scrubAnthropicRefusalMagic`, run/helpers.ts),
// Anthropic turn validation (consecutive assistant turns merged, tool calls without a result before the next
// assistant turn stripped, consecutive user turns merged: `validateAnthropicTurns`), Gemini turn validation
// (consecutive assistant turns merged: `validateGeminiTurns`) and Google's assistant-first ordering fix
// (`sanitizeGoogleAssistantFirstOrdering`: a synthetic "(session bootstrap)" user turn first). Which quirks a
// model gets follows OpenClaw's transport fallback policy on the model's API (`anthropic-messages`,
// `google-generative-ai`); the magic-string scrub follows its provider check (`anthropic`).
// Does not own: when the request is built (hermetic-session.ts wraps pi's `convertToLlm` with this), nor
// tool-schema cleaning or thinking-signature handling (not ported).
import type { Api, Message, Model } from "@earendil-works/pi-ai";

/** The string Anthropic's API answers with a refusal for (a test hook of theirs); a user could send it. */
export const ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL = "ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL";
/** What it is replaced with (OpenClaw's text). */
export const ANTHROPIC_MAGIC_STRING_REPLACEMENT = "[redacted]";
/** The synthetic first user turn Google-style APIs get before an assistant-first history. */
export const GOOGLE_TURN_ORDER_BOOTSTRAP_TEXT = "(session bootstrap)";

/** A message as the quirks see it: pi-ai's `Message` plus pi's system messages (role "system"). */
// biome-ignore lint/suspicious/noExplicitAny: the request's messages are pi's union plus system entries.
export type RequestMessage = Message | { role: string; [key: string]: any };

/** Which quirks a model's requests get. */
export interface ProviderQuirks {
  readonly scrubRefusalMagic: boolean;
  readonly validateAnthropicTurns: boolean;
  readonly validateGeminiTurns: boolean;
  readonly googleTurnOrdering: boolean;
}

/** The quirks for `model`: OpenClaw's fallback policy keyed on the model's API and provider. */
export function providerQuirksFor(model: Pick<Model<Api>, "api" | "provider">): ProviderQuirks {
  const google = model.api === "google-generative-ai" || model.api === "google-vertex";
  const anthropic = model.api === "anthropic-messages";
  return {
    // OpenClaw checks the provider id only; the marker is read by Anthropic's Messages API, so any provider
    // speaking it (a custom one of another id) gets the scrub too.
    scrubRefusalMagic: model.provider === "anthropic" || anthropic,
    validateAnthropicTurns: anthropic,
    validateGeminiTurns: google,
    googleTurnOrdering: google,
  };
}

/** OpenClaw's `scrubAnthropicRefusalMagic`: every occurrence replaced, the text otherwise untouched. */
export function scrubAnthropicRefusalMagic(text: string): string {
  if (!text.includes(ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL)) return text;
  return text.replaceAll(ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL, ANTHROPIC_MAGIC_STRING_REPLACEMENT);
}

/**
 * Applies `quirks` to the messages of one request; returns the input array itself when nothing changed (so
 * a request without quirks costs nothing).
 */
export function applyProviderQuirks<T extends RequestMessage>(messages: T[], quirks: ProviderQuirks): T[] {
  let next = messages;
  if (quirks.scrubRefusalMagic) next = scrubUserMessages(next);
  // pi-ai's transports never send an errored or aborted assistant turn; dropped first so the validation
  // sees the turns the provider will see side by side (a failed turn leaves two user turns in a row).
  if (quirks.validateAnthropicTurns || quirks.validateGeminiTurns) next = dropUnsentAssistantTurns(next);
  if (quirks.googleTurnOrdering) next = sanitizeGoogleAssistantFirstOrdering(next);
  if (quirks.validateGeminiTurns) next = validateGeminiTurns(next);
  if (quirks.validateAnthropicTurns) next = validateAnthropicTurns(next);
  return next;
}

function dropUnsentAssistantTurns<T extends RequestMessage>(messages: T[]): T[] {
  const unsent = (message: T) =>
    message.role === "assistant" &&
    ((message as { stopReason?: unknown }).stopReason === "error" ||
      (message as { stopReason?: unknown }).stopReason === "aborted");
  return messages.some(unsent) ? messages.filter((message) => !unsent(message)) : messages;
}

/**
 * The magic string scrubbed from every user turn sent (OpenClaw scrubs the turn's prompt before it is
 * stored; the kernel stores the message as received and scrubs what is sent, history included).
 */
function scrubUserMessages<T extends RequestMessage>(messages: T[]): T[] {
  let next: T[] | undefined;
  messages.forEach((message, index) => {
    if (message.role !== "user") return;
    const content = (message as { content: unknown }).content;
    let scrubbed: unknown = content;
    if (typeof content === "string") scrubbed = scrubAnthropicRefusalMagic(content);
    else if (Array.isArray(content) && content.some(hasMagicString)) {
      const blocks = content.map((block) =>
        block && typeof block === "object" && block.type === "text" && typeof block.text === "string"
          ? scrubText(block)
          : block,
      );
      if (blocks.some((block, i) => block !== content[i])) scrubbed = blocks;
    }
    if (scrubbed === content) return;
    next ??= messages.slice();
    next[index] = { ...message, content: scrubbed } as T;
  });
  return next ?? messages;
}

function hasMagicString(block: unknown): boolean {
  const text = block && typeof block === "object" ? (block as { text?: unknown }).text : undefined;
  return typeof text === "string" && text.includes(ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL);
}

function scrubText(block: { text: string }): { text: string } {
  const text = scrubAnthropicRefusalMagic(block.text);
  return text === block.text ? block : { ...block, text };
}

/**
 * OpenClaw's `sanitizeGoogleAssistantFirstOrdering`, applied after the request's leading system messages
 * (pi sends its system prompt as messages; OpenClaw's history has none there).
 */
export function sanitizeGoogleAssistantFirstOrdering<T extends RequestMessage>(messages: T[]): T[] {
  const firstIndex = messages.findIndex((message) => message.role !== "system");
  const first = firstIndex < 0 ? undefined : messages[firstIndex];
  if (first === undefined) return messages;
  const content = (first as { content?: unknown }).content;
  if (
    first.role === "user" &&
    typeof content === "string" &&
    content.trim() === GOOGLE_TURN_ORDER_BOOTSTRAP_TEXT
  )
    return messages;
  if (first.role !== "assistant") return messages;
  const bootstrap = { role: "user", content: GOOGLE_TURN_ORDER_BOOTSTRAP_TEXT, timestamp: Date.now() } as T;
  return [...messages.slice(0, firstIndex), bootstrap, ...messages.slice(firstIndex)];
}

/** OpenClaw's `validateGeminiTurns`: consecutive assistant turns merged into one. */
export function validateGeminiTurns<T extends RequestMessage>(messages: T[]): T[] {
  return mergeConsecutive(messages, "assistant", mergeAssistantTurns);
}

/**
 * OpenClaw's `validateAnthropicTurns`: consecutive assistant turns merged, dangling tool calls stripped
 * (a tool call whose result does not follow before the next assistant turn: Anthropic refuses "tool_use ids
 * found without tool_result blocks"), then consecutive user turns merged.
 */
export function validateAnthropicTurns<T extends RequestMessage>(messages: T[]): T[] {
  const stripped = stripDanglingToolCalls(mergeConsecutive(messages, "assistant", mergeAssistantTurns));
  return mergeConsecutive(stripped, "user", mergeUserTurns);
}

function mergeConsecutive<T extends RequestMessage>(
  messages: T[],
  role: string,
  merge: (a: T, b: T) => T,
): T[] {
  // Most requests have nothing to merge: one scan, no copy.
  let previousRole: string | undefined;
  let found = false;
  for (const message of messages) {
    const messageRole = message && typeof message === "object" ? message.role : undefined;
    if (messageRole === role && previousRole === role) {
      found = true;
      break;
    }
    if (messageRole) previousRole = messageRole;
  }
  if (!found) return messages;
  const result: T[] = [];
  let lastRole: string | undefined;
  for (const message of messages) {
    if (!message || typeof message !== "object" || !message.role) {
      result.push(message);
      continue;
    }
    if (message.role === lastRole && lastRole === role) {
      const last = result[result.length - 1];
      if (last && typeof last === "object") {
        result[result.length - 1] = merge(last, message);
        continue;
      }
    }
    result.push(message);
    lastRole = message.role;
  }
  return result.length === messages.length ? messages : result;
}

function arrayContent(message: RequestMessage): unknown[] {
  const content = (message as { content?: unknown }).content;
  return Array.isArray(content) ? content : [];
}

function mergeAssistantTurns<T extends RequestMessage>(previous: T, current: T): T {
  const currentRecord = current as { usage?: unknown; stopReason?: unknown; errorMessage?: unknown };
  return {
    ...previous,
    content: [...arrayContent(previous), ...arrayContent(current)],
    ...(currentRecord.usage ? { usage: currentRecord.usage } : {}),
    ...(currentRecord.stopReason ? { stopReason: currentRecord.stopReason } : {}),
    ...(currentRecord.errorMessage ? { errorMessage: currentRecord.errorMessage } : {}),
  } as T;
}

function userContent(message: RequestMessage): unknown[] {
  const content = (message as { content?: unknown }).content;
  if (Array.isArray(content)) return content;
  if (typeof content === "string") return [{ type: "text", text: content }];
  return [];
}

function mergeUserTurns<T extends RequestMessage>(previous: T, current: T): T {
  const timestamp =
    (current as { timestamp?: unknown }).timestamp ?? (previous as { timestamp?: unknown }).timestamp;
  return { ...current, content: [...userContent(previous), ...userContent(current)], timestamp } as T;
}

interface ToolCallBlock {
  readonly type: string;
  readonly id?: unknown;
  readonly name?: unknown;
}

function isToolCallBlock(block: unknown): block is ToolCallBlock {
  if (!block || typeof block !== "object") return false;
  const type = (block as { type?: unknown }).type;
  return type === "toolCall" || type === "toolUse" || type === "functionCall";
}

function isThinkingBlock(block: unknown): boolean {
  if (!block || typeof block !== "object") return false;
  const type = (block as { type?: unknown }).type;
  return type === "thinking" || type === "redacted_thinking";
}

function trimmed(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/** Tool-result ids (and the tool names they name) between `index` and the next assistant turn. */
function futureToolResults(messages: readonly RequestMessage[], index: number): Map<string, Set<string>> {
  const matches = new Map<string, Set<string>>();
  for (let i = index + 1; i < messages.length; i++) {
    const candidate = messages[i] as Record<string, unknown> | undefined;
    if (!candidate || typeof candidate !== "object") continue;
    if (candidate.role === "assistant") break;
    if (candidate.role !== "toolResult" && candidate.role !== "tool") continue;
    const name = trimmed(candidate.toolName) ?? trimmed(candidate.name);
    for (const key of ["toolCallId", "toolUseId", "tool_use_id", "tool_call_id", "callId", "call_id"]) {
      const id = trimmed(candidate[key]);
      if (!id) continue;
      const bucket = matches.get(id) ?? new Set<string>();
      if (name) bucket.add(name);
      matches.set(id, bucket);
    }
  }
  return matches;
}

const TOOL_CALLS_OMITTED = "[tool calls omitted]";

/** Whether an assistant turn has a tool call no result answers before the next assistant turn. */
function hasDanglingToolCall<T extends RequestMessage>(
  messages: readonly T[],
  message: T,
  index: number,
): boolean {
  if (message.role !== "assistant") return false;
  const calls = arrayContent(message).filter(isToolCallBlock);
  if (calls.length === 0) return false;
  const results = futureToolResults(messages, index);
  return calls.some((call) => {
    const id = trimmed(call.id);
    const name = trimmed(call.name);
    if (!id || !name) return true;
    const names = results.get(id);
    return names === undefined || (names.size > 0 && !names.has(name));
  });
}

function stripDanglingToolCalls<T extends RequestMessage>(messages: T[]): T[] {
  // A pre-check (it may say yes where nothing changes, never no where something would): most requests skip the copy.
  if (!messages.some((message, index) => !message || hasDanglingToolCall(messages, message, index)))
    return messages;
  const result: T[] = [];
  let changed = false;
  messages.forEach((message, index) => {
    if (!message) {
      changed = true;
      return;
    }
    if (message.role !== "assistant") {
      result.push(message);
      return;
    }
    const content = arrayContent(message);
    if (content.length === 0 || !content.some(isToolCallBlock)) {
      result.push(message);
      return;
    }
    const aborted =
      (message as { stopReason?: unknown }).stopReason === "aborted" ||
      (message as { stopReason?: unknown }).stopReason === "error";
    const results = futureToolResults(messages, index);
    if (content.some(isThinkingBlock)) {
      // A signed thinking turn cannot be edited block by block: kept whole when every call is answered.
      const allAnswered = content.every((block) => {
        if (!isToolCallBlock(block)) return true;
        const id = trimmed(block.id);
        const name = trimmed(block.name);
        if (!id || !name) return false;
        const names = results.get(id);
        return names !== undefined && (names.size === 0 || names.has(name));
      });
      if (allAnswered) result.push(message);
      else {
        changed = true;
        result.push({
          ...message,
          content: aborted ? [] : [{ type: "text", text: TOOL_CALLS_OMITTED }],
        } as T);
      }
      return;
    }
    const kept = content.filter((block) => {
      if (!block) return false;
      if (!isToolCallBlock(block)) return true;
      const id = trimmed(block.id);
      return id ? results.has(id) : false;
    });
    if (kept.length === content.length) {
      result.push(message);
      return;
    }
    changed = true;
    result.push({
      ...message,
      content: kept.length === 0 ? (aborted ? [] : [{ type: "text", text: TOOL_CALLS_OMITTED }]) : kept,
    } as T);
  });
  return changed ? result : messages;
}
