// `SessionsApi.writeTogether` on SQLite (sqlite/sessions.ts): patches made inside it commit in one
// transaction, each call's promise settles on its own, and nothing commits when the transaction fails.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { RecordNotFoundError } from "../errors.ts";
import { controlPlanePath } from "../state-dir.ts";
import { openSessionStore, type SqliteSessionStore } from "../store.ts";
import { SqliteSessions } from "./sessions.ts";

async function withStore(
  body: (store: SqliteSessionStore, stateDir: string) => Promise<void>,
): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "agent-kernel-write-together-"));
  const store = await openSessionStore({ stateDir });
  try {
    await body(store, stateDir);
  } finally {
    await store.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const refOf = (index: number) => ({ agentId: "main", sessionKey: `agent:main:s${index}` });

describe("writeTogether on SQLite", () => {
  it("commits the patches made inside it; a refused one rejects alone", () =>
    withStore(async (store, stateDir) => {
      for (const index of [0, 1, 2])
        await store.sessions.create({ ...refOf(index), sessionId: `id-${index}` });
      const writeTogether = store.sessions.writeTogether;
      expect(typeof writeTogether).toBe("function");
      const written = store.sessions.writeTogether?.(() => [
        store.sessions.patch(refOf(0), () => ({ outputTokens: 10 })),
        store.sessions.patch(refOf(9), () => ({ outputTokens: 99 })),
        store.sessions.patch(refOf(2), { outputTokens: 12 }),
      ]);
      const settled = await Promise.allSettled(written ?? []);
      expect(settled.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(RecordNotFoundError);
      // Committed: another process (a second store on the same state dir) reads them.
      const other = await openSessionStore({ stateDir });
      try {
        expect((await other.sessions.get(refOf(0)))?.meta.outputTokens).toBe(10);
        expect((await other.sessions.get(refOf(1)))?.meta.outputTokens).toBeUndefined();
        expect((await other.sessions.get(refOf(2)))?.meta.outputTokens).toBe(12);
      } finally {
        await other.close();
      }
    }));

  it("commits nothing when the work throws", () =>
    withStore(async (store) => {
      await store.sessions.create({ ...refOf(0), sessionId: "id-0" });
      let made: Promise<unknown> | undefined;
      expect(() =>
        store.sessions.writeTogether?.(() => {
          made = store.sessions.patch(refOf(0), { outputTokens: 5 });
          throw new Error("refused after the patch");
        }),
      ).toThrow("refused after the patch");
      await made;
      expect((await store.sessions.get(refOf(0)))?.meta.outputTokens).toBeUndefined();
    }));

  it("commits nothing when SQLite rolls the transaction back mid-way (disk full), not even the later writes", () =>
    withStore(async (store, stateDir) => {
      for (const index of [0, 1, 2])
        await store.sessions.create({ ...refOf(index), sessionId: `id-${index}` });
      await store.close();
      // A connection of its own, so the file can be capped: a write that needs a new page gets SQLITE_FULL,
      // and SQLite then rolls back the whole transaction by itself.
      const raw = new Database(controlPlanePath(stateDir));
      try {
        raw.pragma("journal_mode = WAL");
        raw.pragma(`max_page_count = ${raw.pragma("page_count", { simple: true })}`);
        const sessions = new SqliteSessions(raw);
        let made: Promise<unknown>[] = [];
        expect(() =>
          sessions.writeTogether(() => {
            made = [
              sessions.patch(refOf(0), { outputTokens: 10 }),
              sessions.patch(refOf(1), { label: "x".repeat(200_000) }),
              sessions.patch(refOf(2), { outputTokens: 12 }),
            ];
          }),
        ).toThrow();
        const settled = await Promise.allSettled(made);
        expect(settled.map((result) => result.status)).toEqual(["fulfilled", "rejected", "rejected"]);
        expect(String((settled[2] as PromiseRejectedResult).reason)).toContain("group commit aborted");
        // Nothing committed: the write after the rollback was refused, not made in autocommit.
        for (const index of [0, 1, 2]) {
          const stored = await sessions.get(refOf(index));
          expect(stored?.version).toBe(1);
          expect(stored?.meta.outputTokens).toBeUndefined();
        }
        // Outside writeTogether the same write commits on its own, once.
        expect((await sessions.patch(refOf(2), { outputTokens: 12 })).version).toBe(2);
      } finally {
        raw.close();
      }
    }));
});
