// `syncState()`: a session's count and leaf in one look at SQLite, what a warm pi binding asks before each
// turn. It answers from the leaf row it read last while nothing proves it stale; these tests move the leaf
// and append behind a handle's back in every way the store allows (another handle of the same store, the
// same store's journal and its fold, a second store on the same files: another connection) and check that
// it always agrees with `count()` and `getLeafId()`.
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionStore } from "./store.ts";
import { header, messageEntry } from "./testing/conformance.ts";
import type { SqliteTranscript } from "./transcript.ts";
import { clearTranscriptCache } from "./transcript-cache.ts";

const dirs: string[] = [];
async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "transcript-sync-state-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  clearTranscriptCache();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What `syncState` must say: the two separate reads. */
const separately = (transcript: SqliteTranscript) => ({
  count: transcript.count(),
  leafId: transcript.getLeafId(),
});

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("syncState", () => {
  it("agrees with count() and getLeafId() after appends and leaf moves through another handle of the store", async () => {
    const store = await openSessionStore({ stateDir: await stateDir() });
    try {
      const mine = store.openTranscript("main", "s1", { header: header("s1") });
      const other = store.openTranscript("main", "s1");
      mine.append(messageEntry("a", null));
      mine.append(messageEntry("b", "a"));
      expect(mine.syncState?.()).toEqual({ count: 2, leafId: "b" });
      await nextTurn();
      expect(mine.syncState?.()).toEqual({ count: 2, leafId: "b" });
      // The same connection moves the leaf: data_version does not change, the leaf-write count does.
      other.setLeaf("a");
      expect(mine.syncState?.()).toEqual({ count: 2, leafId: "a" });
      expect(mine.syncState?.()).toEqual(separately(mine));
      // A journaled append through the other handle (pending, then folded in the next event-loop turn).
      other.append(messageEntry("c", "a"));
      expect(mine.syncState?.()).toEqual({ count: 3, leafId: "c" });
      await nextTurn();
      expect(mine.syncState?.()).toEqual({ count: 3, leafId: "c" });
      other.setLeaf(null);
      expect(mine.syncState?.()).toEqual({ count: 3, leafId: null });
      expect(mine.syncState?.()).toEqual(separately(mine));
    } finally {
      await store.close();
    }
  });

  it("sees another connection's appends and leaf moves (a second store on the same files)", async () => {
    const dir = await stateDir();
    const store = await openSessionStore({ stateDir: dir });
    const second = await openSessionStore({ stateDir: dir });
    try {
      const mine = store.openTranscript("main", "s1", { header: header("s1") });
      mine.append(messageEntry("a", null));
      mine.append(messageEntry("b", "a"));
      await nextTurn();
      expect(mine.syncState?.()).toEqual({ count: 2, leafId: "b" });
      const theirs = second.openTranscript("main", "s1");
      theirs.setLeaf("a");
      expect(mine.syncState?.()).toEqual({ count: 2, leafId: "a" });
      theirs.append(messageEntry("c", "a"));
      await nextTurn();
      // Folded by the second store's group commit (or read through its fold before the read below).
      await second.flush();
      expect(mine.syncState?.()).toEqual({ count: 3, leafId: "c" });
      theirs.setLeaf("b");
      expect(mine.syncState?.()).toEqual({ count: 3, leafId: "b" });
      expect(mine.syncState?.()).toEqual(separately(mine));
    } finally {
      await second.close();
      await store.close();
    }
  });

  it("answers for a session not in the read cache as the two reads do", async () => {
    const dir = await stateDir();
    const store = await openSessionStore({ stateDir: dir });
    try {
      const mine = store.openTranscript("main", "s1", { header: header("s1") });
      mine.append(messageEntry("a", null));
      mine.append(messageEntry("b", "a"));
      mine.setLeaf("a");
      await nextTurn();
      clearTranscriptCache();
      const again = store.openTranscript("main", "s1");
      expect(again.syncState?.()).toEqual({ count: 2, leafId: "a" });
      expect(again.syncState?.()).toEqual(separately(again));
    } finally {
      await store.close();
    }
  });
});
