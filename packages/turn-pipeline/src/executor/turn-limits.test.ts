import { setTimeout as delay } from "node:timers/promises";
import { parseConfig } from "@agent-kernel/config";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import {
  type LimitBreach,
  resolveTurnLimits,
  TurnLimitError,
  TurnLimits,
  type TurnLimitValues,
} from "./turn-limits.ts";

const VALUES: TurnLimitValues = {
  maxToolCalls: 3,
  maxModelCalls: 2,
  streamIdleMs: 10_000,
  maxStreamMs: 10_000,
  maxReplyChars: 10,
};

function limits(values: Partial<TurnLimitValues> = {}) {
  const seen = { stalls: 0, breaches: [] as LimitBreach[] };
  const turnLimits = new TurnLimits(
    { ...VALUES, ...values },
    { onStall: () => (seen.stalls += 1), onBreach: (breach) => seen.breaches.push(breach) },
  );
  return { limits: turnLimits, seen };
}

function assistant(content: AssistantMessage["content"]): AssistantMessage {
  return {
    role: "assistant",
    content,
    api: "openai-completions",
    provider: "p",
    model: "m",
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "aborted",
    errorMessage: "Request was aborted",
    timestamp: 1,
  };
}

describe("resolveTurnLimits", () => {
  it("reads the defaults, an agent's own values and the kernel's stall override", () => {
    const config = parseConfig({
      agents: {
        defaults: { replyMaxChars: 5_000 },
        list: [
          { id: "main" },
          { id: "tight", maxModelCallsPerTurn: 7, streamMaxSeconds: 30, tools: { maxCallsPerTurn: 9 } },
        ],
      },
      tools: { maxCallsPerTurn: 50 },
    });
    expect(resolveTurnLimits(parseConfig({}), "main")).toEqual({
      maxToolCalls: 320,
      maxModelCalls: 160,
      streamIdleMs: 120_000,
      maxStreamMs: 1_800_000,
      maxReplyChars: 200_000,
    });
    expect(resolveTurnLimits(config, "main")).toMatchObject({ maxToolCalls: 50, maxReplyChars: 5_000 });
    expect(resolveTurnLimits(config, "tight", 300)).toEqual({
      maxToolCalls: 9,
      maxModelCalls: 7,
      streamIdleMs: 300,
      maxStreamMs: 30_000,
      maxReplyChars: 5_000,
    });
  });
});

describe("TurnLimits", () => {
  it("refuses the tool call past the limit and ends the loop after that batch", () => {
    const { limits: turn, seen } = limits();
    expect([turn.beforeToolCall(), turn.beforeToolCall(), turn.beforeToolCall()]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(turn.endAfterTurn(3)).toBe(false);
    expect(turn.beforeToolCall()).toMatch(/^Not run: this turn reached its limit of 3 tool calls/);
    expect(seen.breaches).toEqual([]);
    expect(turn.endAfterTurn(1)).toBe(true);
    expect(seen.breaches.map((breach) => breach.reason)).toEqual(["tool_call_limit"]);
    expect(turn.breach).toMatchObject({
      inReply: false,
      notice: "⚠️ Stopped: this reply reached its limit of 3 tool calls.",
    });
    expect(turn.toolCalls).toBe(3);
  });

  it("counts model calls: the loop ends after the last one's tools, a request past it is refused", () => {
    const { limits: turn, seen } = limits();
    turn.beforeRequest();
    expect(turn.endAfterTurn(1)).toBe(false);
    turn.beforeRequest();
    // a response without tool calls ends by itself: not a breach
    expect(turn.endAfterTurn(0)).toBe(false);
    expect(turn.breach).toBeUndefined();
    expect(turn.endAfterTurn(2)).toBe(true);
    expect(turn.breach?.reason).toBe("model_call_limit");
    expect(seen.breaches).toHaveLength(1);
    expect(() => turn.beforeRequest()).toThrow(TurnLimitError);
    expect(turn.modelCalls).toBe(2);
    expect(turn.mayStartAttempt()).toBe(false);
  });

  it("keeps a response within its budget, never half a surrogate pair, and rewrites the cut message", () => {
    const { limits: turn, seen } = limits({ maxReplyChars: 11 });
    turn.activity(true);
    expect(turn.keep("think", "thinking")).toBe("think");
    expect(turn.keep("abcd", "text")).toBe("abcd");
    expect(turn.keep("x😀yz", "text")).toBe("x");
    expect(turn.cutting).toBe(true);
    expect(turn.keep("more", "text")).toBe("");
    expect(seen.breaches.map((breach) => breach.reason)).toEqual(["reply_size_limit"]);
    const message = assistant([
      { type: "thinking", thinking: "think" },
      { type: "text", text: "abcdx😀yz and much more" },
      { type: "toolCall", id: "c1", name: "read", arguments: {} },
    ]);
    const tail = turn.finishCutResponse(message);
    expect(tail).toBe("\n\n⚠️ Cut: the reply reached its limit of 11 characters.");
    expect(message.content).toEqual([{ type: "text", text: `abcdx${tail}` }]);
    expect(message.stopReason).toBe("length");
    expect(message.errorMessage).toBeUndefined();
    // the next model call has a budget of its own
    turn.activity(false);
    turn.activity(true);
    expect(turn.cutting).toBe(false);
    expect(turn.finishCutResponse(assistant([]))).toBeUndefined();
    turn.dispose();
  });

  it("cuts a response that streams past its time however steadily it sends; an idle one stalls", async () => {
    const steady = limits({ maxStreamMs: 60, streamIdleMs: 40 });
    const until = performance.now() + 200;
    while (performance.now() < until && !steady.limits.cutting) {
      steady.limits.activity(true);
      await delay(5);
    }
    expect(steady.limits.breach?.reason).toBe("stream_time_limit");
    expect(steady.seen.stalls).toBe(0);
    expect(steady.seen.breaches).toHaveLength(1);
    const message = assistant([]);
    expect(steady.limits.finishCutResponse(message)).toMatch(/^⚠️ Cut: the model kept streaming past/);
    steady.limits.dispose();

    const idle = limits({ maxStreamMs: 10_000, streamIdleMs: 30 });
    idle.limits.activity(true);
    await delay(80);
    expect(idle.seen.stalls).toBe(1);
    expect(idle.limits.breach).toBeUndefined();
    idle.limits.dispose();
  });

  it("keeps the turn's timeout on the watchdog's one timer: it fires once, after a stall too, and not after dispose", async () => {
    const seen = { stalls: 0, timeouts: 0 };
    const turn = new TurnLimits(
      { ...VALUES, streamIdleMs: 30, maxStreamMs: 10_000 },
      { onStall: () => (seen.stalls += 1), onBreach: () => {} },
      { ms: 120, onTimeout: () => (seen.timeouts += 1) },
    );
    // a model call that goes quiet: the stall comes first, the turn's timeout still follows
    turn.activity(true);
    await delay(70);
    expect(seen).toEqual({ stalls: 1, timeouts: 0 });
    const until = performance.now() + 2_000;
    while (performance.now() < until && seen.timeouts === 0) await delay(10);
    expect(seen).toEqual({ stalls: 1, timeouts: 1 });
    await delay(50);
    expect(seen.timeouts).toBe(1);
    turn.dispose();

    const disposed = { timeouts: 0 };
    const ended = new TurnLimits(
      VALUES,
      { onStall: () => {}, onBreach: () => {} },
      { ms: 30, onTimeout: () => (disposed.timeouts += 1) },
    );
    ended.dispose();
    await delay(80);
    expect(disposed.timeouts).toBe(0);
  });

  it("holds a turn timeout longer than Node's timers can (≈ 24.8 days) without overflowing the timer", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on("warning", onWarning);
    const seen = { timeouts: 0 };
    const month = 30 * 24 * 60 * 60 * 1000;
    const turn = new TurnLimits(
      { ...VALUES, streamIdleMs: month, maxStreamMs: month },
      { onStall: () => {}, onBreach: () => {} },
      { ms: month, onTimeout: () => (seen.timeouts += 1) },
    );
    turn.activity(true);
    await delay(50);
    turn.dispose();
    process.off("warning", onWarning);
    // An overflowing delay becomes 1 ms: Node warns, and the watchdog would wake every millisecond for a month.
    expect(warnings).not.toContain("TimeoutOverflowWarning");
    expect(seen.timeouts).toBe(0);
  });
});
