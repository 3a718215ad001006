// Cache-TTL context pruning (`agents.defaults.contextPruning.mode: "cache-ttl"`), OpenClaw 2026.9.6's
// `pruneExpiredCacheTtlToolResults`: once the provider's prompt cache has expired (no request for `ttl`), old
// tool results are trimmed in what the model is sent — never in the stored transcript — so the re-cached
// prefix is smaller. Only tool results between the first user turn and the third-last assistant turn are
// touched, only when the context fills at least 30 % of the model's window (4 chars a token): a result over
// 4000 chars keeps its first and last 1500 (soft trim); when the context still fills 50 % and the eligible
// results hold at least 50000 chars, they are replaced by a placeholder, oldest first, until it does not
// (hard clear). A result once trimmed stays trimmed in every later request of the session (the cached prefix
// stays stable). Owns: the settings, the projection and the per-session record of what was trimmed. Does not
// own: when it runs (hermetic-session.ts wraps pi's `transformContext`, as OpenClaw's attempt does).
import type { Api, Model } from "@earendil-works/pi-ai";

/** `agents.defaults.contextPruning` as the config holds it. */
export interface ContextPruningConfig {
  readonly mode?: "off" | "cache-ttl" | undefined;
  readonly ttl?: string | undefined;
  readonly tools?:
    | { readonly allow?: readonly string[] | undefined; readonly deny?: readonly string[] | undefined }
    | undefined;
  readonly hardClear?:
    | { readonly enabled?: boolean | undefined; readonly placeholder?: string | undefined }
    | undefined;
}

/** The resolved settings of cache-TTL pruning. */
export interface CacheTtlPruningSettings {
  readonly ttlMs: number;
  readonly hardClear: boolean;
  readonly placeholder: string;
  readonly isToolPrunable: (toolName: string) => boolean;
}

/** OpenClaw's defaults: 5 minutes (Anthropic's prompt-cache lifetime) and its placeholder text. */
export const CACHE_TTL_DEFAULT_TTL_MS = 5 * 60_000;
export const CACHE_TTL_DEFAULT_PLACEHOLDER = "[Old tool result content cleared]";
const CACHE_TTL_IMAGE_CHARS = 8000;
const CACHE_TTL_IMAGE_MARKER = "[image removed during context pruning]";
const KEEP_LAST_ASSISTANTS = 3;
const SOFT_TRIM_RATIO = 0.3;
const HARD_CLEAR_RATIO = 0.5;
const MIN_PRUNABLE_TOOL_CHARS = 50_000;
const SOFT_TRIM_MAX_CHARS = 4000;
const SOFT_TRIM_HEAD_CHARS = 1500;
const SOFT_TRIM_TAIL_CHARS = 1500;
const CHARS_PER_TOKEN = 4;

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/i;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration such as "5m", "1h", "30s" or "10" (minutes, OpenClaw's default unit); undefined when malformed. */
export function parseTtlMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const unit = (match[2] ?? "m").toLowerCase();
  return Math.round(Number(match[1]) * (UNIT_MS[unit] ?? 60_000));
}

/** A glob over tool names (`*` any run of characters), matched case-insensitively. */
function globMatcher(patterns: readonly string[] | undefined): ((name: string) => boolean) | undefined {
  const compiled = (patterns ?? [])
    .map((pattern) => pattern.trim().toLowerCase())
    .filter((pattern) => pattern.length > 0)
    .map((pattern) => new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`));
  if (compiled.length === 0) return undefined;
  return (name) => compiled.some((regex) => regex.test(name));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The settings for `config`, or undefined when pruning is off (OpenClaw's `resolveCacheTtlPruningSettings`). */
export function resolveCacheTtlPruningSettings(
  config: ContextPruningConfig | undefined,
): CacheTtlPruningSettings | undefined {
  if (config?.mode !== "cache-ttl") return undefined;
  const ttlMs =
    config.ttl === undefined
      ? CACHE_TTL_DEFAULT_TTL_MS
      : (parseTtlMs(config.ttl) ?? CACHE_TTL_DEFAULT_TTL_MS);
  const deny = globMatcher(config.tools?.deny);
  const allow = globMatcher(config.tools?.allow);
  return {
    ttlMs,
    hardClear: config.hardClear?.enabled ?? true,
    placeholder: config.hardClear?.placeholder?.trim() || CACHE_TTL_DEFAULT_PLACEHOLDER,
    isToolPrunable: (toolName) => {
      const name = toolName.trim().toLowerCase();
      return !(deny?.(name) ?? false) && (allow === undefined || allow(name));
    },
  };
}

/**
 * Whether a model's provider keeps a prompt cache the TTL is about (OpenClaw's `isCacheTtlEligibleProvider`
 * fallback: the Anthropic family and Google's prompt cache).
 */
export function isCacheTtlEligible(model: Pick<Model<Api>, "api" | "provider">): boolean {
  return (
    model.api === "anthropic-messages" ||
    model.provider === "anthropic" ||
    model.api === "google-generative-ai" ||
    model.api === "google-vertex"
  );
}

/** What was trimmed in a session, by tool call id: replayed in every later request. */
export interface PruningRecord {
  readonly trimmed: Map<string, { readonly mode: "soft" | "hard"; readonly content: unknown[] }>;
}

/** A fresh record (one per session; the executor keeps it with the session's transcript binding). */
export function createPruningRecord(): PruningRecord {
  return { trimmed: new Map() };
}

// biome-ignore lint/suspicious/noExplicitAny: pi's AgentMessage union plus custom roles.
type ContextMessage = { role: string; [key: string]: any };

export interface PruneInput<T extends ContextMessage> {
  readonly messages: T[];
  readonly settings: CacheTtlPruningSettings;
  readonly contextWindowTokens: number;
  /** When the provider's cache was last written (its last answer, or the last pruning); null: never. */
  readonly lastCacheTouchAt: number | null;
  readonly now: number;
  readonly record: PruningRecord;
}

function textOf(block: unknown, serializeMalformed: boolean): string | undefined {
  if (!block || typeof block !== "object" || (block as { type?: unknown }).type !== "text") return undefined;
  const text = (block as { text?: unknown }).text;
  if (typeof text === "string") return text;
  if (!serializeMalformed) return undefined;
  try {
    return JSON.stringify(block) ?? "[malformed text block]";
  } catch {
    return "[malformed text block]";
  }
}

/** OpenClaw's `cacheTtlMessageChars`: the characters a message puts in the request. */
export function messageChars(message: ContextMessage): number {
  if (message.role === "user" && typeof message.content === "string") return message.content.length;
  if (message.role !== "user" && message.role !== "assistant" && message.role !== "toolResult") return 256;
  const content: unknown[] = Array.isArray(message.content) ? message.content : [];
  return content.reduce<number>((chars, block) => {
    if (!block || typeof block !== "object") return chars;
    const text = textOf(block, message.role !== "assistant");
    if (text !== undefined) return chars + text.length;
    const record = block as Record<string, unknown>;
    if (record.type === "image") return chars + CACHE_TTL_IMAGE_CHARS;
    if (message.role !== "assistant") return chars;
    if (record.type === "thinking" || record.type === "redacted_thinking") {
      const parts = [
        record.thinking,
        record.thinkingSignature,
        ...(record.type === "redacted_thinking" ? [record.data] : []),
      ];
      return parts.reduce<number>(
        (sum, value) => sum + (typeof value === "string" ? value.length : 0),
        chars,
      );
    }
    if (record.type !== "toolCall") return chars;
    try {
      return chars + JSON.stringify(record.arguments ?? {}).length;
    } catch {
      return chars + 128;
    }
  }, 0);
}

/** OpenClaw's `softPruneCacheTtlToolResult`: head and tail of a long result, images named. */
function softTrim<T extends ContextMessage>(message: T): T {
  const content: unknown[] = Array.isArray(message.content) ? message.content : [];
  const hasImage = content.some((block) => (block as { type?: unknown })?.type === "image");
  const text = content
    .flatMap((block) => {
      const value = textOf(block, true);
      if (value !== undefined) return [value];
      return (block as { type?: unknown })?.type === "image" ? [CACHE_TTL_IMAGE_MARKER] : [];
    })
    .join("\n");
  if (!hasImage && text.length <= SOFT_TRIM_MAX_CHARS) return message;
  const projected =
    text.length <= SOFT_TRIM_MAX_CHARS
      ? text
      : `${text.slice(0, SOFT_TRIM_HEAD_CHARS)}\n...\n${text.slice(-SOFT_TRIM_TAIL_CHARS)}\n\n[Tool result trimmed: kept first ${SOFT_TRIM_HEAD_CHARS} chars and last ${SOFT_TRIM_TAIL_CHARS} chars of ${text.length} chars.]`;
  return { ...message, content: [{ type: "text", text: projected }] };
}

function toolCallIdOf(message: ContextMessage): string | undefined {
  return typeof message.toolCallId === "string" && message.toolCallId ? message.toolCallId : undefined;
}

/**
 * The messages to send: earlier trims replayed, then (the cache having expired) new ones made. Returns the
 * input array itself when nothing changed; never mutates it. `onPruned` is called when this call trimmed.
 */
export function pruneExpiredToolResults<T extends ContextMessage>(
  input: PruneInput<T>,
  onPruned?: () => void,
): T[] {
  const { settings, record } = input;
  let next: T[] | undefined;
  const replace = (index: number, message: T) => {
    next ??= input.messages.slice();
    next[index] = message;
  };
  // Earlier trims first: a result trimmed once is sent trimmed from then on.
  input.messages.forEach((message, index) => {
    if (message.role !== "toolResult") return;
    const id = toolCallIdOf(message);
    const trimmed = id === undefined ? undefined : record.trimmed.get(id);
    if (trimmed) replace(index, { ...message, content: trimmed.content });
  });
  const messages: T[] = next ?? input.messages;
  const unchanged = () => next ?? input.messages;
  if (
    input.lastCacheTouchAt === null ||
    settings.ttlMs <= 0 ||
    input.now - input.lastCacheTouchAt < settings.ttlMs
  )
    return unchanged();
  const assistants = messages.flatMap((message, index) => (message.role === "assistant" ? [index] : []));
  const cutoff = assistants.at(-KEEP_LAST_ASSISTANTS) ?? -1;
  const start = messages.findIndex((message) => message.role === "user");
  if (cutoff < 0 || start < 0) return unchanged();
  const chars = messages.map(messageChars);
  let totalChars = chars.reduce((sum, value) => sum + value, 0);
  const charWindow = input.contextWindowTokens * CHARS_PER_TOKEN;
  if (totalChars / charWindow < SOFT_TRIM_RATIO) return unchanged();
  let pruned = false;
  const eligible: { index: number; chars: number }[] = [];
  for (let index = start; index < cutoff; index++) {
    const message = (next ?? messages)[index] as T;
    if (message.role !== "toolResult") continue;
    if (!settings.isToolPrunable(typeof message.toolName === "string" ? message.toolName : "")) continue;
    const id = toolCallIdOf(message);
    const previous = id === undefined ? undefined : record.trimmed.get(id);
    if (previous?.mode === "hard") continue;
    const candidate = { index, chars: chars[index] ?? 0 };
    eligible.push(candidate);
    if (previous?.mode === "soft") continue;
    const projected = softTrim(message);
    if (projected !== message) {
      const projectedChars = messageChars(projected);
      totalChars += projectedChars - candidate.chars;
      candidate.chars = projectedChars;
      if (id !== undefined) record.trimmed.set(id, { mode: "soft", content: projected.content });
      replace(index, projected);
      pruned = true;
    }
  }
  const eligibleChars = eligible.reduce((sum, candidate) => sum + candidate.chars, 0);
  if (
    totalChars / charWindow >= HARD_CLEAR_RATIO &&
    settings.hardClear &&
    eligibleChars >= MIN_PRUNABLE_TOOL_CHARS
  ) {
    for (const { index, chars: before } of eligible) {
      if (totalChars / charWindow < HARD_CLEAR_RATIO) break;
      const message = (next ?? messages)[index] as T;
      const content = [{ type: "text", text: settings.placeholder }];
      const cleared = { ...message, content } as T;
      totalChars += messageChars(cleared) - before;
      const id = toolCallIdOf(message);
      if (id !== undefined) record.trimmed.set(id, { mode: "hard", content });
      replace(index, cleared);
      pruned = true;
    }
  }
  if (pruned) onPruned?.();
  return unchanged();
}

/** The newest assistant message's timestamp: when the provider last answered (and wrote its cache). */
export function lastProviderAnswerAt(messages: readonly ContextMessage[]): number | null {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role === "assistant" && typeof message.timestamp === "number") return message.timestamp;
  }
  return null;
}
