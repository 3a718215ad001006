// Part of the session-store conformance suite (see conformance.ts). Owns: runs and their events, and interrupted-
// run recovery. Does not own: the other parts of the suite, the shared fixture helpers (conformance-kit.ts) or any
// backend's set-up.
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { readProcessStart } from "../owner-process.ts";
import type { RunOwner } from "../runs.ts";
import { ref, type SessionStoreFactory, withStore } from "./conformance-kit.ts";

/** Registers the conformance tests for runs and their events, and interrupted-run recovery. */
export function describeRunConformance(factory: SessionStoreFactory): void {
  describe("runs", () => {
    const run = { runId: "r1", ...ref, sessionId: "s1", entryPoint: "agent", startedAt: 100 };

    it("starts, updates and finishes a run; repeated writes are idempotent, conflicting ones refused", () =>
      withStore(factory, async (store) => {
        const started = await store.runs.start({ ...run, provider: "anthropic", model: "claude" });
        expect(started).toMatchObject({ runId: "r1", status: "running", startedAt: 100, fallbackChain: [] });
        expect(await store.runs.start(run)).toEqual(started);
        await expect(store.runs.start({ ...run, sessionId: "s9" })).rejects.toThrow(/already exists/);
        const chain = [
          { provider: "anthropic", model: "claude", reason: "rate_limit", authProfileId: "anthropic:a" },
          { provider: "openai", model: "gpt" },
        ];
        await store.runs.update("r1", {
          fallbackChain: chain,
          provider: "openai",
          model: "gpt",
          authProfileId: "openai:b",
        });
        const finished = await store.runs.finish("r1", {
          status: "succeeded",
          endedAt: 200,
          usage: { input: 10, output: 5, total: 15 },
          costUsd: 0.25,
          thinkingLevel: "low",
        });
        expect(finished).toMatchObject({
          status: "succeeded",
          endedAt: 200,
          provider: "openai",
          model: "gpt",
          authProfileId: "openai:b",
          fallbackChain: chain,
          usage: { input: 10, output: 5, total: 15 },
          costUsd: 0.25,
          thinkingLevel: "low",
        });
        expect(await store.runs.finish("r1", { status: "succeeded", endedAt: 999 })).toEqual(finished);
        await expect(store.runs.finish("r1", { status: "failed", errorReason: "x" })).rejects.toThrow(
          /already ended as succeeded/,
        );
        await store.runs.start({ ...run, runId: "r2", startedAt: 300 });
        await store.runs.finish("r2", { status: "failed", errorReason: "billing", errorMessage: "pay up" });
        expect((await store.runs.listForSession(ref)).map((r) => r.runId)).toEqual(["r2", "r1"]);
        expect(await store.runs.get("r2")).toMatchObject({
          status: "failed",
          errorReason: "billing",
          errorMessage: "pay up",
        });
        expect(await store.runs.get("nope")).toBeUndefined();
      }));

    it("keys events by seq: ordered, repeated appends change nothing, a reused seq with other content throws", () =>
      withStore(factory, async (store) => {
        await store.runs.start(run);
        const events = [
          { seq: 2, ts: 2, stream: "assistant", data: { text: "b" } },
          { seq: 1, ts: 1, stream: "lifecycle", data: { phase: "start" } },
          { seq: 3, ts: 3, stream: "tool", data: null },
        ];
        await store.runs.appendEvents("r1", events);
        await store.runs.appendEvents("r1", events.slice(0, 2));
        expect((await store.runs.events("r1")).map((e) => e.seq)).toEqual([1, 2, 3]);
        expect(await store.runs.events("r1", { afterSeq: 1 })).toEqual([events[0], events[2]]);
        await expect(
          store.runs.appendEvents("r1", [
            { seq: 4, ts: 4, stream: "x", data: 1 },
            { seq: 2, ts: 2, stream: "assistant", data: "changed" },
          ]),
        ).rejects.toThrow(/different event with seq 2/);
        expect((await store.runs.events("r1")).map((e) => e.seq)).toEqual([1, 2, 3]);
        await expect(store.runs.appendEvents("missing", events)).rejects.toThrow(/no run missing/);
      }));

    it("finishes a run together with its buffered events; a refused event leaves it running and unchanged", () =>
      withStore(factory, async (store) => {
        await store.runs.start(run);
        await store.runs.appendEvents("r1", [
          { seq: 1, ts: 1, stream: "lifecycle", data: { phase: "start" } },
        ]);
        await expect(
          store.runs.finish("r1", {
            status: "succeeded",
            endedAt: 5,
            events: [
              { seq: 2, ts: 2, stream: "assistant", data: { text: "new" } },
              { seq: 1, ts: 1, stream: "lifecycle", data: { phase: "changed" } },
            ],
          }),
        ).rejects.toThrow(/different event with seq 1/);
        expect(await store.runs.get("r1")).toMatchObject({ status: "running" });
        expect((await store.runs.events("r1")).map((e) => e.seq)).toEqual([1]);
        const events = [
          { seq: 2, ts: 2, stream: "assistant", data: { text: "done" } },
          { seq: 3, ts: 3, stream: "lifecycle", data: { phase: "end" } },
        ];
        const finished = await store.runs.finish("r1", { status: "succeeded", endedAt: 6, events });
        expect(finished).toMatchObject({ status: "succeeded", endedAt: 6 });
        expect((await store.runs.events("r1")).map((e) => e.seq)).toEqual([1, 2, 3]);
        // Repeating the same finish with the same events is a no-op; the run stays as it was.
        expect(await store.runs.finish("r1", { status: "succeeded", endedAt: 9, events })).toEqual(finished);
        await expect(store.runs.finish("missing", { status: "failed", events })).rejects.toThrow(
          /no run missing/,
        );
      }));

    it("marks runs left running by a store that is gone as interrupted on the next open, and only those", async () => {
      const fixture = await factory();
      try {
        const crashed = await fixture.open();
        await crashed.runs.start({ ...run, runId: "orphan" });
        await crashed.runs.start({ ...run, runId: "done" });
        await crashed.runs.finish("done", { status: "succeeded" });
        const alive = await fixture.open();
        await alive.runs.start({ ...run, runId: "live" });
        expect(alive.recoveredRuns).toEqual([]);
        expect((await alive.runs.get("orphan"))?.status).toBe("running");
        await crashed.close();
        const next = await fixture.open();
        expect(next.recoveredRuns.map((r) => r.runId)).toEqual(["orphan"]);
        expect(await next.runs.get("orphan")).toMatchObject({
          status: "interrupted",
          errorReason: "interrupted",
        });
        expect((await next.runs.get("done"))?.status).toBe("succeeded");
        expect((await next.runs.get("live"))?.status).toBe("running");
        await expect(next.runs.finish("orphan", { status: "succeeded" })).rejects.toThrow(
          /already ended as interrupted/,
        );
        await alive.close();
        await next.close();
      } finally {
        await fixture.dispose();
      }
    });

    it("tells a run's owner from a process that took its pid later or in another boot; rows without a start time go by the pid", async (context) => {
      // A live process other than this one, with its real start (Linux /proc); elsewhere there is nothing to compare.
      const pid = process.ppid;
      const start = readProcessStart(pid);
      const fixture = await factory();
      try {
        if (fixture.seedRunningRun === undefined || start === undefined) return context.skip();
        await (await fixture.open()).close();
        const seed = (runId: string, owner: Partial<RunOwner>) =>
          fixture.seedRunningRun?.({
            ...run,
            runId,
            owner: { host: hostname(), pid, token: `token-${runId}`, ...owner },
          });
        await seed("owner", start);
        await seed("reused", { ...start, startTime: start.startTime + 1 });
        await seed("rebooted", { ...start, bootId: "another-boot" });
        await seed("legacy", {});
        const store = await fixture.open();
        try {
          expect(store.recoveredRuns.map((r) => r.runId).sort()).toEqual(["rebooted", "reused"]);
          expect(await store.runs.get("reused")).toMatchObject({
            status: "interrupted",
            errorReason: "interrupted",
          });
          expect((await store.runs.get("rebooted"))?.status).toBe("interrupted");
          expect((await store.runs.get("owner"))?.status).toBe("running");
          expect((await store.runs.get("legacy"))?.status).toBe("running");
        } finally {
          await store.close();
        }
      } finally {
        await fixture.dispose();
      }
    });
  });
}
