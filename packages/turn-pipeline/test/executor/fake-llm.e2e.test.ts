// End to end through real HTTP: the executor → pi → pi-ai's OpenAI / Anthropic clients → tooling/fake-llm on
// 127.0.0.1, for both wire formats. Each fault gets its recovery, and nothing is lost: the user message is
// stored once, the transcript is one valid tree, the run record holds every attempt and every event.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type FakeLlm,
  fault,
  reply,
  startFakeLlm,
  toolCall,
  type WireProvider,
} from "@agent-kernel/fake-llm";
import type { TranscriptEntry } from "@agent-kernel/session-store";
import { afterEach, describe, expect, it } from "vitest";
import { executeTurn, toStoredRunEvents } from "../../src/executor/index.ts";
import type { TurnResult } from "../../src/executor/types.ts";
import { AGENT, createHarness, type Harness } from "./harness.ts";
import { PROVIDER_OF, wireConfig } from "./wire-config.ts";

let llm: FakeLlm | undefined;
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  await llm?.close();
  harness = undefined;
  llm = undefined;
});

async function setUp(
  wire: WireProvider,
  options: Parameters<typeof wireConfig>[2] = {},
  defaults: Parameters<typeof createHarness>[0]["defaults"] = {},
): Promise<{ llm: FakeLlm; harness: Harness }> {
  llm = await startFakeLlm();
  harness = await createHarness({ config: wireConfig(wire, llm.baseUrlFor(wire), options), defaults });
  return { llm, harness };
}

const isUser = (entry: TranscriptEntry, text: string): boolean =>
  entry.type === "message" &&
  (entry.message as { role: string }).role === "user" &&
  JSON.stringify((entry.message as { content: unknown }).content).includes(text);

/** Nothing lost: one user message, one valid tree, the run record complete. */
async function expectNothingLost(h: Harness, sessionId: string, prompt: string, result: TurnResult) {
  const entries = h.store.openTranscript(AGENT, sessionId).getEntries();
  expect(entries.filter((entry) => isUser(entry, prompt))).toHaveLength(1);
  const ids = new Set<string>();
  for (const entry of entries) {
    if (entry.parentId !== null) expect(ids.has(entry.parentId)).toBe(true);
    expect(ids.has(entry.id)).toBe(false);
    ids.add(entry.id);
  }
  const run = await h.store.runs.get(result.runId);
  const expected = { ok: "succeeded", error: "failed", aborted: "aborted", timeout: "timed_out" }[
    result.status
  ];
  expect(run?.status).toBe(expected);
  expect(run?.fallbackChain).toHaveLength(result.attempts.length);
  expect(run?.endedAt).toBeTypeOf("number");
  if (result.status !== "ok") expect(run?.errorReason).toBe(result.reason);
  const events = await h.store.runs.events(result.runId);
  // Stored rows are the returned events with each streamed block's deltas coalesced into one row.
  expect(events.map((event) => event.seq)).toEqual(
    toStoredRunEvents(result.events, "coalesce-deltas").map((event) => event.seq),
  );
  expect(events.length).toBeGreaterThan(0);
  expect(result.events.map((event) => event.seq)).toEqual(result.events.map((_, index) => index + 1));
}

const keySuffix = (name: "a" | "b") => name.repeat(4);

describe.each(["openai", "anthropic"] as const)("executeTurn over %s wire (tooling/fake-llm)", (wire) => {
  const provider = PROVIDER_OF[wire];

  it("runs a tool-using turn", async () => {
    const { llm, harness } = await setUp(wire);
    writeFileSync(join(harness.workspaceDir, "data.txt"), "the answer is 42\n");
    llm.enqueue(toolCall("read", { path: "data.txt" }, { text: "Reading." }), reply("The file says 42."));
    const context = await harness.context("agent:main:tool");
    const result = await executeTurn(context, {
      prompt: "What is in data.txt?",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("ok");
    expect(result.assistantText).toBe("The file says 42.");
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests.map((request) => request.apiKeySuffix)).toEqual([keySuffix("a"), keySuffix("a")]);
    expect(JSON.stringify(llm.requests[1]?.body)).toContain("the answer is 42");
    expect(result.events.some((event) => event.stream === "tool" && event.data.phase === "end")).toBe(true);
    await expectNothingLost(harness, context.sessionId, "What is in data.txt?", result);
  });

  it("429: rotates to the next profile and persists the cooldown", async () => {
    const { llm, harness } = await setUp(wire);
    llm.addRule({
      when: { apiKeySuffix: keySuffix("a") },
      steps: [fault("rate_limit", { retryAfterSeconds: 1, times: "always" })],
    });
    llm.enqueue(reply("answered by b"));
    const context = await harness.context("agent:main:429");
    const result = await executeTurn(context, {
      prompt: "hello 429",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("ok");
    expect(result.authProfileId).toBe(`${provider}:b`);
    expect(result.attempts.map((attempt) => [attempt.authProfileId, attempt.reason ?? "ok"])).toEqual([
      [`${provider}:a`, "rate_limit"],
      [`${provider}:b`, "ok"],
    ]);
    const stored = await harness.store.auth.list(AGENT);
    const cooled = stored.find((row) => row.profileId === `${provider}:a`);
    expect(cooled?.cooldownUntil).toBeGreaterThan(Date.now());
    expect(cooled?.failureCounts).toMatchObject({ rate_limit: 1 });
    // The next turn resolves the order from the store: b first, a (cooling) last.
    const next = await harness.context("agent:main:429");
    expect(next.runtime.authProfile.order).toEqual([`${provider}:b`, `${provider}:a`]);
    await expectNothingLost(harness, context.sessionId, "hello 429", result);
  });

  it("401: cools the profile down and rotates; 402 everywhere: every candidate tried, the error surfaced", async () => {
    const { llm, harness } = await setUp(wire);
    llm.addRule({ when: { apiKeySuffix: keySuffix("a") }, steps: [fault("auth", { times: 1 })] });
    llm.enqueue(reply("fine with b"));
    const context = await harness.context("agent:main:auth");
    const first = await executeTurn(context, { prompt: "hello 401", timeoutMs: 30_000, entryPoint: "agent" });
    expect(first.status).toBe("ok");
    expect(first.attempts.map((attempt) => attempt.reason ?? "ok")).toEqual(["auth", "ok"]);
    await expectNothingLost(harness, context.sessionId, "hello 401", first);

    // OpenAI's own quota text ("exceeded your current quota") is a rate limit in OpenClaw's taxonomy; the
    // credit-balance wording is billing on both wires.
    llm.setScenario({
      steps: [
        fault("billing", { message: "Your credit balance is too low to access the API.", times: "always" }),
      ],
    });
    const billing = await harness.context("agent:main:billing");
    const result = await executeTurn(billing, {
      prompt: "hello 402",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("error");
    expect(result.reason).toBe("billing");
    expect(result.payloads.at(-1)?.isError).toBe(true);
    expect(new Set(result.attempts.map((attempt) => attempt.model))).toEqual(new Set(["m1", "m2"]));
    const stored = await harness.store.auth.list(AGENT);
    for (const name of ["a", "b"]) {
      expect(stored.find((row) => row.profileId === `${provider}:${name}`)?.disabledReason).toBe("billing");
    }
    await expectNothingLost(harness, billing.sessionId, "hello 402", result);
  });

  it("context overflow: compacts, then succeeds", async () => {
    const { llm, harness } = await setUp(wire, { contextWindow: 4000 });
    const context = await harness.context("agent:main:overflow");
    llm.enqueue(reply(`Here is a long story. ${"once upon a time ".repeat(400)}`));
    expect(
      (await executeTurn(context, { prompt: "tell a story", timeoutMs: 30_000, entryPoint: "agent" })).status,
    ).toBe("ok");
    llm.enqueue(
      fault("context_overflow"),
      reply("## Goal\nSummary of the story so far."),
      reply("Short answer."),
    );
    const result = await executeTurn(context, {
      prompt: "and then?",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("ok");
    expect(result.compactions).toBe(1);
    expect(result.assistantText).toBe("Short answer.");
    expect(result.attempts.map((attempt) => attempt.action ?? "ok")).toEqual(["compact_and_retry", "ok"]);
    expect(result.events.some((event) => event.stream === "compaction")).toBe(true);
    const last = llm.requests.at(-1);
    expect(JSON.stringify(last?.body)).toContain("Summary of the story so far.");
    expect(JSON.stringify(last?.body)).toContain("and then?");
    const entries = harness.store.openTranscript(AGENT, context.sessionId).getEntries();
    expect(entries.some((entry) => entry.type === "compaction")).toBe(true);
    await expectNothingLost(harness, context.sessionId, "and then?", result);
  });

  it("5xx: one transient retry, then the chain moves on to the next model", async () => {
    const { llm, harness } = await setUp(wire, { profiles: ["a"] });
    llm.addRule({ when: { model: "m1" }, steps: [fault("server_error", { times: "always" })] });
    llm.enqueue(reply("m2 to the rescue"));
    const context = await harness.context("agent:main:5xx");
    const result = await executeTurn(context, {
      prompt: "hello 500",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("ok");
    expect(result.attempts.map((attempt) => [attempt.model, attempt.action ?? "ok"])).toEqual([
      ["m1", "transient_retry"],
      ["m1", `fallback_model:${provider}/m2`],
      ["m2", "ok"],
    ]);
    expect(result.fallback).toEqual({ provider, model: "m2" });
    expect((await harness.store.runs.get(result.runId))?.model).toBe("m2");
    await expectNothingLost(harness, context.sessionId, "hello 500", result);
  });

  it("stream reset mid-message: retried once, the cut text is not delivered twice", async () => {
    const { llm, harness } = await setUp(wire);
    llm.enqueue(
      { type: "reset", text: "Hello from the other side", afterDeltas: 2 },
      reply("Hello from the other side"),
    );
    const context = await harness.context("agent:main:reset");
    const result = await executeTurn(context, {
      prompt: "hello reset",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("ok");
    expect(result.payloads.map((payload) => payload.text)).toEqual(["Hello from the other side"]);
    expect(result.attempts.map((attempt) => attempt.action ?? "ok")).toEqual(["transient_retry", "ok"]);
    await expectNothingLost(harness, context.sessionId, "hello reset", result);
  });

  it("a stalled stream ends the run as a timeout; the partial text is kept and the session stays usable", async () => {
    const { llm, harness } = await setUp(wire, { profiles: ["a"], fallback: false }, { stallTimeoutMs: 300 });
    llm.enqueue(
      { type: "stall", text: "Partial words then nothing", afterDeltas: 2, times: 2 },
      reply("Back again."),
    );
    const context = await harness.context("agent:main:stall");
    const result = await executeTurn(context, {
      prompt: "hello stall",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("timeout");
    expect(result.reason).toBe("stalled");
    expect(result.partial).toBe(true);
    expect(result.assistantText.length).toBeGreaterThan(0);
    expect(result.attempts.map((attempt) => attempt.outcome)).toEqual(["timeout", "timeout"]);
    await expectNothingLost(harness, context.sessionId, "hello stall", result);
    const again = await executeTurn(context, {
      prompt: "are you there?",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(again.status).toBe("ok");
    expect(again.assistantText).toBe("Back again.");
  });
});

describe("turn timeout and external abort (openai wire)", () => {
  it("the turn timeout ends the run with status timeout and keeps the partial text", async () => {
    const { llm, harness } = await setUp("openai", { profiles: ["a"], fallback: false });
    llm.enqueue(
      reply("slow words arrive one by one and never finish in time", { chunkSize: 5, delayMs: 150 }),
    );
    const context = await harness.context("agent:main:timeout");
    const result = await executeTurn(context, { prompt: "be slow", timeoutMs: 400, entryPoint: "cron" });
    expect(result.status).toBe("timeout");
    expect(result.reason).toBe("timeout");
    expect(result.partial).toBe(true);
    expect(result.assistantText.startsWith("slow")).toBe(true);
    await expectNothingLost(harness, context.sessionId, "be slow", result);
  });

  it("an external AbortSignal ends the run as aborted, and the next turn works", async () => {
    const { llm, harness } = await setUp("openai", { profiles: ["a"], fallback: false });
    llm.enqueue(
      reply("this will be cut short by the caller", { chunkSize: 4, delayMs: 100 }),
      reply("ok now"),
    );
    const context = await harness.context("agent:main:abort");
    const controller = new AbortController();
    const result = await executeTurn(context, {
      prompt: "start",
      timeoutMs: 0,
      entryPoint: "agent",
      signal: controller.signal,
      callbacks: { onPartialReply: () => controller.abort() },
    });
    expect(result.status).toBe("aborted");
    expect(result.reason).toBe("aborted");
    await expectNothingLost(harness, context.sessionId, "start", result);
    const next = await executeTurn(context, { prompt: "again", timeoutMs: 0, entryPoint: "agent" });
    expect(next.status).toBe("ok");
  });
});
