import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MISSING_TOOL_RESULT_TEXT, type RepairableMessage, repairTranscriptMessages } from "./repair.ts";

const user = (text: string) => ({ role: "user", content: text, timestamp: 1 });
const assistant = (text: string, stopReason = "stop") => ({
  role: "assistant",
  content: [{ type: "text", text }],
  stopReason,
  timestamp: 2,
});
const calling = (ids: string[], stopReason = "toolUse") => ({
  role: "assistant",
  content: ids.map((id) => ({ type: "toolCall", id, name: `tool_${id}`, arguments: {} })),
  stopReason,
  timestamp: 3,
});
const result = (id: string, text = `result ${id}`) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: `tool_${id}`,
  content: [{ type: "text", text }],
  isError: false,
  timestamp: 4,
});

describe("repairTranscriptMessages", () => {
  it("returns the same array and no repairs for a sound transcript", () => {
    const messages = [
      { role: "compactionSummary", summary: "s" },
      user("q"),
      calling(["a", "b"]),
      result("a"),
      result("b"),
      assistant("done"),
      user("next"),
      assistant("ok"),
    ];
    const repaired = repairTranscriptMessages(messages);
    expect(repaired.messages).toBe(messages);
    expect(repaired.repairs).toEqual([]);
  });

  it("drops orphan and duplicate tool results, saying which and why", () => {
    const messages = [
      user("q"),
      result("ghost"),
      calling(["a"]),
      result("a"),
      result("a", "again"),
      assistant("done"),
    ];
    const repaired = repairTranscriptMessages(messages);
    expect(repaired.messages).toEqual([user("q"), calling(["a"]), result("a"), assistant("done")]);
    expect(repaired.repairs).toEqual([
      {
        kind: "orphan-tool-result",
        index: 1,
        toolCallId: "ghost",
        reason: expect.stringMatching(/answers no open tool call/),
      },
      {
        kind: "duplicate-tool-result",
        index: 4,
        toolCallId: "a",
        reason: expect.stringMatching(/already has a result/),
      },
    ]);
  });

  it("inserts an error result for a tool call left without one, right after the calls it belongs to", () => {
    const messages = [user("q"), calling(["a", "b"]), result("b"), user("are you there?")];
    const repaired = repairTranscriptMessages(messages, { now: 99 });
    expect(repaired.messages).toEqual([
      user("q"),
      calling(["a", "b"]),
      result("b"),
      {
        role: "toolResult",
        toolCallId: "a",
        toolName: "tool_a",
        content: [{ type: "text", text: MISSING_TOOL_RESULT_TEXT }],
        details: { syntheticMissingToolResult: true, reason: "missing_tool_result" },
        isError: true,
        timestamp: 99,
      },
      user("are you there?"),
    ]);
    expect(repaired.repairs).toEqual([
      {
        kind: "missing-tool-result",
        index: 1,
        toolCallId: "a",
        reason: expect.stringMatching(/tool call a \(tool_a\)/),
      },
    ]);
  });

  it("leaves the calls of a failed or aborted assistant message unanswered (pi retries those)", () => {
    const messages = [user("q"), calling(["a"], "aborted"), user("retry")];
    expect(repairTranscriptMessages(messages).repairs).toEqual([]);
  });

  it("drops a message repeating the one before it, including a repeated tool call", () => {
    const messages = [
      user("q"),
      user("q"),
      calling(["a"]),
      calling(["a"]),
      result("a"),
      assistant("x"),
      assistant("x"),
    ];
    const repaired = repairTranscriptMessages(messages);
    expect(repaired.messages).toEqual([user("q"), calling(["a"]), result("a"), assistant("x")]);
    expect(repaired.repairs.map((repair) => [repair.kind, repair.index])).toEqual([
      ["duplicate-message", 1],
      ["duplicate-message", 3],
      ["duplicate-message", 6],
    ]);
  });

  it("merges two different user messages in a row into one turn", () => {
    const messages = [
      user("first"),
      { role: "user", content: [{ type: "text", text: "second" }] },
      assistant("a"),
    ];
    const repaired = repairTranscriptMessages(messages);
    expect(repaired.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second" },
        ],
      },
      assistant("a"),
    ]);
    expect(repaired.repairs).toMatchObject([{ kind: "merged-user-turns", index: 1 }]);
  });

  it("always yields a context where every tool call has exactly one result right after it, and is idempotent", () => {
    const message = fc.oneof(
      fc.constantFrom("q", "r").map((text) => user(text)),
      fc.constantFrom("x", "y").map((text) => assistant(text)),
      fc.subarray(["a", "b", "c"], { minLength: 1 }).map((ids) => calling(ids)),
      fc.constantFrom("a", "b", "c", "z").map((id) => result(id)),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 30 }), (messages: RepairableMessage[]) => {
        const { messages: repaired } = repairTranscriptMessages(messages, { now: 1 });
        for (const [index, current] of repaired.entries()) {
          if (current.role === "toolResult") {
            let back = index - 1;
            while (repaired[back]?.role === "toolResult") back--;
            const owner = repaired[back];
            expect(owner?.role).toBe("assistant");
            const ids = ((owner?.content ?? []) as { type: string; id: string }[]).filter(
              (b) => b.type === "toolCall",
            );
            expect(ids.map((b) => b.id)).toContain(current.toolCallId);
          }
          if (current.role === "assistant") {
            const calls = (current.content as { type: string; id: string }[]).filter(
              (b) => b.type === "toolCall",
            );
            const results = repaired.slice(index + 1, index + 1 + calls.length).map((m) => m.toolCallId);
            expect([...results].sort()).toEqual(calls.map((b) => b.id).sort());
          }
          if (index > 0 && (current.role === "user" || current.role === "assistant")) {
            expect(JSON.stringify(repaired[index - 1])).not.toBe(JSON.stringify(current));
          }
        }
        const again = repairTranscriptMessages(repaired, { now: 1 });
        expect(again.repairs).toEqual([]);
      }),
    );
  });
});
