// How many recent unseen group messages a prompt may carry, as OpenClaw
// 2026.9.6's `resolvePromptHistoryLimit` (`src/auto-reply/reply/history-limit.ts`).
// Owns: the window's default and cap. Does not own: which messages are kept
// (the history store) or the per-session turn limit (turn-pipeline's history).

/** The group-context window when nothing is configured. */
export const DEFAULT_GROUP_HISTORY_LIMIT = 50;
/** The largest group-context window a prompt gets, whatever is configured. */
export const MAX_PROMPT_HISTORY_LIMIT = 200;

/**
 * The group-context window: the configured number (or `fallback` when it is
 * not a finite number, or is the JSON-schema maximum Number.MAX_SAFE_INTEGER
 * or above), truncated to an integer and clamped to 0..200. A non-finite
 * fallback gives 0.
 */
export function resolvePromptHistoryLimit(
  configured: unknown,
  fallback: number = DEFAULT_GROUP_HISTORY_LIMIT,
): number {
  const isSchemaMaximum =
    typeof configured === "number" && Number.isInteger(configured) && configured >= Number.MAX_SAFE_INTEGER;
  const selected =
    typeof configured === "number" && Number.isFinite(configured) && !isSchemaMaximum ? configured : fallback;
  return Number.isFinite(selected)
    ? Math.min(Math.max(0, Math.trunc(selected)), MAX_PROMPT_HISTORY_LIMIT)
    : 0;
}
