import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionStore } from "./store.ts";
import { header, messageEntry } from "./testing/conformance.ts";
import { clearTranscriptCache, configureTranscriptCache, transcriptCache } from "./transcript-cache.ts";

const dirs: string[] = [];
async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "transcript-cache-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  configureTranscriptCache({ maxContextEntries: 100_000 });
  clearTranscriptCache();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ids = (entries: readonly { id: string }[]) => entries.map((entry) => entry.id);

describe("the transcript read cache", () => {
  it("hands out deep-frozen entries, so a caller cannot corrupt what the next reader gets", async () => {
    const store = await openSessionStore({ stateDir: await stateDir() });
    try {
      const t = store.openTranscript("main", "s1", { header: header("s1") });
      t.append(messageEntry("a", null, "original"));
      const [entry] = t.getBranch();
      expect(Object.isFrozen(entry)).toBe(true);
      const message = entry?.message as { content: { text: string }[] };
      expect(() => {
        (message.content[0] as { text: string }).text = "corrupted";
      }).toThrow(TypeError);
      expect(() => {
        message.content.push({ text: "more" });
      }).toThrow(TypeError);
      expect(t.getEntry("a")).toEqual(messageEntry("a", null, "original"));
      // The same objects come back on a repeated read: nothing was parsed again.
      expect(t.getBranch()[0]).toBe(entry);
    } finally {
      await store.close();
    }
  });

  it("reads a new session without missing rows another connection appends between other sessions' rows", async () => {
    const dir = await stateDir();
    const reader = await openSessionStore({ stateDir: dir });
    const writer = await openSessionStore({ stateDir: dir });
    try {
      // Other sessions fill the table first: the new session's reads start from the table's last seq.
      for (const session of ["o1", "o2"]) {
        const other = writer.openTranscript("main", session, { header: header(session) });
        other.append(messageEntry(`${session}-a`, null));
        other.append(messageEntry(`${session}-b`, `${session}-a`));
      }
      const mine = reader.openTranscript("main", "s1", { header: header("s1") });
      expect(mine.getEntries()).toEqual([]);
      const theirs = writer.openTranscript("main", "s1");
      const noise = writer.openTranscript("main", "o1");
      theirs.append(messageEntry("a", null));
      noise.append(messageEntry("o1-c", "o1-b"));
      theirs.append(messageEntry("b", "a"));
      expect(ids(mine.getEntries())).toEqual(["a", "b"]);
      mine.append(messageEntry("c", "b"));
      noise.append(messageEntry("o1-d", "o1-c"));
      theirs.append(messageEntry("d", "c"));
      expect(ids(mine.getBranch())).toEqual(["a", "b", "c", "d"]);
      expect(mine.count()).toBe(4);
      expect(ids(reader.openTranscript("main", "o1").getBranch())).toEqual(["o1-a", "o1-b", "o1-c", "o1-d"]);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it("sees what another connection to the same file appended and where it moved the leaf", async () => {
    const dir = await stateDir();
    const reader = await openSessionStore({ stateDir: dir });
    const writer = await openSessionStore({ stateDir: dir });
    try {
      const mine = reader.openTranscript("main", "s1", { header: header("s1") });
      mine.append(messageEntry("a", null));
      expect(ids(mine.getBranch())).toEqual(["a"]);
      const theirs = writer.openTranscript("main", "s1");
      theirs.append(messageEntry("b", "a"));
      theirs.append(messageEntry("c", "a"));
      expect(mine.getLeafId()).toBe("c");
      expect(ids(mine.getBranch())).toEqual(["a", "c"]);
      theirs.setLeaf("b");
      expect(ids(mine.getBranch())).toEqual(["a", "b"]);
      expect(ids(mine.getChildren("a"))).toEqual(["b", "c"]);
      expect(mine.count()).toBe(3);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it("adds this process's own appends without reading them back, and never misses another connection's", async () => {
    const dir = await stateDir();
    const mineStore = await openSessionStore({ stateDir: dir });
    const theirStore = await openSessionStore({ stateDir: dir });
    try {
      const mine = mineStore.openTranscript("main", "s1", { header: header("s1") });
      mine.append(messageEntry("a", null));
      expect(ids(mine.getBranch())).toEqual(["a"]);
      // recorded from the append itself: the caller's object can change afterwards, the stored entry cannot
      const b = messageEntry("b", "a", "as stored");
      mine.append(b);
      (b.message as { content: { text: string }[] }).content[0] = { text: "changed by the caller" } as never;
      expect(mine.getEntry("b")).toEqual(messageEntry("b", "a", "as stored"));
      expect(Object.isFrozen(mine.getEntry("b"))).toBe(true);
      // another connection commits between this process's appends
      const theirs = theirStore.openTranscript("main", "s1");
      theirs.append(messageEntry("c", "b"));
      mine.appendMany([messageEntry("d", "c"), messageEntry("e", "d")]);
      expect(ids(mine.getBranch())).toEqual(["a", "b", "c", "d", "e"]);
      expect(mine.count()).toBe(5);
      // and after this process's appends were recorded again (no foreign commit in between)
      mine.append(messageEntry("f", "e"));
      theirs.append(messageEntry("g", "f"));
      expect(mine.getLeafId()).toBe("g");
      expect(ids(mine.getBranch())).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
      expect(ids(theirs.getBranch())).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
      // a refused batch adds nothing, to the store or the cache
      expect(() => mine.appendMany([messageEntry("h", "g"), messageEntry("i", "missing-parent")])).toThrow(
        /parent missing-parent does not exist/,
      );
      expect(mine.count()).toBe(7);
      expect(mine.getEntry("h")).toBeUndefined();
      // the leaf moved by this process is read, not assumed
      mine.setLeaf("c");
      expect(ids(mine.getBranch())).toEqual(["a", "b", "c"]);
      mine.append(messageEntry("j", "c"));
      expect(ids(mine.getBranch())).toEqual(["a", "b", "c", "j"]);
      expect(ids(theirs.getBranch())).toEqual(["a", "b", "c", "j"]);
    } finally {
      await theirStore.close();
      await mineStore.close();
    }
  });

  it("starts cold for a different file at the same path", async () => {
    const dir = await stateDir();
    const first = await openSessionStore({ stateDir: dir });
    first
      .openTranscript("main", "s1", { header: header("s1") })
      .append(messageEntry("a", null, "first file"));
    const path = first.agentDatabasePath("main");
    await first.close();
    rmSync(path, { force: true });
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
    const second = await openSessionStore({ stateDir: dir });
    try {
      const t = second.openTranscript("main", "s1", { header: header("s1") });
      t.append(messageEntry("a", null, "second file"));
      expect(t.getEntry("a")).toEqual(messageEntry("a", null, "second file"));
    } finally {
      await second.close();
    }
  });

  it("keeps within its bound of context entries by dropping the least recently read sessions, and reads stay correct", async () => {
    const store = await openSessionStore({ stateDir: await stateDir() });
    try {
      const one = store.openTranscript("main", "s1", { header: header("s1") });
      const two = store.openTranscript("main", "s2", { header: header("s2") });
      for (let index = 0; index < 20; index++) {
        one.append(messageEntry(`a${index}`, index === 0 ? null : `a${index - 1}`));
        two.append(messageEntry(`b${index}`, index === 0 ? null : `b${index - 1}`));
      }
      clearTranscriptCache();
      one.getBranch();
      // a linear session's context is its whole branch
      expect(transcriptCache.stats.contextEntries).toBe(20);
      configureTranscriptCache({ maxContextEntries: 25 });
      two.getBranch();
      expect(transcriptCache.stats.sessions).toBe(1);
      expect(transcriptCache.stats.contextEntries).toBe(20);
      expect(one.getBranch()).toHaveLength(20);
      expect(two.getEntries()).toHaveLength(20);
      configureTranscriptCache({ maxContextEntries: 0 });
      expect(transcriptCache.stats).toMatchObject({ sessions: 0, contextEntries: 0 });
      expect(ids(one.getBranch()).slice(-2)).toEqual(["a18", "a19"]);
      expect(transcriptCache.stats.sessions).toBe(0);
      expect(() => configureTranscriptCache({ maxContextEntries: -1 })).toThrow(/non-negative/);
    } finally {
      await store.close();
    }
  });

  it("sizes a session by the entries of its model context: a compacted long session stays, a linear one of the same length does not", async () => {
    const store = await openSessionStore({ stateDir: await stateDir() });
    try {
      // 200 entries, a compaction keeping the last 10 of them, then 5 more: a context of 10 + 1 + 5 entries.
      const compacted = store.openTranscript("main", "compacted", { header: header("compacted") });
      const linear = store.openTranscript("main", "linear", { header: header("linear") });
      const history = Array.from({ length: 200 }, (_, index) =>
        messageEntry(`c${index}`, index === 0 ? null : `c${index - 1}`),
      );
      compacted.appendMany([
        ...history,
        {
          type: "compaction",
          id: "mark",
          parentId: "c199",
          timestamp: "2026-01-01T00:00:00.000Z",
          summary: "what came before",
          firstKeptEntryId: "c190",
          tokensBefore: 1,
        },
        ...Array.from({ length: 5 }, (_, index) =>
          messageEntry(`t${index}`, index === 0 ? "mark" : `t${index - 1}`),
        ),
      ]);
      linear.appendMany(
        Array.from({ length: 206 }, (_, index) =>
          messageEntry(`l${index}`, index === 0 ? null : `l${index - 1}`),
        ),
      );
      clearTranscriptCache();
      expect(compacted.getBranch()).toHaveLength(206);
      // 16 entries in context, the 190 before them known by their shape: a sixteenth each (12)
      expect(transcriptCache.stats.contextEntries).toBe(16 + 12);
      configureTranscriptCache({ maxContextEntries: 100 });
      expect(linear.getBranch()).toHaveLength(206);
      // the linear session weighs its 206 entries: over the bound on its own, it is not kept
      expect(transcriptCache.stats).toMatchObject({ sessions: 1, contextEntries: 28 });
      // the compacted session is still cached: reading it again parses nothing (the same objects)
      const [first] = compacted.getBranch();
      expect(compacted.getBranch()[0]).toBe(first);
      // its context grows with appends, its history does not count more
      compacted.append(messageEntry("t5", "t4"));
      compacted.getBranch();
      expect(transcriptCache.stats.contextEntries).toBe(17 + 12);
    } finally {
      await store.close();
    }
  });
});

describe("migration 4 (the leaf derived from the last append)", () => {
  it("touches one table and one index per append: no leaf write, no parent or seq index", async () => {
    const store = await openSessionStore({ stateDir: await stateDir() });
    const path = store.agentDatabasePath("main");
    try {
      const t = store.openTranscript("main", "s1", { header: header("s1") });
      t.append(messageEntry("a", null));
      t.append(messageEntry("b", "a"));
      const db = new Database(path, { readonly: true });
      try {
        const indexes = db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'transcript_entries'")
          .pluck()
          .all();
        expect(indexes).toEqual(["sqlite_autoindex_transcript_entries_1"]);
        // Appends leave the transcript row alone; the leaf is derived from the last entry.
        expect(db.prepare("SELECT leaf_id, leaf_seq FROM transcripts").get()).toEqual({
          leaf_id: null,
          leaf_seq: null,
        });
      } finally {
        db.close();
      }
      expect(t.getLeafId()).toBe("b");
    } finally {
      await store.close();
    }
  });
});
