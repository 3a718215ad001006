import { fauxAssistantMessage, fauxProvider, fauxText, fauxThinking } from "@earendil-works/pi-ai";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, fauxConfig, type Harness } from "../../test/executor/harness.ts";
import { executeTurn } from "./execute-turn.ts";
import { toStoredRunEvents } from "./run-event-storage.ts";
import type { AgentEventPayload, AgentEventStream } from "./types.ts";

function event(seq: number, stream: AgentEventStream, data: Record<string, unknown>): AgentEventPayload {
  return { runId: "r", seq, ts: 1000 + seq, stream, data };
}

describe("toStoredRunEvents", () => {
  const turn: AgentEventPayload[] = [
    event(1, "lifecycle", { phase: "start" }),
    event(2, "assistant", { type: "message_start" }),
    event(3, "assistant", { type: "thinking_delta", delta: "Let me " }),
    event(4, "assistant", { type: "thinking_delta", delta: "think." }),
    event(5, "assistant", { type: "text_delta", delta: "Hel" }),
    event(6, "assistant", { type: "text_delta", delta: "lo" }),
    event(7, "assistant", { type: "tool_call", toolCallId: "c1", name: "read" }),
    event(8, "assistant", { type: "text_delta", delta: "!" }),
    event(9, "assistant", { type: "message_end", stopReason: "stop", text: "Hello!" }),
    event(10, "tool", { phase: "start", toolCallId: "c1" }),
    event(11, "lifecycle", { phase: "end", status: "ok" }),
  ];

  it("stores every event as it is by default", () => {
    expect(toStoredRunEvents(turn, "every-event")).toEqual(
      turn.map(({ seq, ts, stream, data }) => ({ seq, ts, stream, data })),
    );
  });

  it("coalesces each streamed block into one row with its whole text, keeping every other event", () => {
    expect(toStoredRunEvents(turn, "coalesce-deltas")).toEqual([
      { seq: 1, ts: 1001, stream: "lifecycle", data: { phase: "start" } },
      { seq: 2, ts: 1002, stream: "assistant", data: { type: "message_start" } },
      { seq: 3, ts: 1004, stream: "assistant", data: { type: "thinking", text: "Let me think.", deltas: 2 } },
      { seq: 5, ts: 1006, stream: "assistant", data: { type: "text", text: "Hello", deltas: 2 } },
      { seq: 7, ts: 1007, stream: "assistant", data: { type: "tool_call", toolCallId: "c1", name: "read" } },
      { seq: 8, ts: 1008, stream: "assistant", data: { type: "text", text: "!", deltas: 1 } },
      {
        seq: 9,
        ts: 1009,
        stream: "assistant",
        data: { type: "message_end", stopReason: "stop", text: "Hello!" },
      },
      { seq: 10, ts: 1010, stream: "tool", data: { phase: "start", toolCallId: "c1" } },
      { seq: 11, ts: 1011, stream: "lifecycle", data: { phase: "end", status: "ok" } },
    ]);
  });

  it("loses no text and no non-delta event, and keeps seqs increasing, for any stream", () => {
    const kinds = fc.constantFrom("text_delta", "thinking_delta", "tool", "message_end");
    fc.assert(
      fc.property(fc.array(fc.tuple(kinds, fc.string({ maxLength: 4 })), { maxLength: 40 }), (steps) => {
        const events = steps.map(([kind, delta], index) =>
          kind === "tool"
            ? event(index + 1, "tool", { phase: "update", text: delta })
            : kind === "message_end"
              ? event(index + 1, "assistant", { type: "message_end", text: delta })
              : event(index + 1, "assistant", { type: kind, delta }),
        );
        const stored = toStoredRunEvents(events, "coalesce-deltas");
        const seqs = stored.map((row) => row.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        const textOf = (type: string, rows: readonly { data: unknown }[], field: "delta" | "text") =>
          rows
            .map((row) => row.data as Record<string, unknown>)
            .filter((data) => data.type === type)
            .map((data) => data[field])
            .join("");
        expect(textOf("text", stored, "text")).toBe(textOf("text_delta", events, "delta"));
        expect(textOf("thinking", stored, "text")).toBe(textOf("thinking_delta", events, "delta"));
        const others = <Row extends { readonly data: unknown }>(rows: readonly Row[]): Row[] =>
          rows.filter(
            (row) =>
              !["text", "thinking", "text_delta", "thinking_delta"].includes(
                String((row.data as { type?: unknown }).type),
              ),
          );
        expect(others(stored)).toEqual(
          others(events).map(({ seq, ts, stream, data }) => ({ seq, ts, stream, data })),
        );
      }),
    );
  });
});

describe("executeTurn with coalesce-deltas storage", () => {
  const faux = fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1", reasoning: true, input: ["text"], contextWindow: 200_000, maxTokens: 8192 }],
    tokenSize: { min: 1, max: 1 },
  });
  let harness: Harness;
  beforeAll(async () => {
    harness = await createHarness({ config: fauxConfig(), nativeProviders: [faux.provider] });
  });
  afterAll(async () => {
    await harness.close();
  });

  it("stores one row per streamed block while the caller still gets every delta", async () => {
    const context = {
      ...(await harness.context("agent:main:coalesce")),
      runEventStorage: "coalesce-deltas" as const,
    };
    faux.setResponses([
      fauxAssistantMessage([fauxThinking("First I think it over."), fauxText("The answer is forty-two.")]),
    ]);
    const result = await executeTurn(context, { prompt: "what is it?", timeoutMs: 0, entryPoint: "agent" });
    expect(result.status).toBe("ok");
    const deltas = result.events.filter(
      (e) => e.data.type === "text_delta" || e.data.type === "thinking_delta",
    );
    expect(deltas.length).toBeGreaterThan(4);

    const stored = await harness.store.runs.events(result.runId);
    expect(stored).toHaveLength(result.events.length - deltas.length + 2);
    const blocks = stored
      .filter((e) => e.stream === "assistant")
      .map((e) => e.data as Record<string, unknown>);
    expect(blocks.filter((data) => data.type === "thinking").map((data) => data.text)).toEqual([
      "First I think it over.",
    ]);
    expect(blocks.filter((data) => data.type === "text").map((data) => data.text)).toEqual([
      "The answer is forty-two.",
    ]);
    expect(blocks.find((data) => data.type === "message_end")).toMatchObject({
      text: "The answer is forty-two.",
    });
    expect(stored.at(-1)?.data).toMatchObject({ phase: "end", status: "ok" });
    expect(await harness.store.runs.get(result.runId)).toMatchObject({ status: "succeeded" });
  });
});
