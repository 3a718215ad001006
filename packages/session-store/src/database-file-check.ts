// Refusing an empty database file the store did not make. Owns: the look at an existing file before SQLite
// opens it: SQLite takes an empty (0-byte) file for a valid new database, so opening one would quietly start
// an agent's history (or, for the control plane, every session and run record) over. A file that is not SQLite, or unreadable, needs no look here: SQLite's own first
// read refuses it (a `StoreOpenError` naming the file, which storage-errors.ts classifies). A missing file is
// created as always. Does not own: opening or migrating (sqlite/connection.ts, migrator.ts).
import { existsSync, statSync } from "node:fs";
import { StorageFailure } from "./storage-errors.ts";

/**
 * How long an empty file may stay empty before it is refused: a store in another process that is creating
 * the same database holds an empty file only until it switches it to WAL (a few milliseconds), so an empty
 * file that stays empty this long was not being created by a store.
 */
const CREATING_GRACE_MS = 1500;
const POLL_MS = 25;

/**
 * Throws a `StorageFailure` (kind `corrupt`) when `path` exists and is empty after the grace a concurrent
 * creator needs. Returns quietly for a missing file and for anything else (SQLite checks its content).
 */
export function refuseForeignDatabaseFile(
  path: string,
  holds = "this agent's history",
  graceMs: number = CREATING_GRACE_MS,
): void {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const size = sizeOf(path);
    if (size === undefined || size > 0) return;
    // A database whose first pages are still only in its WAL: SQLite reads it from there.
    if ((sizeOf(`${path}-wal`) ?? 0) > 0) return;
    if (Date.now() >= deadline) {
      throw new StorageFailure({
        kind: "corrupt",
        path,
        problem: `${path} is empty (0 bytes), and this store did not create it`,
        hint:
          `it holds no history (a copy or a restore cut short?): restore it from a backup, or move it away ` +
          `(mv ${path} ${path}.empty) to start ${holds} afresh`,
      });
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, POLL_MS);
  }
}

function sizeOf(path: string): number | undefined {
  try {
    const stats = statSync(path);
    return stats.isFile() ? stats.size : 1;
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT" && !existsSync(path)) return undefined;
    // Not even stat-able (a folder without search permission): SQLite's open says why.
    return 1;
  }
}
