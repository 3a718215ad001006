// A run while no OpenTelemetry SDK is registered makes no span at all (one look at the API's global provider),
// and a provider registered later traces the next run: the check is made at every run's start.
import type { ModelCandidate } from "@agent-kernel/runtime-resolver";
import type { Api, Model } from "@earendil-works/pi-ai";
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { RunTrace } from "./tracing.ts";
import { newTurnState } from "./turn-state.ts";
import type { TurnContext, TurnRequest } from "./types.ts";

const context = { agentId: "main", sessionKey: "agent:main:t", sessionId: "s1" } as TurnContext;
const request = { prompt: "hi", timeoutMs: 1_000, entryPoint: "agent" } as TurnRequest;
const candidate = { provider: "p", model: "m", origin: "requested" } as ModelCandidate;
const model = { id: "m", provider: "p" } as Model<Api>;

afterEach(() => {
  trace.disable();
});

describe("RunTrace without a tracer provider", () => {
  it("shares one stateless trace and attempt between runs, and hands back what the run's finish gave", async () => {
    const first = RunTrace.start("r1", context, request, candidate);
    const second = RunTrace.start("r2", context, request, candidate);
    expect(second).toBe(first);
    const attempt = first.startAttempt(0, model, "off", undefined);
    expect(second.startAttempt(0, model, "off", undefined)).toBe(attempt);
    attempt.modelCallStarted();
    attempt.endUnfinished("ended");
    await expect(first.finish(newTurnState(), Promise.resolve(42))).resolves.toBe(42);
    await expect(second.finish(newTurnState(), Promise.reject(new Error("not stored")))).rejects.toThrow(
      "not stored",
    );
  });

  it("traces the next run once a provider is registered", async () => {
    expect(RunTrace.start("r0", context, request, candidate)).toBe(
      RunTrace.start("r00", context, request, candidate),
    );
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    const run = RunTrace.start("r3", context, request, candidate);
    const attempt = run.startAttempt(0, model, "off", undefined);
    attempt.endUnfinished("the turn ended first");
    const state = newTurnState();
    state.status = "ok";
    await run.finish(state, Promise.resolve(undefined));
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual([
      "agent_kernel.attempt",
      "agent_kernel.run",
    ]);
    await provider.shutdown();
  });
});
