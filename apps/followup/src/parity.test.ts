// Our queue helpers against vectors recorded from OpenClaw 2026.9.6 (tooling/parity/record/followup.mjs):
// the cap's drop decision and summary lines, the overflow block, and the collect prompt.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  collectPrompt,
  type DropPolicy,
  droppedSummaryLine,
  keptSummaryLines,
  overflowSummaryPrompt,
  planOverflow,
} from "./index.ts";

interface Fixtures {
  readonly drop: {
    input: {
      cap: number;
      dropPolicy: DropPolicy;
      items: string[];
      droppedCount?: number;
      summaryLines?: string[];
    };
    output: { accepted: boolean; remaining: string[]; droppedCount: number; summaryLines: string[] };
  }[];
  readonly summary: {
    input: { droppedCount: number; summaryLines: string[] };
    output: string | null;
  }[];
  readonly collect: {
    input: { items: { text: string; sender?: string }[]; summary?: string };
    output: string;
  }[];
}

const fixtures = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "fixtures", "openclaw", "queue.json"), "utf8"),
) as Fixtures;

describe("parity with OpenClaw 2026.9.6 queue helpers", () => {
  it.each(fixtures.drop)(
    "drop policy $input.dropPolicy, cap $input.cap, $input.items.length queued",
    ({ input, output }) => {
      const plan = planOverflow(input.items.length, input.cap, input.dropPolicy);
      const dropped = input.items.slice(0, plan.dropOldest);
      const lines =
        input.dropPolicy === "summarize"
          ? keptSummaryLines([...(input.summaryLines ?? []), ...dropped.map(droppedSummaryLine)], input.cap)
          : [...(input.summaryLines ?? [])];
      expect({
        accepted: plan.accept,
        remaining: input.items.slice(plan.dropOldest),
        droppedCount: (input.droppedCount ?? 0) + (input.dropPolicy === "summarize" ? dropped.length : 0),
        summaryLines: lines,
      }).toEqual(output);
    },
  );

  it.each(fixtures.summary)("overflow block for $input.droppedCount dropped", ({ input, output }) => {
    expect(overflowSummaryPrompt(input) ?? null).toBe(output);
  });

  it.each(fixtures.collect)("collect prompt of $input.items.length messages", ({ input, output }) => {
    expect(collectPrompt(input.items, input.summary)).toBe(output);
  });
});
