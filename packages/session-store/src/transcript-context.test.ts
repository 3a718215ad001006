import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionStore, type SqliteSessionStore } from "./store.ts";
import { clearTranscriptCache } from "./transcript-cache.ts";
import { readTranscriptContext } from "./transcript-context.ts";
import type { TranscriptEntry } from "./transcript-types.ts";

let stateDir: string;
let store: SqliteSessionStore;

beforeEach(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "transcript-context-"));
  store = await openSessionStore({ stateDir });
});
afterEach(async () => {
  await store.close();
  rmSync(stateDir, { recursive: true, force: true });
});

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

/** A chain e0 → … → e{n-1} with a thinking change first and a compaction keeping from `kept` at `at`. */
function chain(n: number, compaction?: { at: number; kept: string }): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [entry("e0", null, "thinking_level_change", { thinkingLevel: "high" })];
  for (let index = 1; index < n; index++) {
    const parent = `e${index - 1}`;
    entries.push(
      compaction?.at === index
        ? entry(`e${index}`, parent, "compaction", {
            summary: "s",
            firstKeptEntryId: compaction.kept,
            tokensBefore: 1,
          })
        : entry(`e${index}`, parent),
    );
  }
  return entries;
}

describe("readTranscriptContext (SQLite)", () => {
  it("splits the active branch at the first entry the latest compaction keeps, reading only that part", () => {
    const transcript = store.openTranscript("main", "s", { header: header("s") });
    transcript.appendMany(chain(1000, { at: 900, kept: "e850" }));
    clearTranscriptCache();
    const context = readTranscriptContext(transcript);
    expect(context?.leafId).toBe("e999");
    expect(context?.entries.map((e) => e.id)).toEqual(Array.from({ length: 150 }, (_u, i) => `e${850 + i}`));
    expect(context?.omitted.ids).toHaveLength(850);
    expect(context?.omitted.types[0]).toBe("thinking_level_change");
    expect(context?.omitted.parentIds[1]).toBe("e0");
  });

  it("starts at the compaction when what it keeps is not on the branch, and at the root without one", () => {
    const transcript = store.openTranscript("main", "s", { header: header("s") });
    transcript.appendMany(chain(20, { at: 10, kept: "nowhere" }));
    expect(readTranscriptContext(transcript)?.entries[0]?.id).toBe("e10");
    const plain = store.openTranscript("main", "p", { header: header("p") });
    plain.appendMany(chain(20));
    expect(readTranscriptContext(plain)?.entries).toHaveLength(20);
    expect(readTranscriptContext(plain)?.omitted.ids).toHaveLength(0);
  });

  it("follows the stored leaf: a branch without the compaction is read whole; appends are seen at once", () => {
    const transcript = store.openTranscript("main", "s", { header: header("s") });
    transcript.appendMany(chain(30, { at: 20, kept: "e15" }));
    expect(readTranscriptContext(transcript)?.entries[0]?.id).toBe("e15");
    transcript.setLeaf("e5");
    transcript.append(entry("side", "e5"));
    const context = readTranscriptContext(transcript);
    expect(context?.leafId).toBe("side");
    expect(context?.entries.map((e) => e.id)).toEqual(["e0", "e1", "e2", "e3", "e4", "e5", "side"]);
    transcript.setLeaf(null);
    expect(readTranscriptContext(transcript)).toEqual({
      leafId: null,
      entries: [],
      omitted: { ids: [], parentIds: [], types: [] },
    });
  });

  it("is undefined for something that is not a store transcript", () => {
    expect(readTranscriptContext({})).toBeUndefined();
  });
});
