// The cap's decision (OpenClaw 2026.9.6 `applyQueueDropPolicy`), as a pure function: with `pending` messages
// queued (claimed ones, already being run, do not count) and one more arriving, is it refused (`new`) or how
// many of the oldest go (`old`, `summarize`); and how many summary lines a turn carries. Does not own the
// store writes that carry the decision out (runner.ts).
import { queueSummaryLine } from "./prompts.ts";

export type DropPolicy = "summarize" | "old" | "new";

export interface OverflowPlan {
  /** False: the arriving message is refused (`drop: new` on a full queue). */
  readonly accept: boolean;
  /** How many of the oldest pending messages are dropped to make room. */
  readonly dropOldest: number;
}

export function planOverflow(pending: number, cap: number, dropPolicy: DropPolicy): OverflowPlan {
  if (cap <= 0 || pending < cap) return { accept: true, dropOldest: 0 };
  if (dropPolicy === "new") return { accept: false, dropOldest: 0 };
  return { accept: true, dropOldest: pending - cap + 1 };
}

/** The summary lines a turn carries: the newest `cap` of them (the count still says how many were dropped). */
export function keptSummaryLines(lines: readonly string[], cap: number): string[] {
  const limit = Math.max(0, Math.floor(cap));
  return lines.length > limit ? lines.slice(lines.length - limit) : [...lines];
}

/** A dropped message's summary line (`summarize`). */
export function droppedSummaryLine(text: string): string {
  return queueSummaryLine(text);
}
