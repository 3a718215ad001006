// The prompts the follow-up runner builds, in OpenClaw 2026.9.6's shapes (`src/utils/queue-helpers.ts`,
// `auto-reply/reply/queue/drain.ts`): the one-line summary of a message dropped by the cap, the overflow
// block that carries those lines, and the collect prompt that merges queued messages into one turn. Pure
// functions over text. Does not own: which messages are dropped or merged (runner.ts).

export const COLLECT_TITLE = "[Queued messages while agent was busy]";

/** OpenClaw's `truncateUtf16Safe`: at most `limit` UTF-16 units, never splitting a surrogate pair. */
function truncateUtf16Safe(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = Math.max(0, limit);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** One dropped message as one line: whitespace collapsed, at most `limit` characters (ending in `…`). */
export function queueSummaryLine(text: string, limit = 160): string {
  const cleaned = text.replace(/\s+/g, " ").trim();
  return cleaned.length <= limit
    ? cleaned
    : `${truncateUtf16Safe(cleaned, Math.max(0, limit - 1)).trimEnd()}…`;
}

/**
 * The overflow block: `[Queue overflow] Dropped N message(s) due to cap.` and a `Summary:` list of the
 * dropped messages' lines; undefined when nothing was dropped.
 */
export function overflowSummaryPrompt(state: {
  readonly droppedCount: number;
  readonly summaryLines: readonly string[];
}): string | undefined {
  if (state.droppedCount <= 0) return undefined;
  const lines = [
    `[Queue overflow] Dropped ${state.droppedCount} message${state.droppedCount === 1 ? "" : "s"} due to cap.`,
  ];
  if (state.summaryLines.length > 0) {
    lines.push("Summary:");
    for (const line of state.summaryLines) lines.push(`- ${line}`);
  }
  return lines.join("\n");
}

export interface CollectItem {
  readonly text: string;
  /** Shown as `(from <sender>)` after the item's number. */
  readonly sender?: string | undefined;
}

/** One queued message of a collect prompt: `---\nQueued #n (from sender)\n<text>`, trimmed. */
export function collectItemPrompt(item: CollectItem, index: number): string {
  const from = item.sender ? ` (from ${item.sender})` : "";
  return `---\nQueued #${index + 1}${from}\n${item.text}`.trim();
}

/** The title, the overflow block if any, then every queued message, separated by blank lines. */
export function collectPrompt(items: readonly CollectItem[], summary?: string): string {
  const blocks = [COLLECT_TITLE];
  if (summary) blocks.push(summary);
  items.forEach((item, index) => {
    blocks.push(collectItemPrompt(item, index));
  });
  return blocks.join("\n\n");
}

/** A single follow-up turn's prompt: the overflow block (if any) prepended to the message. */
export function followupPrompt(text: string, summary?: string): string {
  return summary ? `${summary}\n\n${text}` : text;
}
