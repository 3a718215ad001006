// MemoryIndex and the memory tools over a real SQLite database (node:sqlite, FTS5) and real files: what one
// session wrote is found by another, a file edited by hand is found on the next search, nothing outside the
// memory files is read.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryIndex } from "./memory-index.ts";
import { memoryTools } from "./memory-tools.ts";

let root: string;
let workspace: string;
let dbPath: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "memory-"));
  workspace = join(root, "ws");
  mkdirSync(join(workspace, "memory"), { recursive: true });
  dbPath = join(root, "agent.sqlite");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("MemoryIndex", () => {
  it("finds in one session what another wrote, and a file edited by hand on the next search", () => {
    const first = new DatabaseSync(dbPath);
    writeFileSync(join(workspace, "MEMORY.md"), "# People\nAda prefers tea over coffee.\n");
    writeFileSync(
      join(workspace, "memory", "2026-11-27.md"),
      "# Decisions\nWe ship the gateway on Friday.\n",
    );
    expect(new MemoryIndex(first, workspace).sync().indexed).toEqual(["MEMORY.md", "memory/2026-11-27.md"]);
    first.close();

    const second = new DatabaseSync(dbPath); // another session, another connection
    const index = new MemoryIndex(second, workspace);
    expect(
      index.search("what does Ada drink? tea").map((hit) => [hit.path, hit.startLine, hit.endLine]),
    ).toEqual([["MEMORY.md", 1, 2]]);
    expect(index.search("shipping friday")[0]).toMatchObject({ path: "memory/2026-11-27.md", startLine: 1 });

    writeFileSync(join(workspace, "MEMORY.md"), "# People\nAda now drinks matcha.\n");
    utimesSync(join(workspace, "MEMORY.md"), new Date(), new Date(Date.now() + 5000));
    expect(index.search("tea")).toEqual([]);
    expect(index.search("matcha")[0]?.text).toContain("Ada now drinks matcha.");

    rmSync(join(workspace, "memory", "2026-11-27.md"));
    expect(index.search("friday")).toEqual([]);
    second.close();
  });

  it("reads only memory files inside the workspace; a query is words, never FTS syntax", () => {
    const outside = join(root, "secret.md");
    writeFileSync(outside, "the password is hunter2\n");
    symlinkSync(outside, join(workspace, "memory", "linked.md"));
    writeFileSync(join(workspace, "notes.md"), "hunter2 is not memory\n");
    const index = new MemoryIndex(new DatabaseSync(":memory:"), workspace);
    expect(index.search("hunter2")).toEqual([]);
    expect(() => index.get("../secret.md")).toThrow(/not a memory file/);
    expect(() => index.get("memory/linked.md")).toThrow(/no memory file/);
    expect(() => index.search('"unbalanced AND ( NEAR')).not.toThrow();
    expect(() => index.search("  ?! ")).toThrow(/no words/);
  });

  it("cuts long files into line-numbered chunks that memory_get reads back", () => {
    const lines = Array.from(
      { length: 300 },
      (_, i) => `line ${i + 1} about topic${i % 50 === 0 ? " zebra" : ""}`,
    );
    writeFileSync(join(workspace, "memory", "long.md"), lines.join("\n"));
    const index = new MemoryIndex(new DatabaseSync(":memory:"), workspace);
    const hits = index.search("zebra", 10);
    expect(hits.map((hit) => hit.text.match(/zebra/g)?.length ?? 0).reduce((a, b) => a + b, 0)).toBe(6);
    for (const hit of hits) {
      const read = index.get(hit.path, hit.startLine, hit.endLine - hit.startLine + 1);
      expect(read.text).toBe(hit.text);
      expect(hit.text).toContain("zebra");
    }
  });
});

describe("which files are memory", () => {
  it("MEMORY.md, USER.md and Markdown under memory/ at any depth; no dot-entries, no other files", () => {
    mkdirSync(join(workspace, "memory", "imports", "codex"), { recursive: true });
    mkdirSync(join(workspace, "memory", ".hidden"), { recursive: true });
    writeFileSync(join(workspace, "USER.md"), "Prefers short answers.\n");
    writeFileSync(join(workspace, "memory", "imports", "codex", "MEMORY.md"), "Imported: uses pnpm.\n");
    writeFileSync(join(workspace, "memory", ".hidden", "x.md"), "hidden\n");
    writeFileSync(join(workspace, "memory", "notes.txt"), "not markdown\n");
    const index = new MemoryIndex(new DatabaseSync(":memory:"), workspace);
    expect(index.files().map((file) => file.path)).toEqual(["USER.md", "memory/imports/codex/MEMORY.md"]);
    expect(index.search("pnpm")[0]?.path).toBe("memory/imports/codex/MEMORY.md");
    expect(index.get("memory/imports/codex/MEMORY.md").text).toBe("Imported: uses pnpm.\n");
    expect(index.get("USER.md").text).toBe("Prefers short answers.\n");
    for (const path of [
      "memory/.hidden/x.md",
      "memory/notes.txt",
      "memory/imports/../../USER.md",
      "memory\\x.md",
    ]) {
      expect(() => index.get(path)).toThrow(/not a memory file/);
    }
  });
});

describe("one database, several workspaces", () => {
  it("keeps each workspace's files apart, makes no table before the first search, and writes only on change", () => {
    const db = new DatabaseSync(":memory:");
    const other = join(root, "other");
    mkdirSync(other);
    writeFileSync(join(workspace, "MEMORY.md"), "kiwi lives here\n");
    writeFileSync(join(other, "MEMORY.md"), "mango lives there\n");
    const mine = new MemoryIndex(db, workspace);
    const theirs = new MemoryIndex(db, other);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'memory_%'").all()).toEqual([]);
    expect(mine.search("kiwi")).toHaveLength(1);
    expect(mine.search("mango")).toEqual([]);
    expect(theirs.search("mango")).toHaveLength(1);
    expect(theirs.search("kiwi")).toEqual([]);
    // Nothing changed since: the next sync re-reads nothing (and so opens no write transaction).
    expect(mine.sync()).toEqual({ indexed: [], removed: [] });
    const changes = db.prepare("SELECT total_changes() AS n").all()[0];
    mine.search("kiwi");
    expect(db.prepare("SELECT total_changes() AS n").all()[0]).toEqual(changes);
  });
});

describe("the memory tools", () => {
  it("memory_search returns paths and lines, memory_get the lines", async () => {
    writeFileSync(join(workspace, "MEMORY.md"), "Intro\nThe staging host is db-7.\n");
    const [search, get] = memoryTools(new MemoryIndex(new DatabaseSync(":memory:"), workspace));
    const found = await search?.execute(
      "c1",
      { query: "staging host" },
      undefined,
      undefined,
      undefined as never,
    );
    expect(found?.content[0]).toEqual({
      type: "text",
      text: "MEMORY.md#L1-L2\nIntro\nThe staging host is db-7.",
    });
    const read = await get?.execute(
      "c2",
      { path: "MEMORY.md", from: 2, lines: 1 },
      undefined,
      undefined,
      undefined as never,
    );
    expect(read?.content[0]).toEqual({ type: "text", text: "The staging host is db-7." });
  });
});
