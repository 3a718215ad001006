// The cap and each drop policy, through the real kernel and fake-llm over HTTP: three messages queued for a
// session with `cap: 2`, then drained.
import { reply } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { createHarness, lastUserText, recordEvents, sessionView } from "../test/harness.ts";
import { collectPrompt, overflowSummaryPrompt, queueSummaryLine } from "./index.ts";

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void, queue: Record<string, unknown>) {
  const h = await createHarness(queue);
  onTestFinished(() => h.close());
  return h;
}

const LONG = `please   look at\nthe ${"very ".repeat(40)}long report`;

describe.concurrent("cap and drop policy", () => {
  it("summarize (default): the oldest beyond the cap is dropped, its one-line summary prepended to the next turn", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "followup", cap: 2, debounceMs: 0 });
    const runner = await h.runner();
    const events = recordEvents(runner);
    expect(runner.config.messages.queue.drop).toBe("summarize");
    await runner.accept({ id: "a", text: LONG });
    await runner.accept({ id: "b", text: "message b" });
    const third = await runner.accept({ id: "c", text: "message c" });
    expect(third).toMatchObject({ status: "queued", dropped: ["a"] });
    h.llm.enqueue(reply("rb"), reply("rc"));
    expect(await runner.drain()).toEqual({ turns: 2, items: 3 });

    const summary = overflowSummaryPrompt({ droppedCount: 1, summaryLines: [queueSummaryLine(LONG)] });
    const line = queueSummaryLine(LONG);
    // Whitespace collapsed, cut to 160 characters with the ellipsis (OpenClaw's `buildQueueSummaryLine`).
    expect(line.length).toBeLessThanOrEqual(160);
    expect(line).toMatch(/^please look at the very very .*very…$/);
    expect(summary).toBe(`[Queue overflow] Dropped 1 message due to cap.\nSummary:\n- ${line}`);
    expect(h.llm.requests.map(lastUserText)).toEqual([`${summary}\n\nmessage b`, "message c"]);
    expect(events.filter((event) => event.type === "dropped")).toMatchObject([
      { itemId: "a", reason: "cap-summarize" },
    ]);
    const items = await runner.list();
    expect(items.map((item) => [item.itemId, item.status])).toEqual([
      ["a", "failed"],
      ["b", "done"],
      ["a#summary", "done"],
      ["c", "done"],
    ]);
  });

  it("summarize in collect mode: the overflow block precedes the collect prompt, keeping at most `cap` lines", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "collect", cap: 1, debounceMs: 0 });
    const runner = await h.runner();
    await runner.accept({ text: "one" });
    await runner.accept({ text: "two" });
    await runner.accept({ text: "three" });
    h.llm.enqueue(reply("ok"));
    expect(await runner.drain()).toEqual({ turns: 1, items: 3 });
    const summary = overflowSummaryPrompt({ droppedCount: 2, summaryLines: ["two"] });
    expect(lastUserText(h.llm.requests[0])).toBe(`${summary}\n\n${collectPrompt([{ text: "three" }])}`);
    expect(lastUserText(h.llm.requests[0])).toBe(
      "[Queue overflow] Dropped 2 messages due to cap.\nSummary:\n- two\n\n[Queued messages while agent was busy]\n\n---\nQueued #1\nthree",
    );
  });

  it("old: the oldest beyond the cap is dropped without a trace in the prompt", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "followup", cap: 2, drop: "old", debounceMs: 0 });
    const runner = await h.runner();
    const events = recordEvents(runner);
    await runner.accept({ id: "a", text: "message a" });
    await runner.accept({ id: "b", text: "message b" });
    expect(await runner.accept({ id: "c", text: "message c" })).toMatchObject({ dropped: ["a"] });
    h.llm.enqueue(reply("rb"), reply("rc"));
    await runner.drain();
    expect(h.llm.requests.map(lastUserText)).toEqual(["message b", "message c"]);
    expect(events.filter((event) => event.type === "dropped")).toMatchObject([
      { itemId: "a", reason: "cap-old" },
    ]);
    const view = await sessionView(runner.store, h.config, "main");
    expect(view.userMessages).toEqual(["message b", "message c"]);
  });

  it("new: the newest message is refused when the queue is full; nothing is stored for it", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "followup", cap: 2, drop: "new", debounceMs: 0 });
    const runner = await h.runner();
    const events = recordEvents(runner);
    await runner.accept({ id: "a", text: "message a" });
    await runner.accept({ id: "b", text: "message b" });
    expect(await runner.accept({ id: "c", text: "message c" })).toMatchObject({
      status: "refused",
      dropped: [],
    });
    expect(events).toMatchObject([{ type: "dropped", itemId: "c", reason: "cap-new" }]);
    h.llm.enqueue(reply("ra"), reply("rb"));
    await runner.drain();
    expect(h.llm.requests.map(lastUserText)).toEqual(["message a", "message b"]);
    expect((await runner.list()).map((item) => item.itemId)).toEqual(["a", "b"]);
  });

  it("accepting the same id twice stores one item and runs one turn; bad input is refused with a clear error", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "followup", debounceMs: 0 });
    const runner = await h.runner();
    expect((await runner.accept({ id: "same", text: "hello" })).status).toBe("queued");
    expect((await runner.accept({ id: "same", text: "hello" })).status).toBe("duplicate");
    await expect(runner.accept({ text: "  " })).rejects.toThrow(/^text: expected the message text/);
    await expect(runner.accept({ text: "x", queueMode: "queued" as unknown as "steer" })).rejects.toThrow(
      /queueMode: expected one of steer, followup, collect, interrupt, got "queued"/,
    );
    h.llm.enqueue(reply("hi"));
    expect(await runner.drain()).toEqual({ turns: 1, items: 1 });
    expect(await runner.drain()).toEqual({ turns: 0, items: 0 });
    expect(h.llm.requests).toHaveLength(1);
  });
});
