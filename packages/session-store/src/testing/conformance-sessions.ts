// Part of the session-store conformance suite (see conformance.ts). Owns: session CRUD, patch conflicts and reset
// through the public `SessionStore` interface. Does not own: the other parts of the suite, the shared fixture
// helpers (conformance-kit.ts) or any backend's set-up.
import { describe, expect, it } from "vitest";
import { SessionConflictError } from "../errors.ts";
import { ref, type SessionStoreFactory, withStore } from "./conformance-kit.ts";

/** Registers the conformance tests for session CRUD, patch conflicts and reset through the public `SessionStore` interface. */
export function describeSessionConformance(factory: SessionStoreFactory): void {
  describe("sessions", () => {
    it("creates, reads, lists and deletes sessions; create with the same id is idempotent", () =>
      withStore(factory, async (store) => {
        const created = await store.sessions.create({
          ...ref,
          sessionId: "s1",
          meta: { label: "hi" },
          now: 1000,
        });
        expect(created).toMatchObject({
          ...ref,
          sessionId: "s1",
          version: 1,
          createdAt: 1000,
          updatedAt: 1000,
        });
        expect(created.meta).toEqual({ label: "hi" });
        expect(await store.sessions.get(ref)).toEqual(created);
        expect(await store.sessions.getBySessionId("main", "s1")).toEqual(created);
        expect(await store.sessions.create({ ...ref, sessionId: "s1" })).toEqual(created);
        await expect(store.sessions.create({ ...ref, sessionId: "other" })).rejects.toThrow(
          /already exists with sessionId s1/,
        );
        expect(await store.sessions.ensure({ ...ref, sessionId: "other" })).toEqual(created);
        await store.sessions.create({
          agentId: "main",
          sessionKey: "agent:main:main",
          sessionId: "s2",
          now: 2000,
        });
        await store.sessions.create({ agentId: "ops", sessionKey: "agent:ops:main", sessionId: "s3" });
        expect((await store.sessions.list("main")).map((s) => s.sessionId)).toEqual(["s2", "s1"]);
        expect(await store.sessions.delete(ref)).toBe(true);
        expect(await store.sessions.delete(ref)).toBe(false);
        expect(await store.sessions.get(ref)).toBeUndefined();
      }));

    it("patches fields (null removes) and bumps the version; a stale expectedVersion is refused", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({ ...ref, sessionId: "s1", meta: { label: "a", thinkingLevel: "low" } });
        const patched = await store.sessions.patch(ref, {
          label: null,
          thinkingLevel: "high",
          inputTokens: 10,
        });
        expect(patched.version).toBe(2);
        expect(patched.meta.label).toBeUndefined();
        expect(patched.meta).toMatchObject({ thinkingLevel: "high", inputTokens: 10 });
        expect(await store.sessions.get(ref)).toEqual(patched);
        await expect(
          store.sessions.patch(ref, { label: "x" }, { expectedVersion: 1 }),
        ).rejects.toBeInstanceOf(SessionConflictError);
        expect((await store.sessions.get(ref))?.meta.label).toBeUndefined();
        await expect(store.sessions.patch({ ...ref, sessionKey: "missing" }, {})).rejects.toThrow(
          /no session/,
        );
      }));

    it("re-applies an updater to the fresh row when a concurrent write wins, keeping both changes", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({ ...ref, sessionId: "s1", meta: { inputTokens: 0 } });
        const seen: number[] = [];
        const result = await store.sessions.patch(ref, async (current) => {
          seen.push(current.version);
          if (seen.length === 1) await store.sessions.patch(ref, { label: "concurrent", inputTokens: 5 });
          return { inputTokens: (current.meta.inputTokens ?? 0) + 1 };
        });
        expect(seen).toEqual([1, 2]);
        expect(result.version).toBe(3);
        expect(result.meta).toMatchObject({ label: "concurrent", inputTokens: 6 });
        expect(await store.sessions.get(ref)).toEqual(result);
      }));

    it("gives up after maxAttempts lost races without overwriting the winners", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({ ...ref, sessionId: "s1", meta: { inputTokens: 0 } });
        let calls = 0;
        const attempt = store.sessions.patch(
          ref,
          async (current) => {
            calls++;
            await store.sessions.patch(ref, { inputTokens: (current.meta.inputTokens ?? 0) + 100 });
            return { label: "loser" };
          },
          { maxAttempts: 3 },
        );
        await expect(attempt).rejects.toBeInstanceOf(SessionConflictError);
        expect(calls).toBe(3);
        const stored = await store.sessions.get(ref);
        expect(stored?.meta.label).toBeUndefined();
        expect(stored?.meta.inputTokens).toBe(300);
        expect(stored?.version).toBe(4);
      }));

    it("keeps every increment of many concurrent patches", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({ ...ref, sessionId: "s1", meta: { outputTokens: 0 } });
        await Promise.all(
          Array.from({ length: 20 }, () =>
            store.sessions.patch(ref, (current) => ({ outputTokens: (current.meta.outputTokens ?? 0) + 1 }), {
              maxAttempts: 50,
            }),
          ),
        );
        expect((await store.sessions.get(ref))?.meta.outputTokens).toBe(20);
      }));

    it("reset mints a new sessionId, keeps user-sourced overrides and clears auto-sourced ones", () =>
      withStore(factory, async (store) => {
        await store.sessions.create({
          ...ref,
          sessionId: "s1",
          meta: {
            thinkingLevel: "high",
            queueMode: "collect",
            label: "my chat",
            modelOverride: "gpt-x",
            providerOverride: "openai",
            modelOverrideSource: "user",
            authProfileOverride: "anthropic:auto",
            authProfileOverrideSource: "auto",
            authProfileOverrideCompactionCount: 2,
            compactionCount: 7,
            inputTokens: 900,
            systemSent: true,
            abortedLastRun: true,
            lastTo: "chat-42",
            fallbackNoticeReason: "rate_limit",
          },
        });
        const { previous, current } = await store.sessions.reset(ref, { now: 5000 });
        expect(previous.sessionId).toBe("s1");
        expect(current.sessionId).not.toBe("s1");
        expect(current.meta).toEqual({
          thinkingLevel: "high",
          queueMode: "collect",
          label: "my chat",
          modelOverride: "gpt-x",
          providerOverride: "openai",
          modelOverrideSource: "user",
          sessionStartedAt: 5000,
          systemSent: false,
          abortedLastRun: false,
          compactionCount: 0,
          inputTokens: 0,
          outputTokens: 0,
          totalTokens: 0,
          totalTokensFresh: true,
        });
        expect(await store.sessions.getBySessionId("main", "s1")).toBeUndefined();
        const again = await store.sessions.reset(ref, { sessionId: "s2" });
        const repeated = await store.sessions.reset(ref, { sessionId: "s2" });
        expect(repeated.current).toEqual(again.current);
        const autoModel = await store.sessions.patch(ref, {
          modelOverride: "fallback-model",
          modelOverrideSource: "auto",
          authProfileOverride: "anthropic:me",
          authProfileOverrideSource: "user",
        });
        const afterAuto = await store.sessions.reset({
          agentId: autoModel.agentId,
          sessionKey: autoModel.sessionKey,
        });
        expect(afterAuto.current.meta.modelOverride).toBeUndefined();
        expect(afterAuto.current.meta.authProfileOverride).toBe("anthropic:me");
      }));

    it("survives a restart", async () => {
      const fixture = await factory();
      try {
        const first = await fixture.open();
        await first.sessions.create({ ...ref, sessionId: "s1", meta: { label: "kept" } });
        await first.close();
        const second = await fixture.open();
        expect((await second.sessions.get(ref))?.meta.label).toBe("kept");
        await second.close();
      } finally {
        await fixture.dispose();
      }
    });
  });
}
