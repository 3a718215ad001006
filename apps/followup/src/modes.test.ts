// Every queue mode through the real kernel, real SQLite, real pi and real HTTP to tooling/fake-llm: the
// session is made busy by the runner's own first turn, whose model call (a fake-llm step function) accepts
// the next messages while it is in flight.
import { reply, toolCall } from "@agent-kernel/fake-llm";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { createHarness, lastUserText, recordEvents, sessionView, userTexts } from "../test/harness.ts";
import { type AcceptResult, collectPrompt, ManualClock } from "./index.ts";

const SESSION = "agent:main:main";

async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void, queue: Record<string, unknown>) {
  const h = await createHarness(queue);
  onTestFinished(() => h.close());
  return h;
}

function deliveredTexts(events: ReturnType<typeof recordEvents>): string[] {
  return events.flatMap((event) =>
    event.type === "delivered" ? [event.payloads.map((payload) => payload.text ?? "").join("")] : [],
  );
}

describe.concurrent("queue modes", () => {
  it("followup: messages that arrive during a turn run afterwards as one turn each, in order", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "followup", debounceMs: 0 });
    const runner = await h.runner();
    const events = recordEvents(runner);
    const accepted: AcceptResult[] = [];
    h.llm.enqueue(
      async () => {
        accepted.push(await runner.accept({ id: "m2", text: "second message" }));
        accepted.push(await runner.accept({ id: "m3", text: "third message" }));
        return reply("answer one");
      },
      reply("answer two"),
      reply("answer three"),
    );
    await runner.accept({ id: "m1", text: "first message" });
    await runner.start();
    await runner.whenIdle();

    expect(accepted.map((result) => [result.status, result.busy, result.settings.mode])).toEqual([
      ["queued", true, "followup"],
      ["queued", true, "followup"],
    ]);
    expect(h.llm.requests.map(lastUserText)).toEqual(["first message", "second message", "third message"]);
    expect(deliveredTexts(events)).toEqual(["answer one", "answer two", "answer three"]);
    const view = await sessionView(runner.store, h.config, SESSION);
    expect(view.userMessages).toEqual(["first message", "second message", "third message"]);
    expect(view.runs.map((run) => [run.entryPoint, run.status])).toEqual([
      ["followup", "succeeded"],
      ["followup", "succeeded"],
      ["followup", "succeeded"],
    ]);
    expect((await runner.list()).map((item) => [item.itemId, item.status])).toEqual([
      ["m1", "done"],
      ["m2", "done"],
      ["m3", "done"],
    ]);
  });

  it("collect: after the quiet window (injected clock), the queued messages become one turn in OpenClaw's collect shape", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "collect", debounceMs: 500 });
    const clock = new ManualClock(1_000_000);
    const runner = await h.runner({ clock });
    h.llm.enqueue(async () => {
      await runner.accept({ text: "what about tests?", sender: "alice" });
      clock.advance(200);
      await runner.accept({ text: "and the docs", messageContext: { senderId: "bob" } });
      await runner.accept({ text: "thanks" });
      return reply("first answer");
    }, reply("merged answer"));
    await runner.accept({ text: "review the PR" });
    await runner.start();
    // The first turn ran; the drain now waits for 500 ms of quiet since the last queued message.
    await clock.whenTimerSet();
    clock.advance(499);
    await clock.whenTimerSet();
    expect(h.llm.requests).toHaveLength(1);
    clock.advance(1);
    await runner.whenIdle();

    expect(h.llm.requests).toHaveLength(2);
    const expected = collectPrompt([
      { text: "what about tests?", sender: "alice" },
      { text: "and the docs", sender: "bob" },
      { text: "thanks" },
    ]);
    expect(expected).toBe(
      "[Queued messages while agent was busy]\n\n---\nQueued #1 (from alice)\nwhat about tests?\n\n---\nQueued #2 (from bob)\nand the docs\n\n---\nQueued #3\nthanks",
    );
    expect(lastUserText(h.llm.requests[1])).toBe(expected);
    const view = await sessionView(runner.store, h.config, SESSION);
    expect(view.runs).toHaveLength(2);
    expect((await runner.list({ status: "done" })).length).toBe(4);
  });

  it("collect: while queued messages span routes (channel / target / thread) they run one at a time, then merge", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "collect", debounceMs: 0 });
    const runner = await h.runner();
    const slack = { channel: "slack", to: "C1" };
    await runner.accept({ text: "a1", messageContext: slack });
    await runner.accept({ text: "b1", messageContext: { channel: "telegram", to: "42" } });
    await runner.accept({ text: "a2", messageContext: slack });
    await runner.accept({ text: "a3", messageContext: slack });
    h.llm.enqueue(reply("r1"), reply("r2"), reply("r3"));
    const report = await runner.drain();
    expect(report).toEqual({ turns: 3, items: 4 });
    // OpenClaw's cross-channel rule: individual drains until the rest share one route.
    expect(h.llm.requests.map(lastUserText)).toEqual([
      "a1",
      "b1",
      collectPrompt([{ text: "a2" }, { text: "a3" }]),
    ]);
  });

  it("steer: a message for a busy session reaches the running turn's next model call, with no turn of its own", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "steer" });
    const runner = await h.runner();
    const events = recordEvents(runner);
    let steered: AcceptResult | undefined;
    h.llm.enqueue(async () => {
      steered = await runner.accept({ id: "s2", text: "also check the license" });
      return toolCall("ls", { path: "." });
    }, reply("listed, and the license is MIT"));
    await runner.accept({ id: "s1", text: "list the files" });
    await runner.start();
    await runner.whenIdle();

    expect(steered?.busy).toBe(true);
    expect(await steered?.steering).toBe(true);
    expect(h.llm.requests).toHaveLength(2);
    expect(userTexts(h.llm.requests[1])).toEqual(["list the files", "also check the license"]);
    const view = await sessionView(runner.store, h.config, SESSION);
    expect(view.runs).toHaveLength(1);
    expect(view.userMessages).toEqual(["list the files", "also check the license"]);
    expect(events.map((event) => event.type)).toEqual(["steered", "delivered"]);
    expect((await runner.list()).map((item) => item.status)).toEqual(["done", "done"]);
  });

  it("steer: when the running turn ends before taking the message, it runs as a follow-up turn", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "steer", debounceMs: 0 });
    const runner = await h.runner();
    let steered: AcceptResult | undefined;
    h.llm.enqueue(async () => {
      steered = await runner.accept({ id: "late", text: "too late to steer" });
      // The turn is aborted before pi reaches a point where it takes steering.
      runner.kernel.abortSession({ sessionKey: SESSION });
      return { type: "stall", text: "partial" };
    }, reply("answered as a follow-up"));
    await runner.accept({ id: "first", text: "start" });
    await runner.start();
    await runner.whenIdle();

    expect(await steered?.steering).toBe(false);
    expect(h.llm.requests.map(lastUserText)).toEqual(["start", "too late to steer"]);
    const view = await sessionView(runner.store, h.config, SESSION);
    expect(view.runs.map((run) => run.status).sort()).toEqual(["aborted", "succeeded"]);
    expect((await runner.list()).map((item) => [item.itemId, item.status])).toEqual([
      ["first", "done"],
      ["late", "done"],
    ]);
  });

  it("interrupt: aborts the running turn, supersedes older queued messages and runs the newest", async ({
    onTestFinished,
  }) => {
    const h = await harness(onTestFinished, { mode: "interrupt", debounceMs: 0 });
    const runner = await h.runner();
    const events = recordEvents(runner);
    let interrupting: AcceptResult | undefined;
    h.llm.enqueue(async () => {
      // Queued behind the turn (inline followup), then superseded by the interrupting message.
      await runner.accept({ id: "queued", text: "older queued message", queueMode: "followup" });
      interrupting = await runner.accept({ id: "newest", text: "stop, do this instead" });
      return { type: "stall", text: "working" };
    }, reply("doing it instead"));
    await runner.accept({ id: "running", text: "long task" });
    await runner.start();
    await runner.whenIdle();

    expect(interrupting?.dropped).toEqual(["queued"]);
    expect(h.llm.requests.map(lastUserText)).toEqual(["long task", "stop, do this instead"]);
    const delivered = events.flatMap((event) => (event.type === "delivered" ? [event.status] : []));
    expect(delivered).toEqual(["aborted", "ok"]);
    expect(events.filter((event) => event.type === "dropped")).toMatchObject([
      { itemId: "queued", reason: "interrupt" },
    ]);
    const items = await runner.list();
    expect(items.map((item) => [item.itemId, item.status])).toEqual([
      ["running", "done"],
      ["queued", "failed"],
      ["newest", "done"],
    ]);
    expect(items[1]?.lastError).toMatch(/superseded/);
  });
});
