// Part of the session-store conformance suite (see conformance.ts). Owns: auth-profile, queue, cron and channel
// state. Does not own: the other parts of the suite, the shared fixture helpers (conformance-kit.ts) or any
// backend's set-up.
import { describe, expect, it } from "vitest";
import { SessionConflictError } from "../errors.ts";
import { ref, type SessionStoreFactory, withStore } from "./conformance-kit.ts";

/** Registers the conformance tests for auth-profile, queue, cron and channel state. */
export function describeStateConformance(factory: SessionStoreFactory): void {
  describe("auth, queue and cron state", () => {
    it("stores auth-profile usage state per agent and profile, merging concurrent updates", () =>
      withStore(factory, async (store) => {
        const state = await store.auth.update(
          "main",
          "anthropic:me",
          (current) => ({
            ...current,
            errorCount: current.errorCount + 1,
            failureCounts: { ...current.failureCounts, rate_limit: 1 },
            cooldownUntil: 60_000,
            cooldownReason: "rate_limit",
            cooldownModel: "claude-x",
            lastFailureAt: 30_000,
          }),
          { now: 30_000 },
        );
        expect(state).toMatchObject({
          version: 1,
          errorCount: 1,
          cooldownModel: "claude-x",
          failureCounts: { rate_limit: 1 },
        });
        await Promise.all(
          Array.from({ length: 5 }, () =>
            store.auth.update("main", "anthropic:me", (c) => ({ ...c, errorCount: c.errorCount + 1 }), {
              maxAttempts: 20,
            }),
          ),
        );
        expect((await store.auth.get("main", "anthropic:me"))?.errorCount).toBe(6);
        await store.auth.update("main", "openai:me", (c) => ({ ...c, lastUsed: 5 }));
        expect((await store.auth.list("main")).map((s) => s.profileId)).toEqual([
          "anthropic:me",
          "openai:me",
        ]);
        expect(await store.auth.list("ops")).toEqual([]);
        expect(await store.auth.delete("main", "openai:me")).toBe(true);
      }));

    it("queues items: idempotent enqueue, exclusive claims with leases, completion and retry", () =>
      withStore(factory, async (store) => {
        const item = { itemId: "q1", ...ref, kind: "followup", payload: { text: "hi" }, now: 10 };
        await store.queue.enqueue(item);
        expect(await store.queue.enqueue(item)).toMatchObject({ itemId: "q1", status: "pending" });
        await expect(store.queue.enqueue({ ...item, payload: { text: "other" } })).rejects.toThrow(
          /other content/,
        );
        await store.queue.enqueue({ ...item, itemId: "q2", now: 20 });
        // Concurrent claimers: which two win depends on the backend's scheduling (a pool serves them in any
        // order), never that two items go to two claimers and the third gets nothing.
        const claims = await Promise.all([
          store.queue.claimNext({ agentId: "main", owner: "w1", leaseMs: 1000, now: 100 }),
          store.queue.claimNext({ agentId: "main", owner: "w2", leaseMs: 1000, now: 100 }),
          store.queue.claimNext({ agentId: "main", owner: "w3", leaseMs: 1000, now: 100 }),
        ]);
        const claimed = claims.filter((claim) => claim !== undefined);
        expect(claimed).toHaveLength(2);
        expect(new Set(claimed.map((claim) => claim.itemId))).toEqual(new Set(["q1", "q2"]));
        expect(new Set(claimed.map((claim) => claim.claimedBy)).size).toBe(2);
        const [byFirst] = claimed;
        const firstOwner = byFirst?.claimedBy ?? "";
        const otherOwner = ["w1", "w2", "w3"].find((owner) => owner !== firstOwner) ?? "";
        expect(byFirst?.attempts).toBe(1);
        await store.queue.complete(byFirst?.itemId ?? "", firstOwner);
        await expect(store.queue.complete(byFirst?.itemId ?? "", otherOwner)).rejects.toThrow(
          new RegExp(`not claimed by ${otherOwner}`),
        );
        const expired = await store.queue.claimNext({
          agentId: "main",
          owner: "w4",
          leaseMs: 1000,
          now: 5000,
        });
        expect(expired).toMatchObject({ claimedBy: "w4", attempts: 2 });
        await store.queue.fail(expired?.itemId ?? "", "w4", "boom", { retryAt: 9000 });
        expect(
          await store.queue.claimNext({ agentId: "main", owner: "w5", leaseMs: 10, now: 8000 }),
        ).toBeUndefined();
        expect((await store.queue.list({ agentId: "main", status: "done" })).length).toBe(1);
      }));

    it("stores cron job state", () =>
      withStore(factory, async (store) => {
        await store.cron.update("daily", (c) => ({
          ...c,
          agentId: "main",
          nextRunAt: 1000,
          runningSince: 900,
        }));
        const after = await store.cron.update("daily", (c) => {
          const { runningSince: _done, ...rest } = c;
          return {
            ...rest,
            lastRunAt: 900,
            lastStatus: "error",
            lastError: "x",
            consecutiveErrors: c.consecutiveErrors + 1,
          };
        });
        expect(after).toMatchObject({
          version: 2,
          lastStatus: "error",
          consecutiveErrors: 1,
          nextRunAt: 1000,
        });
        expect(after.runningSince).toBeUndefined();
        expect((await store.cron.list()).map((c) => c.jobId)).toEqual(["daily"]);
        expect(await store.cron.delete("daily")).toBe(true);
        expect(await store.cron.get("daily")).toBeUndefined();
      }));
  });

  describe("channel state", () => {
    it("puts, gets, lists by prefix and deletes JSON values per channel account", () =>
      withStore(factory, async (store) => {
        const cs = store.channelState;
        const first = await cs.put("telegram", "default", "offset", { updateId: 41 }, { now: 100 });
        expect(first).toEqual({
          channel: "telegram",
          accountId: "default",
          key: "offset",
          value: { updateId: 41 },
          version: 1,
          updatedAt: 100,
        });
        expect(await cs.get("telegram", "default", "offset", { now: 100 })).toEqual(first);
        const second = await cs.put("telegram", "default", "offset", { updateId: 42 }, { now: 200 });
        expect(second).toMatchObject({ version: 2, value: { updateId: 42 }, updatedAt: 200 });
        await cs.put("telegram", "default", "pair:b", "B");
        await cs.put("telegram", "default", "pair:a", ["A", 1, null, true]);
        await cs.put("telegram", "default", "pairing", 0);
        await cs.put("telegram", "default", "PAIR:c", "upper case is another prefix");
        await cs.put("telegram", "other", "pair:z", "another account");
        await cs.put("slack", "default", "pair:y", "another channel");
        await cs.put("telegram", "default", "pa%r_x", "wildcards are literal");
        const listed = await cs.list("telegram", "default", { prefix: "pair:" });
        expect(listed.map((e) => [e.key, e.value])).toEqual([
          ["pair:a", ["A", 1, null, true]],
          ["pair:b", "B"],
        ]);
        expect((await cs.list("telegram", "default", { prefix: "pa%" })).map((e) => e.key)).toEqual([
          "pa%r_x",
        ]);
        expect((await cs.list("telegram", "default")).map((e) => e.key)).toEqual([
          "PAIR:c",
          "offset",
          "pa%r_x",
          "pair:a",
          "pair:b",
          "pairing",
        ]);
        expect(await cs.delete("telegram", "default", "pair:a")).toBe(true);
        expect(await cs.delete("telegram", "default", "pair:a")).toBe(false);
        expect(await cs.get("telegram", "default", "pair:a")).toBeUndefined();
        expect(await cs.get("telegram", "other", "pair:z")).toMatchObject({ value: "another account" });
      }));

    it("compare-and-set: expectedVersion 0 creates only, n writes only at version n", () =>
      withStore(factory, async (store) => {
        const cs = store.channelState;
        const created = await cs.put("slack", "T1", "k", { n: 1 }, { expectedVersion: 0 });
        expect(created.version).toBe(1);
        await expect(cs.put("slack", "T1", "k", { n: 9 }, { expectedVersion: 0 })).rejects.toThrow(
          SessionConflictError,
        );
        await expect(cs.put("slack", "T1", "k", { n: 9 }, { expectedVersion: 2 })).rejects.toThrow(
          /no longer at version 2/,
        );
        expect((await cs.get("slack", "T1", "k"))?.value).toEqual({ n: 1 });
        expect(await cs.put("slack", "T1", "k", { n: 2 }, { expectedVersion: 1 })).toMatchObject({
          version: 2,
          value: { n: 2 },
        });
        // Concurrent writers that read version 2: exactly one wins.
        const outcomes = await Promise.allSettled(
          Array.from({ length: 4 }, (_unused, i) =>
            cs.put("slack", "T1", "k", { n: 10 + i }, { expectedVersion: 2 }),
          ),
        );
        expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
        expect((await cs.get("slack", "T1", "k"))?.version).toBe(3);
        await expect(cs.put("slack", "T1", "missing", 1, { expectedVersion: 1 })).rejects.toThrow(
          SessionConflictError,
        );
        expect(await cs.delete("slack", "T1", "k", { expectedVersion: 2 })).toBe(false);
        expect(await cs.delete("slack", "T1", "k", { expectedVersion: 3 })).toBe(true);
      }));

    it("expired entries are absent, replaceable with a fresh version, and purged", () =>
      withStore(factory, async (store) => {
        const cs = store.channelState;
        await cs.put("telegram", "default", "code:ABC", { sender: "1" }, { now: 1000, expiresAt: 2000 });
        await cs.put("telegram", "default", "code:DEF", { sender: "2" }, { now: 1000, expiresAt: 5000 });
        await cs.put("telegram", "default", "keep", true, { now: 1000 });
        expect(await cs.get("telegram", "default", "code:ABC", { now: 1999 })).toMatchObject({
          expiresAt: 2000,
        });
        expect(await cs.get("telegram", "default", "code:ABC", { now: 2000 })).toBeUndefined();
        expect(
          (await cs.list("telegram", "default", { prefix: "code:", now: 3000 })).map((e) => e.key),
        ).toEqual(["code:DEF"]);
        // A version read before the expiry no longer matches.
        await expect(
          cs.put("telegram", "default", "code:ABC", {}, { expectedVersion: 1, now: 3000 }),
        ).rejects.toThrow(SessionConflictError);
        const replaced = await cs.put(
          "telegram",
          "default",
          "code:ABC",
          { sender: "3" },
          { expectedVersion: 0, now: 3000 },
        );
        expect(replaced.version).toBe(2);
        expect(replaced.expiresAt).toBeUndefined();
        expect(await cs.purgeExpired({ now: 4000 })).toBe(0);
        expect(await cs.purgeExpired({ now: 6000 })).toBe(1);
        expect((await cs.list("telegram", "default", { now: 6000 })).map((e) => e.key)).toEqual([
          "code:ABC",
          "keep",
        ]);
      }));

    it("rejects bad input with an error naming the field and keeps what is stored", () =>
      withStore(factory, async (store) => {
        const cs = store.channelState;
        await cs.put("telegram", "default", "k", "kept");
        await expect(cs.put("", "default", "k", 1)).rejects.toThrow(/channel must be a non-empty string/);
        await expect(cs.put("telegram", "", "k", 1)).rejects.toThrow(/accountId must be/);
        await expect(cs.get("telegram", "default", "")).rejects.toThrow(/key must be/);
        await expect(cs.put("telegram", "default", "k", undefined)).rejects.toThrow(/JSON-serialisable/);
        await expect(cs.put("telegram", "default", "k", 1n)).rejects.toThrow(/JSON-serialisable/);
        await expect(cs.put("telegram", "default", "k", 1, { expectedVersion: -1 })).rejects.toThrow(
          /expectedVersion/,
        );
        await expect(cs.put("telegram", "default", "k", 1, { expiresAt: Number.NaN })).rejects.toThrow(
          /expiresAt/,
        );
        expect((await cs.get("telegram", "default", "k"))?.value).toBe("kept");
      }));
  });
}
