// The turn's spans as an operator's SDK records them: real turns through pi and tooling/fake-llm over HTTP,
// with OpenTelemetry's own tracer provider and in-memory exporter registered globally for this file. Checks
// the tree (run → attempts → model calls and tool calls), the attributes, and error statuses.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeLlm, fault, reply, startFakeLlm, toolCall } from "@agent-kernel/fake-llm";
import { SpanStatusCode, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AGENT, createHarness, type Harness } from "../../test/executor/harness.ts";
import { PROVIDER_OF, wireConfig } from "../../test/executor/wire-config.ts";
import { executeTurn } from "./execute-turn.ts";
import { TRACE_ATTRIBUTES as A, TRACER_NAME } from "./tracing.ts";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

let llm: FakeLlm | undefined;
let harness: Harness | undefined;

beforeAll(() => {
  expect(trace.setGlobalTracerProvider(provider)).toBe(true);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});
beforeEach(() => exporter.reset());
afterEach(async () => {
  await harness?.close();
  await llm?.close();
  harness = undefined;
  llm = undefined;
});

const wire = "openai" as const;
const providerName = PROVIDER_OF[wire];

async function setUp(
  options: Parameters<typeof wireConfig>[2] = {},
): Promise<{ llm: FakeLlm; harness: Harness }> {
  llm = await startFakeLlm();
  harness = await createHarness({ config: wireConfig(wire, llm.baseUrlFor(wire), options) });
  return { llm, harness };
}

const idOf = (span: ReadableSpan): string => span.spanContext().spanId;
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const nanos = (time: readonly [number, number]): number => time[0] * 1e9 + time[1];
const startOf = (span: ReadableSpan): number => nanos(span.startTime);
const endOf = (span: ReadableSpan): number => nanos(span.endTime);
/** The SDK takes a span's start from `Date.now()` (whole milliseconds) and its end from the monotonic clock. */
const CLOCK_GRAIN_NS = 1e6;

/** `later` started after `earlier` ended (within the SDK's clock grain). */
function expectAfter(later: ReadableSpan | undefined, earlier: ReadableSpan | undefined): void {
  expect(later && earlier, "both spans exist").toBeTruthy();
  expect(startOf(later as ReadableSpan) + CLOCK_GRAIN_NS).toBeGreaterThanOrEqual(
    endOf(earlier as ReadableSpan),
  );
}

/** The finished spans under `parent`, in start order (a tie: in end order). */
function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan): ReadableSpan[] {
  return spans
    .filter((span) => parentOf(span) === idOf(parent))
    .sort((a, b) => startOf(a) - startOf(b) || endOf(a) - endOf(b));
}

function onlyRun(spans: readonly ReadableSpan[]): ReadableSpan {
  const runs = spans.filter((span) => span.name === "agent_kernel.run");
  expect(runs).toHaveLength(1);
  return runs[0] as ReadableSpan;
}

describe("the turn's spans (OpenTelemetry SDK, in-memory exporter)", () => {
  it("run → attempts (a retry, a fallback) → model calls and tool calls, with the run id on every span", async () => {
    const { llm, harness } = await setUp({ profiles: ["a"] });
    writeFileSync(join(harness.workspaceDir, "data.txt"), "the answer is 42\n");
    llm.addRule({ when: { model: "m1" }, steps: [fault("server_error", { times: "always" })] });
    llm.enqueue(
      toolCall("read", { path: "data.txt" }),
      toolCall("read", { path: "missing.txt" }),
      reply("The file says 42."),
    );
    const context = await harness.context("agent:main:traced");
    const result = await executeTurn(context, {
      prompt: "What is in data.txt?",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("ok");
    expect(result.attempts.map((attempt) => [attempt.model, attempt.action ?? "ok"])).toEqual([
      ["m1", "transient_retry"],
      ["m1", `fallback_model:${providerName}/m2`],
      ["m2", "ok"],
    ]);

    const spans = exporter.getFinishedSpans();
    for (const span of spans) {
      expect(span.instrumentationScope.name).toBe(TRACER_NAME);
      expect(span.attributes[A.runId], span.name).toBe(result.runId);
    }
    const run = onlyRun(spans);
    expect(parentOf(run)).toBeUndefined();
    expect(run.attributes).toMatchObject({
      [A.agentId]: AGENT,
      [A.sessionKey]: context.sessionKey,
      [A.sessionId]: context.sessionId,
      [A.entryPoint]: "agent",
      [A.provider]: providerName,
      [A.requestModel]: "m1",
      [A.runStatus]: "ok",
      [A.responseModel]: `${providerName}/m2`,
    });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);

    // Nothing else is a child of the run: model and tool calls hang under their attempt.
    const attempts = childrenOf(spans, run);
    expect(attempts.map((span) => span.name)).toEqual(Array(3).fill("agent_kernel.attempt"));
    expect(
      attempts.map((span) => [span.attributes[A.attemptIndex], span.attributes[A.requestModel]]),
    ).toEqual([
      [1, "m1"],
      [2, "m1"],
      [3, "m2"],
    ]);
    expect(attempts.map((span) => span.attributes[A.attemptOutcome])).toEqual(["error", "error", "ok"]);
    expect(attempts.map((span) => span.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
      SpanStatusCode.UNSET,
    ]);
    expect(attempts[0]?.status.message).toBe(result.attempts[0]?.error);
    for (const attempt of attempts) {
      expect(attempt.attributes[A.provider]).toBe(providerName);
      expect(attempt.attributes[A.authProfileId]).toBe(`${providerName}:a`);
      // An attempt lies within the run, and the next one starts after it ended.
      expect(startOf(attempt) + CLOCK_GRAIN_NS).toBeGreaterThanOrEqual(startOf(run));
      expect(endOf(attempt)).toBeLessThanOrEqual(endOf(run) + CLOCK_GRAIN_NS);
    }
    expectAfter(attempts[1], attempts[0]);
    expectAfter(attempts[2], attempts[1]);

    // The failed attempts: one model call each, refused by the server.
    for (const attempt of attempts.slice(0, 2)) {
      const calls = childrenOf(spans, attempt);
      expect(calls.map((span) => span.name)).toEqual(["chat m1"]);
      expect(calls[0]?.status.code).toBe(SpanStatusCode.ERROR);
      expect(calls[0]?.attributes[A.finishReasons]).toEqual(["error"]);
    }

    // The answering attempt: chat, tool, chat, tool, chat — each tool call between the model calls around it.
    const answered = childrenOf(spans, attempts[2] as ReadableSpan);
    expect(answered.map((span) => span.name)).toEqual([
      "chat m2",
      "execute_tool read",
      "chat m2",
      "execute_tool read",
      "chat m2",
    ]);
    for (let index = 1; index < answered.length; index++) expectAfter(answered[index], answered[index - 1]);
    const [firstCall, readOk, , readMissing, lastCall] = answered as [
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
    ];
    expect(firstCall.attributes).toMatchObject({
      [A.operation]: "chat",
      [A.provider]: providerName,
      [A.requestModel]: "m2",
      [A.responseModel]: "m2",
      [A.finishReasons]: ["toolUse"],
    });
    expect(lastCall.attributes[A.finishReasons]).toEqual(["stop"]);
    expect(lastCall.status.code).toBe(SpanStatusCode.UNSET);
    expect(readOk.attributes).toMatchObject({ [A.toolName]: "read", [A.toolOutcome]: "ok" });
    expect(readOk.status.code).toBe(SpanStatusCode.UNSET);
    expect(readMissing.attributes).toMatchObject({ [A.toolName]: "read", [A.toolOutcome]: "error" });
    expect(readMissing.status.code).toBe(SpanStatusCode.ERROR);
    expect(readMissing.status.message).toContain("missing.txt");
    expect(readOk.attributes[A.toolCallId]).toMatch(/\S/);
  });

  it("a run that fails ends its span in error with its status and reason", async () => {
    const { llm, harness } = await setUp({ profiles: ["a"], fallback: false });
    llm.addRule({ when: { model: "m1" }, steps: [fault("auth", { times: "always" })] });
    const context = await harness.context("agent:main:traced-failure");
    const result = await executeTurn(context, { prompt: "hello", timeoutMs: 30_000, entryPoint: "cron" });
    expect(result.status).toBe("error");

    const spans = exporter.getFinishedSpans();
    const run = onlyRun(spans);
    expect(run.attributes).toMatchObject({
      [A.runId]: result.runId,
      [A.entryPoint]: "cron",
      [A.runStatus]: "error",
      [A.runReason]: result.reason,
    });
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
    expect(run.status.message).toContain(String(result.reason));
    const attempts = childrenOf(spans, run);
    expect(attempts.length).toBe(result.attempts.length);
    expect(attempts.every((span) => span.status.code === SpanStatusCode.ERROR)).toBe(true);
  });

  it("spans follow each run: two turns of one session are two separate trees", async () => {
    const { llm, harness } = await setUp({ profiles: ["a"] });
    llm.enqueue(reply("one"), reply("two"));
    const context = await harness.context("agent:main:traced-twice");
    const first = await executeTurn(context, { prompt: "1", timeoutMs: 30_000, entryPoint: "agent" });
    const second = await executeTurn(context, {
      prompt: "2",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect([first.status, second.status]).toEqual(["ok", "ok"]);
    const spans = exporter.getFinishedSpans();
    const runs = spans.filter((span) => span.name === "agent_kernel.run");
    expect(runs.map((span) => span.attributes[A.runId])).toEqual([first.runId, second.runId]);
    // The second turn runs on the first one's warm session: its calls still land under its own attempt.
    for (const run of runs) {
      const [attempt, ...others] = childrenOf(spans, run);
      expect(others).toEqual([]);
      const calls = childrenOf(spans, attempt as ReadableSpan);
      expect(calls.map((span) => span.name)).toEqual(["chat m1"]);
      expect(calls[0]?.attributes[A.runId]).toBe(run.attributes[A.runId]);
    }
    const attempts = runs.map((run) => childrenOf(spans, run)[0]);
    expect(attempts.map((span) => span?.attributes[A.attemptWarm])).toEqual([false, true]);
  });
});
