// The compaction safeguard's helpers against OpenClaw 2026.9.6's own answers on the same inputs (recorded
// by tooling/parity/record/compaction-safeguard.mjs): the tool-failure section, the bounded file lists, the
// adaptive chunk ratio and the history-share plan; then the summary it builds, with a counting summarizer.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  buildHistoryPrunePlan,
  buildSafeguardSummary,
  collectToolFailures,
  computeAdaptiveChunkRatio,
  formatFileOperations,
  formatToolFailuresSection,
  resolveCompactionSafeguardSettings,
} from "./compaction-safeguard.ts";

type Message = { role: string; [key: string]: unknown };
interface Fixture {
  readonly failures: readonly { name: string; messages: Message[]; section: string }[];
  readonly files: readonly { read: string[]; modified: string[]; section: string }[];
  readonly ratios: readonly { name: string; messages: Message[]; contextWindow: number; ratio: number }[];
  readonly plans: readonly {
    name: string;
    messagesToSummarize: Message[];
    turnPrefixMessages: Message[];
    tokensBefore: number;
    contextWindowTokens: number;
    maxHistoryShare: number;
    keptIndexes: number[];
    droppedIndexes: number[];
  }[];
}

const fixture = JSON.parse(
  readFileSync(new URL("../../fixtures/openclaw/compaction-safeguard/helpers.json", import.meta.url), "utf8"),
) as Fixture;

describe("safeguard helpers match OpenClaw 2026.9.6", () => {
  it.each(fixture.failures.map((entry) => [entry.name, entry] as const))(
    "tool failures: %s",
    (_name, entry) => {
      expect(formatToolFailuresSection(collectToolFailures(entry.messages))).toBe(entry.section);
    },
  );

  it("file lists, bounded", () => {
    for (const entry of fixture.files)
      expect(formatFileOperations(entry.read, entry.modified)).toBe(entry.section);
  });

  it.each(fixture.ratios.map((entry) => [entry.name, entry] as const))(
    "adaptive chunk ratio: %s",
    (_name, entry) => {
      expect(computeAdaptiveChunkRatio(entry.messages, entry.contextWindow)).toBeCloseTo(entry.ratio, 10);
    },
  );

  it.each(fixture.plans.map((entry) => [entry.name, entry] as const))(
    "history share plan: %s",
    (_name, entry) => {
      const plan = buildHistoryPrunePlan(entry);
      expect(plan.messages.map((message) => entry.messagesToSummarize.indexOf(message))).toEqual(
        entry.keptIndexes,
      );
      expect(plan.dropped.map((message) => entry.messagesToSummarize.indexOf(message))).toEqual(
        entry.droppedIndexes,
      );
    },
  );
});

describe("buildSafeguardSummary", () => {
  const text = (value: string) => ({ type: "text", text: value });
  const user = (value: string) => ({ role: "user", content: value, timestamp: 1 });
  const answer = (value: string) => ({
    role: "assistant",
    content: [text(value)],
    stopReason: "stop",
    timestamp: 2,
  });

  it("summarizes the dropped history first, then the rest on top of it, and appends failures and files", async () => {
    const calls: { count: number; previous: string | undefined }[] = [];
    const summarize = async (messages: Message[], previous: string | undefined) => {
      calls.push({ count: messages.length, previous });
      return `summary ${calls.length}`;
    };
    const messagesToSummarize = [
      user("u".repeat(40_000)),
      answer("a".repeat(40_000)),
      user("u".repeat(40_000)),
      answer("a".repeat(40_000)),
      {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "exec",
        content: [text("exit 1")],
        isError: true,
        timestamp: 3,
      },
    ];
    const built = await buildSafeguardSummary(
      {
        messagesToSummarize,
        turnPrefixMessages: [],
        isSplitTurn: false,
        tokensBefore: 190_000,
        fileOps: { read: new Set(["a.txt", "b.txt"]), written: new Set(["b.txt"]), edited: new Set() },
        contextWindowTokens: 100_000,
        settings: { maxHistoryShare: 0.2 },
      },
      summarize,
    );
    // The dropped part first (from nothing), then the kept part on the dropped part's summary.
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls[0]?.previous).toBeUndefined();
    expect(calls.at(-1)?.previous).toBe(`summary ${calls.length - 1}`);
    expect(built.summary).toBe(
      `summary ${calls.length}\n\n## Tool Failures\n- exec: exit 1\n\n<read-files>\na.txt\n</read-files>\n\n<modified-files>\nb.txt\n</modified-files>`,
    );
    expect(built.details).toMatchObject({ readFiles: ["a.txt"], modifiedFiles: ["b.txt"] });
  });

  it("is off unless the mode is safeguard; maxHistoryShare defaults to OpenClaw's 0.5", () => {
    expect(resolveCompactionSafeguardSettings(undefined)).toBeUndefined();
    expect(resolveCompactionSafeguardSettings({ mode: "default" })).toBeUndefined();
    expect(resolveCompactionSafeguardSettings({ mode: "safeguard" })).toEqual({ maxHistoryShare: 0.5 });
    expect(resolveCompactionSafeguardSettings({ mode: "safeguard", maxHistoryShare: 0.3 })).toEqual({
      maxHistoryShare: 0.3,
    });
  });
});
