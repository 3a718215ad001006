// What the SQLite fast paths (sqlite/sessions.ts, auth-state.ts, queue.ts) add to the conformance suite:
// a patch or state update in one process never races another one of the same process (its read and write
// happen without yielding), and a queue claim stays exclusive between two connections to one file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionConflictError } from "../errors.ts";
import { openSessionStore, type SqliteSessionStore } from "../store.ts";

async function withStateDir(body: (stateDir: string) => Promise<void>): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "agent-kernel-fast-paths-"));
  try {
    await body(stateDir);
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function withStore(body: (store: SqliteSessionStore) => Promise<void>): Promise<void> {
  await withStateDir(async (stateDir) => {
    const store = await openSessionStore({ stateDir });
    try {
      await body(store);
    } finally {
      await store.close();
    }
  });
}

const ref = { agentId: "main", sessionKey: "agent:main:main" };

describe("the SQLite fast paths", () => {
  it("apply many concurrent patches of one session with a single attempt each", () =>
    withStore(async (store) => {
      await store.sessions.create({ ...ref, sessionId: "s1", meta: { outputTokens: 0 } });
      const written = await Promise.all(
        Array.from({ length: 100 }, () =>
          store.sessions.patch(ref, (current) => ({ outputTokens: (current.meta.outputTokens ?? 0) + 1 }), {
            maxAttempts: 1,
          }),
        ),
      );
      expect(written.map((record) => record.version).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 100 }, (_, index) => index + 2),
      );
      expect(await store.sessions.get(ref)).toMatchObject({ version: 101, meta: { outputTokens: 100 } });
    }));

  it("still refuses a patch whose awaiting updater lost the race and has no attempts left", () =>
    withStore(async (store) => {
      await store.sessions.create({ ...ref, sessionId: "s1" });
      const slow = store.sessions.patch(
        ref,
        async () => {
          await store.sessions.patch(ref, { label: "winner" });
          return { label: "loser" };
        },
        { maxAttempts: 1 },
      );
      await expect(slow).rejects.toBeInstanceOf(SessionConflictError);
      expect(await store.sessions.get(ref)).toMatchObject({ version: 2, meta: { label: "winner" } });
    }));

  it("apply many concurrent auth and cron updates with a single attempt each", () =>
    withStore(async (store) => {
      await Promise.all(
        Array.from({ length: 50 }, () =>
          store.auth.update("main", "anthropic:me", (c) => ({ ...c, errorCount: c.errorCount + 1 }), {
            maxAttempts: 1,
          }),
        ),
      );
      await Promise.all(
        Array.from({ length: 50 }, () =>
          store.cron.update("daily", (c) => ({ ...c, consecutiveErrors: c.consecutiveErrors + 1 }), {
            maxAttempts: 1,
          }),
        ),
      );
      expect(await store.auth.get("main", "anthropic:me")).toMatchObject({ version: 50, errorCount: 50 });
      expect(await store.cron.get("daily")).toMatchObject({ version: 50, consecutiveErrors: 50 });
    }));

  it("hands each queue item to exactly one of two stores open on the same files", () =>
    withStateDir(async (stateDir) => {
      const first = await openSessionStore({ stateDir });
      const second = await openSessionStore({ stateDir });
      try {
        for (let index = 0; index < 40; index++) {
          await first.queue.enqueue({
            itemId: `q${index}`,
            ...ref,
            kind: "followup",
            payload: index,
            now: index,
          });
        }
        const claims = await Promise.all(
          Array.from({ length: 50 }, (_, index) =>
            (index % 2 === 0 ? first : second).queue.claimNext({
              agentId: "main",
              owner: `w${index}`,
              leaseMs: 60_000,
              now: 1000,
            }),
          ),
        );
        const claimed = claims.flatMap((item) => (item === undefined ? [] : [item.itemId]));
        expect(claimed).toHaveLength(40);
        expect(new Set(claimed).size).toBe(40);
        // Oldest first: the claims came in enqueue order.
        expect(claimed).toEqual(Array.from({ length: 40 }, (_, index) => `q${index}`));
        expect(await second.queue.list({ agentId: "main", status: "claimed" })).toHaveLength(40);
      } finally {
        await first.close();
        await second.close();
      }
    }));
});
