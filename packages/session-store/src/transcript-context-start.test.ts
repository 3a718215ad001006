// The first read of a compacted session from where its context starts (transcript-context-start.ts): the
// same context as the read of the whole shape, whatever path stored the compaction (journaled appends, a
// batch, a crashed owner's journal replayed by the next opener), the leaf moved off the compaction's branch,
// a second compaction; the settings before the start recorded once and then read without the history.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { agentDatabasePath } from "./state-dir.ts";
import { StorageFailure } from "./storage-errors.ts";
import { openSessionStore, type SqliteSessionStore } from "./store.ts";
import { clearTranscriptCache } from "./transcript-cache.ts";
import { readTranscriptContext, type TranscriptContext } from "./transcript-context.ts";
import type { Transcript, TranscriptEntry } from "./transcript-types.ts";

const CHILD = join(import.meta.dirname, "..", "test", "child", "append-compaction-then-hang.ts");
const dirs: string[] = [];
const stores: SqliteSessionStore[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function newStore(
  dir?: string,
  appends?: "journal" | "commit",
): Promise<{ dir: string; store: SqliteSessionStore }> {
  const stateDir = dir ?? mkdtempSync(join(tmpdir(), "context-start-"));
  if (dir === undefined) dirs.push(stateDir);
  const store = await openSessionStore({ stateDir, ...(appends === undefined ? {} : { appends }) });
  stores.push(store);
  return { dir: stateDir, store };
}

const header = (id: string) => ({ type: "session" as const, version: 3, id, timestamp: "t", cwd: "/w" });
const entry = (
  id: string,
  parentId: string | null,
  type = "message",
  more: object = {},
): TranscriptEntry => ({
  type,
  id,
  parentId,
  timestamp: "2026-01-01T00:00:00.000Z",
  ...more,
});
const compaction = (id: string, parentId: string, kept: string) =>
  entry(id, parentId, "compaction", { summary: "s", firstKeptEntryId: kept, tokensBefore: 1 });

/** A thinking change, a model change, then messages e2 … e{n-1}: a chain. */
function chain(n: number): TranscriptEntry[] {
  const entries = [
    entry("e0", null, "thinking_level_change", { thinkingLevel: "high" }),
    entry("e1", "e0", "model_change", { provider: "p", modelId: "m" }),
  ];
  for (let index = 2; index < n; index++) entries.push(entry(`e${index}`, `e${index - 1}`));
  return entries;
}

/** A cold read (nothing of the session cached in this process). */
function coldRead(transcript: Transcript): TranscriptContext | undefined {
  clearTranscriptCache();
  return readTranscriptContext(transcript);
}

/** What the read of the whole shape gives: the cache loaded first, so the context start index is not used. */
function fullRead(transcript: Transcript): TranscriptContext | undefined {
  clearTranscriptCache();
  transcript.count();
  transcript.getEntries();
  return readTranscriptContext(transcript);
}

/** A context as plain data (the omitted arrays read). */
function plain(context: TranscriptContext | undefined) {
  if (context === undefined) return undefined;
  return {
    leafId: context.leafId,
    entries: context.entries.map((e) => e.id),
    omitted: {
      ids: [...context.omitted.ids],
      parentIds: [...context.omitted.parentIds],
      types: [...context.omitted.types],
    },
  };
}

describe("reading a compacted session from where its context starts", () => {
  it("gives the full read's context; the settings before the start are recorded at the compaction's append", async () => {
    const { store } = await newStore();
    const transcript = store.openTranscript("main", "s", { header: header("s") });
    // Journaled single appends: the read cache is current from the first on, so the compaction's append
    // records what the history holds before the start it keeps.
    for (const stored of [...chain(300), compaction("c1", "e299", "e250"), entry("t1", "c1")])
      transcript.append(stored);
    const context = coldRead(transcript);
    expect(context?.latestBefore).toBeDefined();
    expect(context?.entries.map((e) => e.id).slice(0, 2)).toEqual(["e250", "e251"]);
    expect(context?.entries.at(-1)?.id).toBe("t1");
    expect(context?.latestBefore?.("thinking_level_change")).toMatchObject({
      id: "e0",
      thinkingLevel: "high",
    });
    expect(context?.latestBefore?.("model_change")).toMatchObject({ id: "e1", modelId: "m" });
    expect(context?.latestBefore?.("message")).toBeUndefined();
    expect(plain(context)).toEqual(plain(fullRead(transcript)));
    expect(transcript.count()).toBe(302);
  });

  it("records the settings on the first read of the history when the compaction's append could not", async () => {
    // Committed batches: a journaled batch reads the session's shape to prove itself (and could record them).
    const { store } = await newStore(undefined, "commit");
    const transcript = store.openTranscript("main", "s", { header: header("s") });
    transcript.appendMany(chain(300));
    // Nothing of the session cached when the compaction is stored (as for a batch written by another process).
    clearTranscriptCache();
    transcript.appendMany([compaction("c1", "e299", "e250"), entry("t1", "c1")]);
    const first = coldRead(transcript);
    expect(first?.entries[0]?.id).toBe("e250");
    expect(first?.latestBefore?.("thinking_level_change")).toBeUndefined();
    expect(plain(first)).toEqual(plain(fullRead(transcript)));
    const second = coldRead(transcript);
    expect(second?.latestBefore?.("thinking_level_change")).toMatchObject({
      id: "e0",
      thinkingLevel: "high",
    });
    expect(second?.latestBefore?.("model_change")).toMatchObject({ id: "e1", modelId: "m" });
  });

  it("moves the start with a second compaction, and knows none before a start at the root", async () => {
    const { store } = await newStore();
    const transcript = store.openTranscript("main", "s", { header: header("s") });
    transcript.appendMany([...chain(100), compaction("c1", "e99", "e0"), entry("t1", "c1")]);
    const atRoot = coldRead(transcript);
    expect(atRoot?.entries[0]?.id).toBe("e0");
    expect(atRoot?.latestBefore?.("thinking_level_change")).toBeNull();
    transcript.appendMany([entry("t2", "t1"), compaction("c2", "t2", "e80"), entry("t3", "c2")]);
    const moved = coldRead(transcript);
    expect(moved?.latestBefore).toBeDefined();
    expect(moved?.entries[0]?.id).toBe("e80");
    expect(plain(moved)).toEqual(plain(fullRead(transcript)));
  });

  it("falls back to the full read when the leaf is on a branch without the latest compaction", async () => {
    const { store } = await newStore();
    const transcript = store.openTranscript("main", "s", { header: header("s") });
    transcript.appendMany([...chain(60), compaction("c1", "e59", "e40"), entry("t1", "c1")]);
    // A side branch from e30 with its own, older compaction; then the main branch's compaction is the latest.
    transcript.setLeaf("e30");
    transcript.appendMany([
      entry("side", "e30"),
      compaction("c-side", "side", "e20"),
      entry("side-2", "c-side"),
    ]);
    transcript.setLeaf("t1");
    transcript.appendMany([compaction("c2", "t1", "e50"), entry("t2", "c2")]);
    transcript.setLeaf("side-2");
    const side = coldRead(transcript);
    expect(side?.latestBefore).toBeUndefined();
    expect(side?.entries.map((e) => e.id)).toEqual([
      ...Array.from({ length: 11 }, (_u, i) => `e${20 + i}`),
      "side",
      "c-side",
      "side-2",
    ]);
    expect(plain(side)).toEqual(plain(fullRead(transcript)));
    transcript.setLeaf("e10");
    expect(plain(coldRead(transcript))).toEqual(plain(fullRead(transcript)));
    transcript.setLeaf("t2");
    const main = coldRead(transcript);
    expect(main?.latestBefore).toBeDefined();
    expect(main?.entries[0]?.id).toBe("e50");
    expect(plain(main)).toEqual(plain(fullRead(transcript)));
  });

  it("reads a compaction a killed owner left in its journal, once the next opener replays it", async () => {
    // The index exists before the crash: the replay's inserts must keep it right.
    const first = await newStore();
    const other = first.store.openTranscript("main", "other", { header: header("other") });
    other.appendMany([...chain(10), compaction("c0", "e9", "e5")]);
    expect(coldRead(other)?.latestBefore).toBeDefined();
    await first.store.close();
    stores.splice(0);

    const child = spawn(
      process.execPath,
      ["--conditions=@agent-kernel/source", CHILD, first.dir, "600", "50"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("appended")) resolve();
      });
      child.on("close", () => reject(new Error(`the child stopped before appending: ${stderr}`)));
    });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("close", resolve));

    const { store } = await newStore(first.dir);
    const transcript = store.openTranscript("main", "s1");
    const context = coldRead(transcript);
    // The agent database's opener replayed the dead child's journal: the compaction and the two after it.
    expect(store.recoveredAppends).toEqual([expect.objectContaining({ stored: 3, problems: [] })]);
    // The child recorded the settings before the kept entry when it appended the compaction.
    expect(context?.latestBefore?.("thinking_level_change")).toMatchObject({ id: "e0" });
    expect(context?.latestBefore).toBeDefined();
    expect(context?.entries.map((e) => e.id)).toEqual([
      ...Array.from({ length: 50 }, (_u, i) => `e${551 + i}`),
      "c1",
      "after-1",
      "after-2",
    ]);
    expect(plain(context)).toEqual(plain(fullRead(transcript)));
  }, 60_000);

  it("leaves a damaged row in the tail to the full read: set aside and reported, then read by the full path", async () => {
    const { dir, store } = await newStore();
    const transcript = store.openTranscript("main", "s", { header: header("s") });
    transcript.appendMany([...chain(40), compaction("c1", "e39", "e30"), entry("t1", "c1")]);
    const db = new Database(agentDatabasePath(dir, "main"));
    try {
      db.prepare(
        "UPDATE transcript_entries SET body = 'not json' WHERE session_id = 's' AND id = 'e35'",
      ).run();
    } finally {
      db.close();
    }
    clearTranscriptCache();
    expect(() => readTranscriptContext(transcript)).toThrow(StorageFailure);
    // Set aside (the leaf moved to its last good ancestor): the session's reads now take the full path.
    const after = coldRead(transcript);
    expect(after?.latestBefore).toBeUndefined();
    expect(after?.leafId).toBe("e34");
    expect(after?.entries.map((e) => e.id)).not.toContain("e35");
  });
});
