// Full-text search over an agent's memory files — `MEMORY.md`, `USER.md` and the Markdown files under
// `memory/` in its workspace, OpenClaw's layout — through an SQLite FTS5 table in a database the caller hands
// over (the agent's database: no second search engine). The tables are made on the first search (nothing is
// written to the database before a memory tool runs) and their rows name the workspace they index, so
// workspaces sharing one agent database (sandbox workspaces per session) never see each other's files.
// Owns: which files count as memory (regular files inside the workspace, no link leaving it, at most
// MAX_FILE_BYTES each and MAX_FILES in all), keeping the index in step with them (each search first re-reads
// the files whose size or modification time changed and drops the ones gone, so a file edited by hand is
// found on the next turn; nothing changed, nothing written), cutting files into line-numbered chunks, the
// query's words (quoted: a chat message is never FTS5 syntax) and reading lines back. Does not own: the
// tools' wording (memory-tools.ts) nor which database (session-store's memoryDatabaseFor).
import { type Dirent, lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { MemoryDatabase } from "@agent-kernel/session-store";

export type { MemoryDatabase };

/** One search hit: where it is and the lines that matched. */
export interface MemoryHit {
  /** Relative to the workspace: `MEMORY.md` or `memory/<name>.md`. */
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly text: string;
  /** FTS5's bm25 (lower is better). */
  readonly score: number;
}

/** A memory file is read only up to this size; larger ones are indexed up to it. */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;
/** At most this many memory files are indexed (MEMORY.md first, then memory/*.md by name). */
export const MAX_FILES = 500;
/** How many folders deep under memory/ files are looked for. */
const MAX_DEPTH = 8;
/** A chunk holds whole lines up to about this many characters. */
const CHUNK_CHARS = 1200;

/** The memory files of one workspace, indexed in `db` (tables memory_files and memory_chunks). */
export class MemoryIndex {
  readonly #db: MemoryDatabase;
  readonly #workspaceDir: string;
  /** The workspace as its rows name it. */
  readonly #root: string;
  #ready = false;

  constructor(db: MemoryDatabase, workspaceDir: string) {
    this.#db = db;
    this.#workspaceDir = workspaceDir;
    this.#root = resolve(workspaceDir);
  }

  /** The tables, made once per index (idempotent: another index or process may have made them). */
  #ensureTables(): void {
    if (this.#ready) return;
    this.#db.exec(`CREATE TABLE IF NOT EXISTS memory_files (
      root TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL, mtime_ms INTEGER NOT NULL,
      PRIMARY KEY (root, path))`);
    this.#db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS memory_chunks USING fts5(
      text, root UNINDEXED, path UNINDEXED, start_line UNINDEXED, end_line UNINDEXED,
      tokenize = 'porter unicode61')`);
    this.#ready = true;
  }

  /**
   * The memory files now, relative to the workspace, with their size and modification time: MEMORY.md,
   * USER.md, then the Markdown files under memory/ (recursively, as OpenClaw; links to directories and
   * dot-entries skipped, at most MAX_DEPTH folders deep), by path.
   */
  files(): { path: string; size: number; mtimeMs: number }[] {
    const found: { path: string; size: number; mtimeMs: number }[] = [];
    const consider = (rel: string) => {
      const stats = this.#regularInside(rel);
      if (stats !== undefined && found.length < MAX_FILES) found.push({ path: rel, ...stats });
    };
    consider("MEMORY.md");
    consider("USER.md");
    for (const rel of this.#markdownUnder("memory", 0).sort()) consider(rel);
    return found;
  }

  /** The `.md` files under the folder `rel` (no link to a folder followed), relative to the workspace. */
  #markdownUnder(rel: string, depth: number): string[] {
    let entries: Dirent[];
    try {
      const dir = join(this.#workspaceDir, rel);
      if (!lstatSync(dir).isDirectory()) return [];
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
    const out: string[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue;
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory() && depth < MAX_DEPTH) out.push(...this.#markdownUnder(child, depth + 1));
      else if (!entry.isDirectory() && entry.name.endsWith(".md")) out.push(child);
      if (out.length >= MAX_FILES) break;
    }
    return out;
  }

  /** Brings the index in step with the files; returns what it re-read and what it dropped. */
  sync(): { indexed: string[]; removed: string[] } {
    this.#ensureTables();
    const current = this.files();
    const known = new Map(
      (
        this.#db.prepare("SELECT path, size, mtime_ms FROM memory_files WHERE root = ?").all(this.#root) as {
          path: string;
          size: number;
          mtime_ms: number;
        }[]
      ).map((row) => [row.path, row]),
    );
    const changed = current.filter((file) => {
      const before = known.get(file.path);
      known.delete(file.path);
      return !(
        before !== undefined &&
        Number(before.size) === file.size &&
        Number(before.mtime_ms) === Math.trunc(file.mtimeMs)
      );
    });
    const removed = [...known.keys()];
    // Nothing changed (the usual search): no write transaction, so a search takes no lock.
    if (changed.length === 0 && removed.length === 0) return { indexed: [], removed: [] };
    const deleteChunks = this.#db.prepare("DELETE FROM memory_chunks WHERE root = ? AND path = ?");
    const insertChunk = this.#db.prepare(
      "INSERT INTO memory_chunks (text, root, path, start_line, end_line) VALUES (?, ?, ?, ?, ?)",
    );
    const upsertFile = this.#db.prepare(
      "INSERT INTO memory_files (root, path, size, mtime_ms) VALUES (?, ?, ?, ?) ON CONFLICT(root, path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms",
    );
    const deleteFile = this.#db.prepare("DELETE FROM memory_files WHERE root = ? AND path = ?");
    // IMMEDIATE: the write lock up front (waiting out another writer through the busy timeout) rather than a
    // read transaction that fails when it upgrades.
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      for (const file of changed) {
        deleteChunks.run(this.#root, file.path);
        for (const chunk of chunks(this.#read(file.path))) {
          insertChunk.run(chunk.text, this.#root, file.path, chunk.startLine, chunk.endLine);
        }
        upsertFile.run(this.#root, file.path, file.size, Math.trunc(file.mtimeMs));
      }
      for (const gone of removed) {
        deleteChunks.run(this.#root, gone);
        deleteFile.run(this.#root, gone);
      }
      this.#db.exec("COMMIT");
    } catch (error) {
      this.#db.exec("ROLLBACK");
      throw error;
    }
    return { indexed: changed.map((file) => file.path), removed };
  }

  /** The best chunks for `query` (its words, any of them), best first; the index is synced first. */
  search(query: string, limit = 6): MemoryHit[] {
    const words = query.match(/[\p{L}\p{N}_]+/gu) ?? [];
    if (words.length === 0) throw new Error("memory_search: the query has no words to search for");
    this.sync();
    const match = [...new Set(words.map((word) => word.toLowerCase()))]
      .slice(0, 32)
      .map((word) => `"${word}"`)
      .join(" OR ");
    const rows = this.#db
      .prepare(
        "SELECT path, start_line, end_line, text, bm25(memory_chunks) AS score FROM memory_chunks WHERE memory_chunks MATCH ? AND root = ? ORDER BY score LIMIT ?",
      )
      .all(match, this.#root, Math.max(1, Math.min(50, Math.trunc(limit)))) as {
      path: string;
      start_line: number;
      end_line: number;
      text: string;
      score: number;
    }[];
    return rows.map((row) => ({
      path: row.path,
      startLine: Number(row.start_line),
      endLine: Number(row.end_line),
      text: row.text,
      score: row.score,
    }));
  }

  /** Lines `from`.. (1-based) of a memory file, at most `lines` of them; only memory files are read. */
  get(path: string, from = 1, lines = 200): { path: string; from: number; to: number; text: string } {
    const rel = path.replace(/^\.\//, "");
    if (!isMemoryPath(rel)) {
      throw new Error(
        `memory_get: ${JSON.stringify(path)} is not a memory file (MEMORY.md, USER.md or memory/<name>.md)`,
      );
    }
    if (this.#regularInside(rel) === undefined) throw new Error(`memory_get: no memory file ${rel}`);
    const all = this.#read(rel).split("\n");
    const start = Math.max(1, Math.trunc(from));
    const end = Math.min(all.length, start + Math.max(1, Math.min(2000, Math.trunc(lines))) - 1);
    return { path: rel, from: start, to: end, text: all.slice(start - 1, end).join("\n") };
  }

  /** A regular file inside the workspace (a link only when its target stays inside), or undefined. */
  #regularInside(rel: string): { size: number; mtimeMs: number } | undefined {
    const path = join(this.#workspaceDir, rel);
    try {
      const real = realpathSync(path);
      const inside = relative(realpathSync(this.#workspaceDir), real);
      if (inside === "" || inside.startsWith(`..${sep}`) || inside === ".." || isAbsolute(inside))
        return undefined;
      const stats = lstatSync(real);
      return stats.isFile() ? { size: stats.size, mtimeMs: stats.mtimeMs } : undefined;
    } catch {
      return undefined;
    }
  }

  #read(rel: string): string {
    const text = readFileSync(realpathSync(join(this.#workspaceDir, rel)));
    return text.subarray(0, MAX_FILE_BYTES).toString("utf8");
  }
}

/** MEMORY.md, USER.md or a Markdown file below memory/, named without `.`/`..` segments or backslashes. */
function isMemoryPath(rel: string): boolean {
  if (rel === "MEMORY.md" || rel === "USER.md") return true;
  const segments = rel.split("/");
  return (
    segments.length >= 2 &&
    segments.length <= MAX_DEPTH + 2 &&
    segments[0] === "memory" &&
    rel.endsWith(".md") &&
    !rel.includes("\\") &&
    segments.every((segment) => segment !== "" && !segment.startsWith("."))
  );
}

/** Whole lines grouped up to CHUNK_CHARS, a heading starting a new chunk; blank-only chunks dropped. */
function chunks(text: string): { text: string; startLine: number; endLine: number }[] {
  const out: { text: string; startLine: number; endLine: number }[] = [];
  const all = text.split("\n");
  if (all.length > 1 && all.at(-1) === "") all.pop(); // the final newline ends the last line, it starts none
  let lines: string[] = [];
  let size = 0;
  let start = 1;
  const flush = (end: number) => {
    const joined = lines.join("\n");
    if (joined.trim() !== "") out.push({ text: joined, startLine: start, endLine: end });
    lines = [];
    size = 0;
  };
  all.forEach((line, index) => {
    const number = index + 1;
    if (lines.length > 0 && (/^#{1,6}\s/.test(line) || size + line.length > CHUNK_CHARS)) flush(number - 1);
    if (lines.length === 0) start = number;
    lines.push(line);
    size += line.length + 1;
  });
  flush(all.length);
  return out;
}
