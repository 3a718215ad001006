import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createKernelHarness, type KernelHarness } from "../test/harness.ts";
import { KernelInputError } from "./validate.ts";

let h: KernelHarness;
afterEach(async () => {
  await h.close();
});

describe("prepareSession: runtime resolution and defaults", () => {
  beforeEach(async () => {
    h = await createKernelHarness({
      config: {
        agents: {
          defaults: {
            timeoutSeconds: 90,
            reasoningDefault: "stream",
            blockStreamingDefault: "on",
            blockStreamingChunk: { minChars: 10, maxChars: 40 },
          },
          list: [
            { id: "main", default: true },
            { id: "ops", thinkingDefault: "high" },
          ],
        },
        tools: { deny: ["exec"] },
      },
    });
  });

  it("resolves identity, model, defaults and tool policy, and creates the session row", async () => {
    const prepared = await h.kernel.prepareSession({ sessionKey: "telegram:direct:42" });
    const runtime = prepared.runtimeContext;
    expect(runtime.agentId).toEqual({ value: "main", source: "default" });
    expect(runtime.sessionKey.value).toBe("agent:main:telegram:direct:42");
    expect(runtime.workspaceDir.value).toBe(h.workspaceDir);
    expect(runtime.model.value).toMatchObject({ provider: "faux", model: "faux-1" });
    expect(prepared.defaults).toMatchObject({
      entryPoint: "agent",
      timeoutMs: 90_000,
      reasoningMode: "stream",
      verboseLevel: "off",
      promptMode: "full",
      contextTokens: 100_000,
      blockStreaming: { chunking: { minChars: 10, maxChars: 40 }, breakMode: "text_end" },
    });
    expect(prepared.toolPolicy.isAllowed("exec")).toBe(false);
    expect(prepared.toolPolicy.isAllowed("read")).toBe(true);
    const exec = prepared.toolDecisions.find((decision) => decision.tool === "exec");
    expect(exec).toMatchObject({ allowed: false, layer: "tools.deny" });

    const row = await h.store.sessions.get({ agentId: "main", sessionKey: runtime.sessionKey.value });
    expect(row?.sessionId).toBe(prepared.transcript.sessionId);
    expect(prepared.transcript).toEqual({ agentId: "main", sessionId: runtime.sessionId.value });
  });

  it("applies run options: the agent's thinking default, a requested timeout and entry point", async () => {
    const prepared = await h.kernel.prepareSession({
      agentId: "ops",
      runOptions: { timeoutSeconds: 5, entryPoint: "cron", promptMode: "minimal" },
    });
    expect(prepared.runtimeContext.agentId).toEqual({ value: "ops", source: "input" });
    expect(prepared.runtimeContext.sessionKey.value).toBe("agent:ops:main");
    expect(prepared.runtimeContext.thinking.value).toBe("high");
    expect(prepared.defaults).toMatchObject({ timeoutMs: 5_000, entryPoint: "cron", promptMode: "minimal" });
  });

  it("keeps the stored sessionId, and a caller's sessionId resets the row to it", async () => {
    const first = await h.kernel.prepareSession({ sessionKey: "s1" });
    const again = await h.kernel.prepareSession({ sessionKey: "s1", runOptions: { entryPoint: "followup" } });
    expect(again.transcript.sessionId).toBe(first.transcript.sessionId);
    const chosen = await h.kernel.prepareSession({ sessionKey: "s1", sessionId: "chosen-id" });
    expect(chosen.transcript.sessionId).toBe("chosen-id");
    expect((await h.store.sessions.get({ agentId: "main", sessionKey: "agent:main:s1" }))?.sessionId).toBe(
      "chosen-id",
    );
    const forced = await h.kernel.prepareSession({ sessionKey: "s1", runOptions: { forceNewSession: true } });
    expect(forced.transcript.sessionId).not.toBe("chosen-id");
  });

  it("gives every forceNewSession preparation a new session id, even right after a cached one", async () => {
    const plain = await h.kernel.prepareSession({ sessionKey: "fresh" });
    await h.kernel.prepareSession({ sessionKey: "fresh" }); // now cached
    const ids = new Set([plain.transcript.sessionId]);
    for (let i = 0; i < 3; i++) {
      const forced = await h.kernel.prepareSession({
        sessionKey: "fresh",
        runOptions: { forceNewSession: true },
      });
      ids.add(forced.transcript.sessionId);
    }
    expect(ids.size).toBe(4);
  });

  it("rejects bad input with every problem named, and unknown agents with the resolver's message", async () => {
    const bad = h.kernel.prepareSession({
      sessionKey: "",
      runOptions: { timeoutSeconds: -1, entryPiont: "x" },
    } as never);
    await expect(bad).rejects.toThrow(KernelInputError);
    await expect(bad).rejects.toThrow(/sessionKey: expected a non-empty string, found ""/);
    await expect(bad).rejects.toThrow(/runOptions.timeoutSeconds: expected a number >= 0, found -1/);
    await expect(bad).rejects.toThrow(/runOptions.entryPiont: unknown key; did you mean "entryPoint"\?/);
    await expect(h.kernel.prepareSession({ agentId: "opz" })).rejects.toThrow(/unknown agent "opz".*"ops"/);
    await expect(h.kernel.prepareSession({ runOptions: { model: "nope/none" } })).rejects.toThrow(/nope/);
  });
});

describe("prepareSession: prewarm reuse and invalidation", () => {
  beforeEach(async () => {
    h = await createKernelHarness();
  });

  it("reuses a preparation while config and session are unchanged", async () => {
    const first = await h.kernel.prepareSession({ sessionKey: "warm" });
    const second = await h.kernel.prepareSession({ sessionKey: "warm" });
    expect(second).toBe(first);
    // A config object with the same content is the same config.
    const sameContent = await h.kernel.prepareSession({ sessionKey: "warm", config: h.configWith({}) });
    expect(sameContent).toBe(first);
    expect(h.kernel.stats().prewarm).toMatchObject({ hits: 2, misses: 1 });
    // Different inputs are different preparations.
    const other = await h.kernel.prepareSession({ sessionKey: "warm", runOptions: { thinking: "low" } });
    expect(other).not.toBe(first);
  });

  it("is invalidated by a config change", async () => {
    const first = await h.kernel.prepareSession({ sessionKey: "warm" });
    const changed = h.configWith({ agents: { defaults: { timeoutSeconds: 7 } } });
    const next = await h.kernel.prepareSession({ sessionKey: "warm", config: changed });
    expect(next).not.toBe(first);
    expect(next.defaults.timeoutMs).toBe(7_000);
    // And back: the new config's preparation replaced the old entry.
    expect(await h.kernel.prepareSession({ sessionKey: "warm", config: changed })).toBe(next);
  });

  it("is invalidated by a session change that resolution reads, not by the kernel's after-run writes", async () => {
    const first = await h.kernel.prepareSession({ sessionKey: "warm" });
    const ref = { agentId: "main", sessionKey: "agent:main:warm" };
    await h.store.sessions.patch(ref, { inputTokens: 12, lastActivityAt: Date.now(), systemSent: true });
    expect(await h.kernel.prepareSession({ sessionKey: "warm" })).toBe(first);

    await h.store.sessions.patch(ref, { thinkingLevel: "high" });
    const afterThinking = await h.kernel.prepareSession({ sessionKey: "warm" });
    expect(afterThinking).not.toBe(first);
    expect(afterThinking.runtimeContext.thinking).toMatchObject({ value: "high", source: "session" });

    await h.store.sessions.patch(ref, { modelOverride: "faux/faux-2", modelOverrideSource: "user" });
    const afterModel = await h.kernel.prepareSession({ sessionKey: "warm" });
    expect(afterModel.runtimeContext.model.value.model).toBe("faux-2");

    await h.store.sessions.reset(ref);
    const afterReset = await h.kernel.prepareSession({ sessionKey: "warm" });
    expect(afterReset.transcript.sessionId).not.toBe(afterModel.transcript.sessionId);
  });

  it("is invalidated by auth-profile state and by a stale session under the reset rules", async () => {
    const first = await h.kernel.prepareSession({ sessionKey: "warm" });
    await h.store.auth.update("main", "faux:one", (current) => ({ ...current, errorCount: 1 }));
    const afterAuth = await h.kernel.prepareSession({ sessionKey: "warm" });
    expect(afterAuth).not.toBe(first);

    // Idle reset: a session last active long ago gets a new sessionId, though the cache held the old one.
    const idle = h.configWith({ session: { reset: { mode: "idle", idleMinutes: 5 } } });
    const fresh = await h.kernel.prepareSession({ sessionKey: "warm", config: idle });
    const ref = { agentId: "main", sessionKey: "agent:main:warm" };
    await h.store.sessions.patch(ref, { lastActivityAt: Date.now() - 60 * 60_000 });
    const stale = await h.kernel.prepareSession({ sessionKey: "warm", config: idle });
    expect(stale.transcript.sessionId).not.toBe(fresh.transcript.sessionId);
    expect(stale.runtimeContext.sessionId.source).toBe("new:stale");
  });

  it("can be turned off", async () => {
    await h.close();
    h = await createKernelHarness({ kernel: { prewarm: false } });
    const first = await h.kernel.prepareSession({ sessionKey: "cold" });
    const second = await h.kernel.prepareSession({ sessionKey: "cold" });
    expect(second).not.toBe(first);
    expect(second.transcript).toEqual(first.transcript);
  });
});
