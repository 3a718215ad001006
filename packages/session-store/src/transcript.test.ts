// The SQLite transcript's fast paths: an append whose parent this process already knows to be stored takes a
// plain insert (no parent lookup in SQL), and every append rule still holds on it and around it; the first
// read of a session in a process takes one range scan when the session's rows are mostly contiguous, or the
// index otherwise, and both give what a warm read gives.
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { TranscriptConflictError } from "./errors.ts";
import { openSessionStore } from "./store.ts";
import { header, messageEntry } from "./testing/conformance.ts";
import type { Transcript, TranscriptEntry } from "./transcript.ts";
import { clearTranscriptCache } from "./transcript-cache.ts";

const dirs: string[] = [];
async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "transcript-append-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  clearTranscriptCache();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ids = (entries: readonly { id: string }[]) => entries.map((entry) => entry.id);

describe("the first read of a session in this process", () => {
  it("gives the same tree whether the session's rows are contiguous or spread among other sessions", async () => {
    const store = await openSessionStore({ stateDir: await stateDir() });
    try {
      // "dense": 40 rows in a row, then a few of others; "sparse": one row in four, among three others.
      const open = (id: string) => store.openTranscript("main", id, { header: header(id) });
      const appended: Record<string, TranscriptEntry[]> = { dense: [], sparse: [] };
      const add = (t: Transcript, entry: TranscriptEntry) => {
        t.append(entry);
        appended[t.sessionId]?.push(entry);
      };
      const dense = open("dense");
      const others = ["o1", "o2", "o3"].map(open);
      for (let i = 0; i < 40; i++) add(dense, messageEntry(`d${i}`, i === 0 ? null : `d${i - 1}`));
      const sparse = open("sparse");
      for (let i = 0; i < 40; i++) {
        add(sparse, messageEntry(`s${i}`, i === 0 ? null : i % 10 === 0 ? "s0" : `s${i - 1}`));
        others.forEach((other, o) => {
          add(other, messageEntry(`o${o}-${i}`, i === 0 ? null : `o${o}-${i - 1}`));
        });
      }
      sparse.setLeaf("s25");
      // The model: every entry in append order, and the branch by walking parents from the leaf.
      const branchOf = (entries: readonly TranscriptEntry[], leaf: string) => {
        const byId = new Map(entries.map((entry) => [entry.id, entry]));
        const branch: TranscriptEntry[] = [];
        for (let at = byId.get(leaf); at !== undefined; at = byId.get(at.parentId ?? "")) branch.unshift(at);
        return branch;
      };
      const expected = {
        dense: { entries: appended.dense ?? [], leaf: "d39" },
        sparse: { entries: appended.sparse ?? [], leaf: "s25" },
      };
      for (const sessionId of ["dense", "sparse"] as const) {
        const { entries, leaf } = expected[sessionId];
        const branch = branchOf(entries, leaf);
        const children = entries.filter((entry) => entry.parentId === `${sessionId[0]}0`);
        for (const firstCall of ["getBranch", "getEntries", "count", "getEntry"] as const) {
          clearTranscriptCache();
          const t = store.openTranscript("main", sessionId);
          if (firstCall === "getBranch") expect(t.getBranch()).toEqual(branch);
          if (firstCall === "getEntries") expect(t.getEntries()).toEqual(entries);
          if (firstCall === "count") expect(t.count()).toBe(40);
          if (firstCall === "getEntry") expect(t.getEntry(`${sessionId[0]}7`)).toEqual(entries[7]);
          expect(t.getEntries()).toEqual(entries);
          expect(t.getBranch()).toEqual(branch);
          expect(t.getLeafId()).toBe(leaf);
          expect(t.getChildren(`${sessionId[0]}0`)).toEqual(children);
        }
      }
      // Rows appended after a cold read are found by the next read.
      clearTranscriptCache();
      const reread = store.openTranscript("main", "dense");
      expect(reread.count()).toBe(40);
      others[0]?.append(messageEntry("o0-late", "o0-39"));
      dense.append(messageEntry("d40", "d39"));
      expect(ids(reread.getBranch()).slice(-2)).toEqual(["d39", "d40"]);
    } finally {
      await store.close();
    }
  });
});

describe("appending to a SQLite transcript", () => {
  it("keeps the duplicate and conflict rules when the parent is the entry appended just before", async () => {
    const store = await openSessionStore({ stateDir: await stateDir() });
    try {
      const t = store.openTranscript("main", "s1", { header: header("s1") });
      t.append(messageEntry("a", null));
      t.append(messageEntry("b", "a"));
      // An identical repeat is a no-op that moves the leaf; different content under the same id throws.
      t.append(messageEntry("b", "a"));
      expect(() => t.append(messageEntry("b", "a", "something else"))).toThrow(TranscriptConflictError);
      expect(() => t.append(messageEntry("c", "missing"))).toThrow(/parent missing does not exist/);
      expect(ids(t.getBranch())).toEqual(["a", "b"]);
      expect(t.count()).toBe(2);
    } finally {
      await store.close();
    }
  });

  it("never takes an id from a batch that rolled back as a known parent", async () => {
    const store = await openSessionStore({ stateDir: await stateDir() });
    try {
      const t = store.openTranscript("main", "s1", { header: header("s1") });
      expect(() =>
        t.appendMany([messageEntry("a", null), messageEntry("b", "a"), messageEntry("c", "missing")]),
      ).toThrow(TranscriptConflictError);
      expect(t.count()).toBe(0);
      expect(() => t.append(messageEntry("d", "b"))).toThrow(/parent b does not exist/);
      expect(() => t.append(messageEntry("d", "a"))).toThrow(/parent a does not exist/);
      expect(t.count()).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("checks in SQL a parent this process has not seen, appended by another connection", async () => {
    const dir = await stateDir();
    const writer = await openSessionStore({ stateDir: dir });
    const other = await openSessionStore({ stateDir: dir });
    try {
      writer.openTranscript("main", "s1", { header: header("s1") }).append(messageEntry("a", null));
      clearTranscriptCache();
      const t = other.openTranscript("main", "s1");
      t.append(messageEntry("b", "a"));
      expect(() => t.append(messageEntry("c", "nowhere"))).toThrow(TranscriptConflictError);
      expect(ids(writer.openTranscript("main", "s1").getBranch())).toEqual(["a", "b"]);
    } finally {
      await other.close();
      await writer.close();
    }
  });

  it("stores any sequence of appends, by any handle, exactly as a model of the tree says", async () => {
    const store = await openSessionStore({ stateDir: await stateDir() });
    let session = 0;
    try {
      await fc.assert(
        fc.property(
          fc.array(
            fc.record({
              // Which earlier entry is the parent (-1: none; past the end: an id that does not exist).
              parent: fc.integer({ min: -1, max: 12 }),
              handle: fc.integer({ min: 0, max: 2 }),
              read: fc.boolean(),
              batch: fc.boolean(),
            }),
            { maxLength: 12 },
          ),
          (steps) => {
            const sessionId = `p${session++}`;
            const handles = [0, 1, 2].map(() =>
              store.openTranscript("main", sessionId, { header: header(sessionId) }),
            );
            const stored: string[] = [];
            steps.forEach((step, index) => {
              const handle = handles[step.handle] ?? handles[0];
              if (handle === undefined) return;
              const parentId = step.parent < 0 ? null : (stored[step.parent] ?? `ghost-${index}`);
              const entry = messageEntry(`e${index}`, parentId);
              const append = () => (step.batch ? handle.appendMany([entry]) : handle.append(entry));
              if (parentId === null || stored.includes(parentId)) {
                append();
                stored.push(entry.id);
              } else {
                expect(append).toThrow(TranscriptConflictError);
              }
              if (step.read) handle.getBranch();
            });
            for (const handle of handles) expect(ids(handle.getEntries())).toEqual(stored);
          },
        ),
        { numRuns: 60 },
      );
    } finally {
      await store.close();
    }
  });
});
