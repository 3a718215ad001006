// Test support for storage faults on real files: a small disk (a tmpfs mounted over a folder, filled up to
// what a test leaves free), a read-only file (immutable for root, whom file modes do not stop; mode 0444
// otherwise), and transcript rows damaged or deleted behind the store's back with the store's own SQLite
// driver. Each helper says why it cannot run here (not root, no tmpfs, no chattr) instead of failing.
import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, openSync, statfsSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { REPO_ROOT } from "./cli-harness.ts";

/** The part of a better-sqlite3 connection the tests use. */
export interface SqliteFile {
  prepare(sql: string): {
    all(...parameters: unknown[]): unknown[];
    get(...parameters: unknown[]): unknown;
    run(...parameters: unknown[]): { changes: number };
  };
  close(): void;
}

/** better-sqlite3 as session-store loads it (this app does not depend on it itself). */
const Database = createRequire(join(REPO_ROOT, "packages", "session-store", "package.json"))(
  "better-sqlite3",
) as new (
  path: string,
) => SqliteFile;

/** Runs `use` on the SQLite file at `path` and closes it. */
export function withDatabase<T>(path: string, use: (db: SqliteFile) => T): T {
  const db = new Database(path);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

/** A tmpfs of `sizeKb` mounted over `dir` (which keeps its content: it is copied in); undefined with why not. */
export function mountSmallDisk(dir: string, sizeKb: number): { unmount(): void } | string {
  if (process.getuid?.() !== 0) return "mounting a small tmpfs needs root";
  const saved = `${dir}.before-mount`;
  try {
    execFileSync("cp", ["-a", dir, saved]);
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKb}k,mode=0700`, "tmpfs", dir], {
      stdio: "pipe",
    });
    execFileSync("cp", ["-a", `${saved}/.`, dir]);
  } catch (error) {
    execFileSync("rm", ["-rf", saved]);
    return `cannot mount a tmpfs here: ${(error as Error).message.split("\n")[0]}`;
  }
  execFileSync("rm", ["-rf", saved]);
  let mounted = true;
  return {
    unmount() {
      if (!mounted) return;
      mounted = false;
      execFileSync("umount", ["-l", dir]);
    },
  };
}

/** Fills the file system holding `dir` with a file `filler` until `freeKb` is left for this user. */
export function fillLeaving(dir: string, freeKb: number): void {
  const stats = statfsSync(dir);
  let toWrite = stats.bavail * stats.bsize - freeKb * 1024;
  const fd = openSync(join(dir, "filler"), "w");
  const chunk = Buffer.alloc(64 * 1024);
  try {
    while (toWrite > 0) {
      const size = Math.min(chunk.length, toWrite);
      toWrite -= writeSync(fd, chunk, 0, size);
    }
  } finally {
    closeSync(fd);
  }
}

/** Makes `path` refuse writes (root: `chattr +i`; others: mode 0444); a string says why it cannot. */
export function makeReadOnly(path: string): { undo(): void } | string {
  if (process.getuid?.() !== 0) {
    chmodSync(path, 0o444);
    return { undo: () => chmodSync(path, 0o600) };
  }
  try {
    execFileSync("chattr", ["+i", path], { stdio: "pipe" });
  } catch (error) {
    return `root ignores file modes, and chattr +i is not available here: ${(error as Error).message.split("\n")[0]}`;
  }
  return { undo: () => execFileSync("chattr", ["-i", path], { stdio: "pipe" }) };
}

/** One row of `transcript_entries`. */
export interface TranscriptRow {
  readonly seq: number;
  readonly id: string;
  readonly parentId: string | null;
  readonly type: string;
  readonly body: string;
}

/** The transcript rows of the agent database at `path`, in seq order. */
export function transcriptRows(path: string): TranscriptRow[] {
  return withDatabase(path, (db) =>
    db
      .prepare("SELECT seq, id, parent_id AS parentId, type, body FROM transcript_entries ORDER BY seq")
      .all(),
  ) as TranscriptRow[];
}
