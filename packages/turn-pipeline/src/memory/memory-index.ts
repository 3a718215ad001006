// Full-text search over an agent's memory files — `MEMORY.md` and `memory/*.md` in its workspace, OpenClaw's
// layout — through an SQLite FTS5 table in a database the caller hands over (the agent's database: no second
// search engine). Owns: which files count as memory (regular files inside the workspace, no link leaving it,
// at most MAX_FILE_BYTES each and MAX_FILES in all), keeping the index in step with them (each search first
// re-reads the files whose size or modification time changed and drops the ones gone, so a file edited by
// hand is found on the next turn), cutting files into line-numbered chunks, the query's words (quoted: a
// chat message is never FTS5 syntax) and reading lines back. Does not own: the tools' wording (memory-tools.ts)
// nor which database (the session store's owner opens it).
import { lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";

/** The part of an SQLite connection the index uses (better-sqlite3 and node:sqlite both have it). */
export interface MemoryDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): {
    run(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  };
}

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
/** A chunk holds whole lines up to about this many characters. */
const CHUNK_CHARS = 1200;

/** The memory files of one workspace, indexed in `db` (tables memory_files and memory_chunks). */
export class MemoryIndex {
  readonly #db: MemoryDatabase;
  readonly #workspaceDir: string;

  constructor(db: MemoryDatabase, workspaceDir: string) {
    this.#db = db;
    this.#workspaceDir = workspaceDir;
    db.exec(`CREATE TABLE IF NOT EXISTS memory_files (
      path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ms INTEGER NOT NULL)`);
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS memory_chunks USING fts5(
      text, path UNINDEXED, start_line UNINDEXED, end_line UNINDEXED, tokenize = 'porter unicode61')`);
  }

  /** The memory files now, relative to the workspace, with their size and modification time. */
  files(): { path: string; size: number; mtimeMs: number }[] {
    const found: { path: string; size: number; mtimeMs: number }[] = [];
    const consider = (rel: string) => {
      const stats = this.#regularInside(rel);
      if (stats !== undefined && found.length < MAX_FILES) found.push({ path: rel, ...stats });
    };
    consider("MEMORY.md");
    let names: string[] = [];
    try {
      const dir = join(this.#workspaceDir, "memory");
      if (lstatSync(dir).isDirectory()) names = readdirSync(dir).filter((name) => name.endsWith(".md"));
    } catch {
      names = [];
    }
    for (const name of names.sort()) consider(`memory/${name}`);
    return found;
  }

  /** Brings the index in step with the files; returns what it re-read and what it dropped. */
  sync(): { indexed: string[]; removed: string[] } {
    const current = this.files();
    const known = new Map(
      (
        this.#db.prepare("SELECT path, size, mtime_ms FROM memory_files").all() as {
          path: string;
          size: number;
          mtime_ms: number;
        }[]
      ).map((row) => [row.path, row]),
    );
    const indexed: string[] = [];
    const removed: string[] = [];
    const deleteChunks = this.#db.prepare("DELETE FROM memory_chunks WHERE path = ?");
    const insertChunk = this.#db.prepare(
      "INSERT INTO memory_chunks (text, path, start_line, end_line) VALUES (?, ?, ?, ?)",
    );
    const upsertFile = this.#db.prepare(
      "INSERT INTO memory_files (path, size, mtime_ms) VALUES (?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms",
    );
    const deleteFile = this.#db.prepare("DELETE FROM memory_files WHERE path = ?");
    this.#db.exec("BEGIN");
    try {
      for (const file of current) {
        const before = known.get(file.path);
        known.delete(file.path);
        if (before !== undefined && before.size === file.size && before.mtime_ms === Math.trunc(file.mtimeMs))
          continue;
        deleteChunks.run(file.path);
        for (const chunk of chunks(this.#read(file.path))) {
          insertChunk.run(chunk.text, file.path, chunk.startLine, chunk.endLine);
        }
        upsertFile.run(file.path, file.size, Math.trunc(file.mtimeMs));
        indexed.push(file.path);
      }
      for (const gone of known.keys()) {
        deleteChunks.run(gone);
        deleteFile.run(gone);
        removed.push(gone);
      }
      this.#db.exec("COMMIT");
    } catch (error) {
      this.#db.exec("ROLLBACK");
      throw error;
    }
    return { indexed, removed };
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
        "SELECT path, start_line, end_line, text, bm25(memory_chunks) AS score FROM memory_chunks WHERE memory_chunks MATCH ? ORDER BY score LIMIT ?",
      )
      .all(match, Math.max(1, Math.min(50, Math.trunc(limit)))) as {
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
    if (!(rel === "MEMORY.md" || /^memory\/[^/\\]+\.md$/.test(rel))) {
      throw new Error(
        `memory_get: ${JSON.stringify(path)} is not a memory file (MEMORY.md or memory/<name>.md)`,
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
