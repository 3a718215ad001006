// The session-metadata writes after runs (session-writes.ts) against the real SQLite store and executor: turns
// that end together are group-committed, each outcome still carries its own committed metadata, and a group
// commit that fails is redone write by write (nothing counted twice).
import { afterEach, describe, expect, it } from "vitest";
import { createKernelHarness, type KernelHarness } from "../test/harness.ts";

let h: KernelHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const SESSIONS = 12;
const TURNS = 3;

/** Every session runs `TURNS` turns, all sessions at once; returns each session's outcomes. */
async function runAll(harness: KernelHarness) {
  return Promise.all(
    Array.from({ length: SESSIONS }, async (_, index) => {
      const prepared = await harness.kernel.prepareSession({ sessionKey: `together-${index}` });
      const outcomes = [];
      for (let turn = 0; turn < TURNS; turn++) {
        outcomes.push(await harness.kernel.executeTurn(prepared, { prompt: `turn ${turn}` }));
      }
      return { prepared, outcomes };
    }),
  );
}

/** Counts the group commits the kernel makes (the store's own `writeTogether` still does the work). */
function countGroupCommits(harness: KernelHarness, around?: (work: () => unknown) => () => unknown) {
  const sessions = harness.store.sessions;
  const original = sessions.writeTogether?.bind(sessions);
  if (original === undefined) throw new Error("the SQLite store has writeTogether");
  const counts = { commits: 0, writes: 0 };
  sessions.writeTogether = <T>(work: () => T): T => {
    counts.commits += 1;
    return original(() => {
      const written = work();
      counts.writes += Array.isArray(written) ? written.length : 0;
      return around === undefined ? written : around(() => written)();
    }) as T;
  };
  return counts;
}

describe("session-metadata writes after runs", () => {
  it("commit the writes of turns that end together in one transaction, each turn's metadata its own", async () => {
    h = await createKernelHarness({ kernel: { maxConcurrent: SESSIONS } });
    const counts = countGroupCommits(h);
    const sessions = await runAll(h);
    expect(counts.writes).toBe(SESSIONS * TURNS);
    expect(counts.commits).toBeLessThan(counts.writes);
    for (const { prepared, outcomes } of sessions) {
      const last = outcomes.at(-1);
      expect(outcomes.every((outcome) => outcome.status === "ok")).toBe(true);
      expect(last?.sessionMeta.lastInteractionAt).toBeGreaterThan(0);
      const row = await h.store.sessions.get({
        agentId: prepared.runtimeContext.agentId.value,
        sessionKey: prepared.runtimeContext.sessionKey.value,
      });
      expect(row?.meta).toEqual(last?.sessionMeta);
      expect(row?.version).toBe(1 + TURNS);
    }
  });

  it("redo a failed group commit write by write, nothing written twice", async () => {
    h = await createKernelHarness({ kernel: { maxConcurrent: SESSIONS } });
    // The transaction fails after its writes (as a full disk would at commit): SQLite rolls them all back.
    let failures = 0;
    countGroupCommits(h, (written) => () => {
      if (failures < 2) {
        failures += 1;
        throw new Error("the group commit failed");
      }
      return written();
    });
    const sessions = await runAll(h);
    expect(failures).toBe(2);
    for (const { prepared, outcomes } of sessions) {
      expect(outcomes.every((outcome) => outcome.status === "ok")).toBe(true);
      const row = await h.store.sessions.get({
        agentId: prepared.runtimeContext.agentId.value,
        sessionKey: prepared.runtimeContext.sessionKey.value,
      });
      expect(row?.meta).toEqual(outcomes.at(-1)?.sessionMeta);
      // Version 1 at creation, one more per turn's write: a rolled-back write left no trace.
      expect(row?.version).toBe(1 + TURNS);
    }
  });
});
