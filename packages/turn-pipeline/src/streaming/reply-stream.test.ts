import type { AssistantMessage } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { BlockCoalescer, resolveCoalesceSettings, type TimerScheduler } from "./block-coalescer.ts";
import { ReasoningStreamStripper } from "./reasoning-stream.ts";
import { stripReasoningTagsFromText } from "./reasoning-tags.ts";
import { subscribeReplyCallbacks } from "./reply-callbacks.ts";
import type { ReplyPayload } from "./reply-payload.ts";
import { ReplyStream, type ReplyStreamOptions } from "./reply-stream.ts";

const partial = {} as AssistantMessage;

function feed(stream: ReplyStream, deltas: string[], options?: { toolAfter?: number }): ReplyPayload[] {
  stream.handle({ type: "start", partial });
  deltas.forEach((delta, index) => {
    stream.handle({ type: "text_delta", contentIndex: 0, delta, partial });
    if (options?.toolAfter === index) stream.handle({ type: "toolcall_start", contentIndex: 1, partial });
  });
  stream.handle({ type: "text_end", contentIndex: 0, content: deltas.join(""), partial });
  stream.handle({ type: "done", reason: "stop", message: partial });
  return stream.finish();
}

function collect(options: ReplyStreamOptions, deltas: string[], toolAfter?: number) {
  const stream = new ReplyStream(options);
  const blocks: ReplyPayload[] = [];
  const partials: string[] = [];
  const reasoning: string[] = [];
  subscribeReplyCallbacks(stream, {
    onBlockReply: (payload) => blocks.push(payload),
    onPartialReply: ({ text }) => partials.push(text),
    onReasoningStream: ({ delta }) => reasoning.push(delta),
  });
  const payloads = feed(stream, deltas, toolAfter === undefined ? undefined : { toolAfter });
  return { payloads, blocks, partials, reasoning: reasoning.join("") };
}

/** A manual clock: idle flushing is tested by advancing time, never by sleeping. */
function manualTimers(): TimerScheduler & { advance(ms: number): void } {
  let now = 0;
  let timers: { at: number; callback: () => void }[] = [];
  return {
    schedule(callback, delayMs) {
      const timer = { at: now + delayMs, callback };
      timers.push(timer);
      return () => {
        timers = timers.filter((t) => t !== timer);
      };
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.callback();
    },
  };
}

describe("ReplyStream", () => {
  it("keeps text delivered one code unit per delta exactly, Latin-1 or not (surrogate halves included)", () => {
    const text = "naïve café\n\n€ 5 — 😀 ok\n\nplain ascii line\n\n\ud800 lone";
    const units = Array.from({ length: text.length }, (_, index) => text.charAt(index));
    for (const inputBatchChars of [1, 3, 7, 4096]) {
      const options = {
        blockStreaming: { chunking: { minChars: 4, maxChars: 12 } },
        inputBatchChars,
      } satisfies ReplyStreamOptions;
      const perUnit = collect(options, units);
      const whole = collect(options, [text]);
      expect(perUnit.payloads).toEqual(whole.payloads);
      expect(perUnit.blocks).toEqual(whole.blocks);
      expect(perUnit.partials.at(-1)).toBe(whole.partials.at(-1));
      expect(perUnit.payloads[0]?.text).toContain("€ 5 — 😀 ok");
    }
  });

  it("hides reasoning tags, streams reasoning in stream mode and returns the final payload", () => {
    const out = collect({ reasoningMode: "stream" }, ["Hel", "lo <thi", "nk>secret plan</thi", "nk>world"]);
    expect(out.reasoning).toBe("secret plan");
    expect(out.partials.at(-1)).toBe("Hello world");
    expect(out.payloads).toEqual([{ text: "Hello world" }]);
  });

  it("does not stream reasoning when the mode is off", () => {
    expect(collect({ reasoningMode: "off" }, ["<think>x</think>y"]).reasoning).toBe("");
  });

  it("treats <reasoning> like <think> while streaming (one grammar, §16.13)", () => {
    const out = collect({ reasoningMode: "stream" }, ["A <reason", "ing>hidden</reasoning> B"]);
    expect(out.partials.join("")).not.toContain("hidden");
    expect(out.payloads[0]?.text).toBe(stripReasoningTagsFromText("A <reasoning>hidden</reasoning> B"));
  });

  it("applies reply directives and MEDIA lines split across deltas", () => {
    const out = collect({ currentMessageId: "m-7" }, [
      "[[reply_",
      "to_current]] Here you go\nMED",
      "IA: https://example.com/a.png",
    ]);
    expect(out.payloads).toEqual([
      {
        text: "Here you go",
        mediaUrls: ["https://example.com/a.png"],
        replyToId: "m-7",
        replyToCurrent: true,
      },
    ]);
    expect(out.partials.join("")).not.toContain("[[");
  });

  it("suppresses silent replies and texts the message tool already sent", () => {
    expect(collect({}, ["NO_", "REPLY"]).payloads).toEqual([]);
    expect(collect({ silentToken: "HEARTBEAT_OK" }, ["HEARTBEAT_OK"]).payloads).toEqual([]);
    const sent = ["I have booked the table for two."];
    expect(
      collect({ messagingToolSentTexts: () => sent }, ["I have booked the table for two."]).payloads,
    ).toEqual([]);
  });

  it("keeps only <final> content when enforceFinalTag is set", () => {
    const out = collect({ enforceFinalTag: true }, ["plan: step 1 <fin", "al>the answer</final> trailing"]);
    expect(out.payloads).toEqual([{ text: "the answer" }]);
  });

  it("flushes pending block text before a tool runs", () => {
    const chunking = { minChars: 50, maxChars: 200 };
    const out = collect({ blockStreaming: { chunking } }, ["Short intro.", " More after the tool."], 0);
    expect(out.blocks[0]?.text).toBe("Short intro.");
  });

  it("processes the deltas of one event-loop turn together, before the next turn, without a later event", async () => {
    const stream = new ReplyStream({
      blockStreaming: { chunking: { minChars: 5, maxChars: 40 }, breakMode: "text_end" },
    });
    const seen: string[] = [];
    stream.subscribe((event) => {
      if (event.type === "partial") seen.push(`partial:${event.text}`);
      if (event.type === "block") seen.push(`block:${event.payload.text ?? ""}`);
    });
    stream.handle({ type: "start", partial });
    for (const delta of ["First l", "ine.\n", "\nSecond", " line.\n", "\nthird"])
      stream.handle({ type: "text_delta", contentIndex: 0, delta, partial });
    // collected, not yet processed: one pass when the event loop turns
    expect(seen).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([
      // the partial text of the turn comes out once, before the turn's blocks (no later than per line), the
      // unfinished line's decided start with it; blocks wait for the line's end
      "partial:First line.\nSecond line.\nthird",
      "block:First line.",
      "block:\nSecond line.",
    ]);
    stream.handle({ type: "text_end", contentIndex: 0, content: "", partial });
    stream.handle({ type: "done", reason: "stop", message: partial });
    stream.finish();
    // the stream's end delivers the block; the partial text had shown all of it
    expect(seen.slice(3)).toEqual(["block:\nthird"]);
  });

  it("shows the decided start of a line after each event-loop turn, holding back directives, tokens and tags", async () => {
    /** Each inner list: the deltas of one event-loop turn. Returns the partial texts published. */
    async function partialsByTurn(turns: string[][]): Promise<string[]> {
      const stream = new ReplyStream({});
      const seen: string[] = [];
      stream.subscribe((event) => {
        if (event.type === "partial") seen.push(event.text);
      });
      stream.handle({ type: "start", partial });
      for (const deltas of turns) {
        for (const delta of deltas) stream.handle({ type: "text_delta", contentIndex: 0, delta, partial });
        await new Promise((resolve) => setImmediate(resolve));
      }
      stream.handle({ type: "done", reason: "stop", message: partial });
      stream.finish();
      return seen;
    }
    expect(await partialsByTurn([["The", " answer"], [" is [[reply_to"], ["_current]] 42"]])).toEqual([
      "The answer",
      "The answer is",
      // the line's end: the directive removed, the text normalised (as the line's text always was)
      "The answer is 42",
    ]);
    // the silent token, whole or typed so far, never shows
    expect(await partialsByTurn([["NO_"], ["REPLY"]])).toEqual([]);
    // a possible tag start is held back by the tag stripper, reasoning never shows
    const tagged = await partialsByTurn([["Sure <thi"], ["nk>secret plan</th"], ["ink> thing"]]);
    expect(tagged[0]).toBe("Sure");
    expect(tagged.join("\n")).not.toMatch(/secret|</);
    // a MEDIA: line is decided only at its end (where the partial text shows it whole, as it always did)
    expect(await partialsByTurn([["MEDIA: https://exa"], ["mple.com/a.png"]])).toEqual([
      "MEDIA: https://example.com/a.png",
    ]);
  });

  it("rethrows a listener's error from the next call when it threw while deltas were processed on a turn", async () => {
    const stream = new ReplyStream({
      blockStreaming: { chunking: { minChars: 5, maxChars: 40 }, breakMode: "text_end" },
    });
    stream.subscribe((event) => {
      if (event.type === "block") throw new Error("the channel refused the block");
    });
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    try {
      stream.handle({ type: "start", partial });
      stream.handle({ type: "text_delta", contentIndex: 0, delta: "First line.\n\nSecond", partial });
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toEqual([]);
      expect(() => stream.handle({ type: "text_delta", contentIndex: 0, delta: " line.", partial })).toThrow(
        "the channel refused the block",
      );
      // thrown once; the stream goes on
      stream.handle({ type: "text_delta", contentIndex: 0, delta: " More.", partial });
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });

  it("turns a provider error into an isError payload", () => {
    const stream = new ReplyStream();
    stream.handle({ type: "start", partial });
    stream.handle({
      type: "error",
      reason: "error",
      error: { ...partial, errorMessage: "rate limited" } as AssistantMessage,
    });
    expect(stream.finish()).toEqual([{ text: "rate limited", isError: true }]);
  });
});

describe("BlockCoalescer", () => {
  it("merges small blocks and flushes them after idleMs without sleeping", () => {
    const timers = manualTimers();
    const sent: string[] = [];
    const coalescer = new BlockCoalescer(
      { idleMs: 1000, minChars: 100, maxChars: 400, joiner: "\n\n" },
      (p) => sent.push(p.text ?? ""),
      timers,
    );
    coalescer.enqueue({ text: "one" });
    timers.advance(500);
    coalescer.enqueue({ text: "two" });
    timers.advance(999);
    expect(sent).toEqual([]);
    timers.advance(1);
    expect(sent).toEqual(["one\n\ntwo"]);
  });

  it("sends media blocks on their own and uses per-channel minimums", () => {
    const sent: ReplyPayload[] = [];
    const coalescer = new BlockCoalescer(
      { idleMs: 1000, minChars: 100, maxChars: 400, joiner: " " },
      (p) => sent.push(p),
      manualTimers(),
    );
    coalescer.enqueue({ text: "caption" });
    coalescer.enqueue({ mediaUrls: ["/tmp/a.png"] });
    expect(sent).toEqual([{ text: "caption" }, { mediaUrls: ["/tmp/a.png"] }]);
    expect(
      resolveCoalesceSettings({ chunk: { minChars: 800, maxChars: 1200 }, channel: "discord" }).minChars,
    ).toBe(1200);
    expect(
      resolveCoalesceSettings({ chunk: { minChars: 800, maxChars: 2000 }, channel: "slack" }).minChars,
    ).toBe(1500);
    expect(
      resolveCoalesceSettings({ chunk: { minChars: 800, maxChars: 2000 }, channel: "telegram" }).minChars,
    ).toBe(800);
  });
});

describe("ReasoningStreamStripper", () => {
  it("recovers an unclosed tag's content when nothing visible came before it", () => {
    const stripper = new ReasoningStreamStripper();
    expect(stripper.push("<think>Answer").visible).toBe("");
    expect(stripper.finish().visible).toBe("Answer");
  });

  it("leaves tags inside code alone and removes an orphan closer without retracting streamed text", () => {
    const stripper = new ReasoningStreamStripper();
    const visible =
      stripper.push("Use `<think>` here. leaked </think> rest").visible + stripper.finish().visible;
    expect(visible).toBe("Use `<think>` here. leaked  rest");
  });
});
