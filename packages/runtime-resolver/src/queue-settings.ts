// Queue settings for messages that arrive while a session has an active run
// (OpenClaw 2026.9.6 `auto-reply/reply/queue/normalize.ts`, `settings.ts`).
// Owns: mode and drop-policy aliases, and the precedence inline → session →
// `messages.queue.byChannel` / `debounceMsByChannel` → `messages.queue` → defaults.
// Does not own: queueing or draining (the follow-up runner, session-store's queue).
import { type KernelConfig, QUEUE_DEFAULTS } from "@agent-kernel/config";

export type QueueMode = "steer" | "followup" | "collect" | "interrupt";
export type QueueDropPolicy = "old" | "new" | "summarize";

const lowerTrim = (raw: string | undefined | null) =>
  typeof raw === "string" ? raw.trim().toLowerCase() : "";

/** `steering` → steer, `followups`/`follow-ups` → followup, `coalesce` → collect, `interrupts`/`abort` → interrupt. */
export function normalizeQueueMode(raw: string | undefined | null): QueueMode | undefined {
  const cleaned = lowerTrim(raw);
  if (cleaned === "interrupt" || cleaned === "interrupts" || cleaned === "abort") return "interrupt";
  if (cleaned === "steer" || cleaned === "steering") return "steer";
  if (cleaned === "followup" || cleaned === "follow-ups" || cleaned === "followups") return "followup";
  if (cleaned === "collect" || cleaned === "coalesce") return "collect";
  return undefined;
}

/** Also reads the legacy stored values: `queue`/`queued` → steer, `steer-backlog` and friends → followup. */
export function normalizePersistedQueueMode(raw: string | undefined | null): QueueMode | undefined {
  const mode = normalizeQueueMode(raw);
  if (mode) return mode;
  const cleaned = lowerTrim(raw);
  if (cleaned === "queue" || cleaned === "queued") return "steer";
  if (cleaned === "steer+backlog" || cleaned === "steer-backlog" || cleaned === "steer_backlog")
    return "followup";
  return undefined;
}

export function normalizeQueueDropPolicy(raw: string | undefined | null): QueueDropPolicy | undefined {
  const cleaned = lowerTrim(raw);
  if (cleaned === "old" || cleaned === "oldest") return "old";
  if (cleaned === "new" || cleaned === "newest") return "new";
  if (cleaned === "summarize" || cleaned === "summary") return "summarize";
  return undefined;
}

export interface SessionQueueSettings {
  readonly queueMode?: string | undefined;
  readonly queueDebounceMs?: number | undefined;
  readonly queueCap?: number | undefined;
  readonly queueDrop?: QueueDropPolicy | undefined;
}

export interface QueueSettings {
  readonly mode: QueueMode;
  readonly debounceMs: number;
  readonly cap: number;
  readonly dropPolicy: QueueDropPolicy;
}

/** The subset of `messages.queue` read here (so raw OpenClaw-shaped configs work too). */
export type QueueConfig = Partial<
  Pick<KernelConfig["messages"]["queue"], "mode" | "byChannel" | "debounceMsByChannel" | "cap" | "drop">
> & { readonly debounceMs?: number | undefined };

/**
 * The queue settings of one session. As in OpenClaw 2026.9.6, the global
 * `messages.queue.debounceMs` is not consulted: debounce comes from inline,
 * the session, `debounceMsByChannel`, the channel plugin's default, then
 * 500 ms (see docs/parity.md; `useConfigDebounce` opts into the config value).
 */
export function resolveQueueSettings(params: {
  queue?: QueueConfig | undefined;
  channel?: string | undefined;
  session?: SessionQueueSettings | undefined;
  inlineMode?: QueueMode | undefined;
  inline?: { debounceMs?: number; cap?: number; dropPolicy?: QueueDropPolicy } | undefined;
  channelDefaultDebounceMs?: number | undefined;
  useConfigDebounce?: boolean | undefined;
}): QueueSettings {
  const channel = lowerTrim(params.channel) || undefined;
  const queue = params.queue;
  const byChannel = channel && queue?.byChannel ? queue.byChannel[channel] : undefined;
  const channelDebounce = channel !== undefined ? queue?.debounceMsByChannel?.[channel] : undefined;
  const mode =
    params.inlineMode ??
    normalizePersistedQueueMode(params.session?.queueMode) ??
    normalizeQueueMode(byChannel) ??
    normalizeQueueMode(queue?.mode) ??
    QUEUE_DEFAULTS.mode;
  const debounce =
    params.inline?.debounceMs ??
    params.session?.queueDebounceMs ??
    (typeof channelDebounce === "number" && Number.isFinite(channelDebounce)
      ? Math.max(0, channelDebounce)
      : undefined) ??
    params.channelDefaultDebounceMs ??
    (params.useConfigDebounce ? queue?.debounceMs : undefined) ??
    QUEUE_DEFAULTS.debounceMs;
  const cap = params.inline?.cap ?? params.session?.queueCap ?? queue?.cap ?? QUEUE_DEFAULTS.cap;
  const dropPolicy =
    params.inline?.dropPolicy ??
    params.session?.queueDrop ??
    normalizeQueueDropPolicy(queue?.drop) ??
    QUEUE_DEFAULTS.drop;
  return { mode, debounceMs: Math.max(0, debounce), cap: Math.max(1, Math.floor(cap)), dropPolicy };
}
