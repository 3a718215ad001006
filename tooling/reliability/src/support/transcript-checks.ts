// Checks on stored transcripts shared by the crash trials and the fault matrix: the tree is well formed, and
// which user messages it holds. Owns reading entries as pi writes them (`type: "message"` with a `message`
// of pi's shape); the store's own rules are session-store's.
import type { TranscriptEntry } from "@agent-kernel/session-store";

/** Problems of a transcript's tree: a parent that is not an earlier entry, a duplicate id. Empty when valid. */
export function treeProblems(entries: readonly TranscriptEntry[]): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const entry of entries) {
    if (seen.has(entry.id)) problems.push(`entry ${entry.id} appears twice`);
    if (entry.parentId !== null && !seen.has(entry.parentId)) {
      problems.push(`entry ${entry.id} has parent ${entry.parentId}, which is not an earlier entry`);
    }
    seen.add(entry.id);
  }
  return problems;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) =>
      typeof part === "object" && part !== null && "text" in part && typeof part.text === "string"
        ? part.text
        : "",
    )
    .join("");
}

/** The text of every user message in the transcript, in append order. */
export function userMessages(entries: readonly TranscriptEntry[]): string[] {
  const texts: string[] = [];
  for (const entry of entries) {
    const message = (entry as { message?: { role?: unknown; content?: unknown } }).message;
    if (entry.type === "message" && message?.role === "user") texts.push(textOf(message.content));
  }
  return texts;
}

/** How many user messages contain `prompt`. */
export function countUserMessages(entries: readonly TranscriptEntry[], prompt: string): number {
  return userMessages(entries).filter((text) => text.includes(prompt)).length;
}
