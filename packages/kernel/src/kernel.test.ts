import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { createKernelHarness, Gate, type KernelHarness } from "../test/harness.ts";
import type { AgentEventPayload, TurnOutcome } from "./types.ts";
import { KernelInputError } from "./validate.ts";

let h: KernelHarness;
afterEach(async () => {
  await h?.close();
});

const phases = (events: readonly AgentEventPayload[]) =>
  events.filter((event) => event.stream === "lifecycle").map((event) => event.data.phase);

/** Waits until `condition` holds, yielding to the event loop (no wall-clock assertion). */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(condition()).toBe(true);
}

describe("executeTurn through the real executor (pi faux provider)", () => {
  it("runs a tool-using turn, records the run with its decisions and updates the session once", async () => {
    h = await createKernelHarness();
    h.model
      .on("save it", () =>
        fauxAssistantMessage(
          [fauxText("Writing."), fauxToolCall("write", { path: "a.txt", content: "hi" })],
          {
            stopReason: "toolUse",
          },
        ),
      )
      .on("save it", () => fauxAssistantMessage("Saved a.txt."));
    const prepared = await h.kernel.prepareSession({
      sessionKey: "cli",
      messageContext: { channel: "cli", to: "me" },
    });
    const seen: AgentEventPayload[] = [];
    const unsubscribe = h.kernel.subscribe((event) => seen.push(event));
    const finals: string[] = [];
    const outcome = await h.kernel.executeTurn(prepared, {
      prompt: "save it",
      delivery: { onFinal: (payloads) => void finals.push(...payloads.map((payload) => payload.text ?? "")) },
    });
    unsubscribe();

    expect(outcome.status).toBe("ok");
    expect(outcome.result.assistantText).toBe("Saved a.txt.");
    expect(readFileSync(join(h.workspaceDir, "a.txt"), "utf8")).toBe("hi");
    expect(finals).toEqual(["Writing.", "Saved a.txt."]);
    expect(seen).toEqual(outcome.events);
    expect(phases(outcome.events).at(0)).toBe("start");
    expect(outcome.events.at(-1)?.data).toMatchObject({ phase: "end", status: "ok" });
    expect(outcome.timings.executorMs).toBeGreaterThan(0);
    expect(outcome.timings.overheadMs).toBeGreaterThanOrEqual(0);

    const run = await h.store.runs.get(outcome.runId);
    expect(run).toMatchObject({
      status: "succeeded",
      entryPoint: "agent",
      provider: "faux",
      model: "faux-1",
    });
    const stored = await h.store.runs.events(outcome.runId);
    expect(stored[0]).toMatchObject({ seq: 0, stream: "lifecycle", data: { phase: "prepared" } });
    const decisions = stored[0]?.data as TurnOutcome["decisions"];
    expect(decisions.runtime).toMatchObject({ model: { value: { provider: "faux", model: "faux-1" } } });
    expect(decisions.toolPolicy).toContain('write: allowed by tools.profile (coding) — allow "write"');
    expect(stored.slice(1).map((event) => event.seq)).toEqual(outcome.events.map((event) => event.seq));

    expect(outcome.sessionMeta).toMatchObject({
      modelProvider: "faux",
      model: "faux-1",
      contextTokens: 100_000,
      systemSent: true,
      abortedLastRun: false,
      lastChannel: "cli",
      lastTo: "me",
      totalTokensFresh: false,
    });
    expect(outcome.sessionMeta.inputTokens).toBe(outcome.result.usage.input);
    expect(outcome.sessionMeta.outputTokens).toBeGreaterThan(0);
    const row = await h.store.sessions.get({ agentId: "main", sessionKey: "agent:main:cli" });
    expect(row?.meta).toEqual(outcome.sessionMeta);
    // The after-run write does not invalidate the preparation.
    expect(
      await h.kernel.prepareSession({ sessionKey: "cli", messageContext: { channel: "cli", to: "me" } }),
    ).toBe(prepared);
    expect(await h.kernel.wait(outcome.runId)).toBe(outcome);
  });

  it("records the model that actually answered after a fallback", async () => {
    h = await createKernelHarness({
      config: { agents: { defaults: { model: { primary: "faux/faux-1", fallbacks: ["faux/faux-2"] } } } },
    });
    // The first call fails with an auth error; the chain moves on to faux-2, which answers.
    h.model.on("hello", failAuth).on("hello", () => fauxAssistantMessage("from the fallback"));
    const prepared = await h.kernel.prepareSession({ sessionKey: "fb" });
    const outcome = await h.kernel.executeTurn(prepared, { prompt: "hello" });
    expect(outcome.status).toBe("ok");
    expect(outcome.fallback).toEqual({ provider: "faux", model: "faux-2" });
    expect(outcome.sessionMeta).toMatchObject({
      modelProvider: "faux",
      model: "faux-2",
      contextTokens: 50_000,
    });
    const run = await h.store.runs.get(outcome.runId);
    expect(run?.model).toBe("faux-2");
    expect(run?.fallbackChain.map((attempt) => attempt.model)).toEqual(["faux-1", "faux-2"]);
  });

  it("rejects bad turn input before anything runs", async () => {
    h = await createKernelHarness();
    const prepared = await h.kernel.prepareSession({ sessionKey: "bad" });
    await expect(h.kernel.executeTurn(prepared, { prompt: "  " })).rejects.toThrow(
      /prompt: expected a non-empty prompt \(or at least one image\)/,
    );
    const bad = h.kernel.executeTurn(prepared, { prompt: "hi", timeoutMs: 1.5, extra: 1 } as never);
    await expect(bad).rejects.toThrow(KernelInputError);
    await expect(bad).rejects.toThrow(/timeoutMs: expected a whole number of milliseconds, found 1.5/);
    await expect(bad).rejects.toThrow(/extra: unknown key/);
    expect(h.kernel.activeRuns()).toEqual([]);
    expect(await h.store.runs.listForSession({ agentId: "main", sessionKey: "agent:main:bad" })).toEqual([]);
  });
});

function failAuth() {
  return fauxAssistantMessage([], {
    stopReason: "error",
    errorMessage:
      '401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
  });
}

describe("lanes and the global cap", () => {
  it("serialises two concurrent turns on one session: the second starts after the first ended", async () => {
    h = await createKernelHarness();
    const first = new Gate("first done");
    const second = new Gate("second done");
    h.model.on("one", first.handler).on("two", second.handler);
    const prepared = await h.kernel.prepareSession({ sessionKey: "lane" });
    const order: string[] = [];
    h.kernel.subscribe((event) => {
      if (event.stream === "lifecycle" && (event.data.phase === "start" || event.data.phase === "end")) {
        order.push(`${event.runId}:${String(event.data.phase)}`);
      }
    });
    const a = h.kernel.executeTurn(prepared, { prompt: "one", runId: "run-a" });
    const b = h.kernel.executeTurn(prepared, { prompt: "two", runId: "run-b" });
    await first.started;
    await until(() => h.kernel.activeRuns().length === 2);
    expect(h.kernel.activeRuns().map((run) => [run.runId, run.phase])).toEqual([
      ["run-a", "running"],
      ["run-b", "queued"],
    ]);
    // Let other work happen: b must still not reach the model while a holds the lane.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(second.startedCount).toBe(0);
    first.release();
    await second.started;
    second.release();
    const [outA, outB] = await Promise.all([a, b]);
    expect([outA.status, outB.status]).toEqual(["ok", "ok"]);
    expect(order).toEqual(["run-a:start", "run-a:end", "run-b:start", "run-b:end"]);
    expect(h.model.calls).toEqual(["one", "two"]);
    expect(outB.timings.queuedMs).toBeGreaterThan(0);
    // Both turns are in one transcript, in order.
    const entries = h.store.openTranscript("main", prepared.transcript.sessionId).getBranch();
    const texts = entries.flatMap((entry) =>
      entry.type === "message" && (entry.message as { role: string }).role === "user"
        ? [JSON.stringify((entry.message as { content: unknown }).content)]
        : [],
    );
    expect(texts.map((text) => (text.includes("one") ? "one" : "two"))).toEqual(["one", "two"]);
  });

  it("runs different sessions in parallel up to maxConcurrent, never more", async () => {
    h = await createKernelHarness({ config: { agents: { defaults: { maxConcurrent: 2 } } } });
    const gates = [0, 1, 2, 3].map((index) => new Gate(`answer ${index}`));
    let inFlight = 0;
    let peak = 0;
    for (const [index, gate] of gates.entries()) {
      h.model.on(`p${index}`, async (options) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        try {
          return await gate.handler(options);
        } finally {
          inFlight -= 1;
        }
      });
    }
    const prepared = await Promise.all(
      gates.map((_, index) => h.kernel.prepareSession({ sessionKey: `s${index}` })),
    );
    const turns = prepared.map((session, index) => h.kernel.executeTurn(session, { prompt: `p${index}` }));
    await gates[0]?.started;
    await gates[1]?.started;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(inFlight).toBe(2);
    expect(h.kernel.stats().lanes).toMatchObject({ running: 2, maxConcurrent: 2 });
    expect(gates[2]?.startedCount).toBe(0);
    gates[0]?.release();
    await gates[2]?.started;
    for (const gate of gates) gate.release();
    const outcomes = await Promise.all(turns);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(peak).toBe(2);
  });
});

describe("abort and timeout", () => {
  it("aborts a running turn by runId: partial state stored, abortedLastRun set", async () => {
    h = await createKernelHarness();
    const gate = new Gate();
    h.model.on("long", gate.handler);
    const prepared = await h.kernel.prepareSession({ sessionKey: "ab" });
    const turn = h.kernel.executeTurn(prepared, { prompt: "long", runId: "r-abort" });
    await gate.started;
    expect(h.kernel.abort("r-abort")).toBe(true);
    const outcome = await turn;
    expect(outcome.status).toBe("aborted");
    expect(outcome.events.at(-1)?.data).toMatchObject({ phase: "end", status: "aborted" });
    expect(outcome.sessionMeta.abortedLastRun).toBe(true);
    expect((await h.store.runs.get("r-abort"))?.status).toBe("aborted");
    expect(h.kernel.abort("r-abort")).toBe(false);
    expect(h.kernel.activeRuns()).toEqual([]);
  });

  it("aborts a session: the running turn stops and the queued one never reaches the model", async () => {
    h = await createKernelHarness();
    const gate = new Gate();
    h.model.on("first", gate.handler);
    const prepared = await h.kernel.prepareSession({ sessionKey: "abs" });
    const caller = new AbortController();
    const first = h.kernel.executeTurn(prepared, { prompt: "first" });
    const queued = h.kernel.executeTurn(prepared, { prompt: "queued", signal: caller.signal });
    await gate.started;
    expect(h.kernel.abortSession({ sessionKey: "agent:main:abs" })).toHaveLength(2);
    const [a, b] = await Promise.all([first, queued]);
    expect(a.status).toBe("aborted");
    expect(b.status).toBe("aborted");
    expect(b.result.errorMessage).toMatch(/while queued/);
    expect(phases(b.events)).toEqual(["start", "end"]);
    expect(h.model.calls).toEqual(["first"]);
    expect((await h.store.runs.get(b.runId))?.status).toBe("aborted");
    // A caller's signal that is already aborted ends the turn the same way.
    caller.abort();
    const late = await h.kernel.executeTurn(prepared, { prompt: "late", signal: caller.signal });
    expect(late.status).toBe("aborted");
    expect(h.model.calls).toEqual(["first"]);
  });

  it("times a turn out: status timeout, run timed_out, the session marked", async () => {
    h = await createKernelHarness({ config: { agents: { defaults: { timeoutSeconds: 1 } } } });
    const gate = new Gate();
    h.model.on("slow", gate.handler);
    const prepared = await h.kernel.prepareSession({ sessionKey: "to" });
    expect(prepared.defaults.timeoutMs).toBe(1_000);
    const outcome = await h.kernel.executeTurn(prepared, { prompt: "slow", timeoutMs: 50 });
    expect(outcome.status).toBe("timeout");
    expect(outcome.result.errorMessage).toMatch(/timed out after 50 ms/);
    expect((await h.store.runs.get(outcome.runId))?.status).toBe("timed_out");
    expect(outcome.sessionMeta.abortedLastRun).toBe(true);
    // The next turn on the session runs normally and clears the flag.
    const next = await h.kernel.executeTurn(prepared, { prompt: "again" });
    expect(next.status).toBe("ok");
    expect(next.sessionMeta.abortedLastRun).toBe(false);
  });
});

describe("the executor seam", () => {
  it("ends the run as failed when the executor throws, keeping what it streamed", async () => {
    h = await createKernelHarness({
      kernel: {
        executor: async (context, request) => {
          await context.store.runs.start({
            runId: request.runId ?? "x",
            agentId: context.agentId,
            sessionKey: context.sessionKey,
            sessionId: context.sessionId,
            entryPoint: request.entryPoint,
          });
          request.callbacks?.onAgentEvent?.({
            runId: request.runId ?? "x",
            seq: 1,
            ts: Date.now(),
            stream: "lifecycle",
            data: { phase: "start" },
          });
          throw new Error("disk on fire");
        },
      },
    });
    const prepared = await h.kernel.prepareSession({ sessionKey: "boom" });
    const outcome = await h.kernel.executeTurn(prepared, { prompt: "hi" });
    expect(outcome.status).toBe("error");
    expect(outcome.result).toMatchObject({ reason: "internal", errorMessage: "disk on fire" });
    expect(phases(outcome.events)).toEqual(["start", "end"]);
    expect(await h.store.runs.get(outcome.runId)).toMatchObject({
      status: "failed",
      errorMessage: "disk on fire",
    });
    expect((await h.store.runs.events(outcome.runId)).map((event) => event.seq)).toEqual([0, 1, 2]);
    expect(outcome.sessionMeta.systemSent).toBeUndefined();
  });
});
