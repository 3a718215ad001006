// Opening one SQLite file with the store's settings. Owns: creating the parent folder, the pragmas (WAL,
// busy_timeout, foreign keys, synchronous) and turning low-level failures (not a database, read-only place,
// missing permissions) into a `StoreOpenError` naming the file. Does not own: the schema (migrator.ts).
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { StoreOpenError } from "../errors.ts";

/**
 * `normal` (the default): in WAL mode every commit is written to the WAL before it returns, so it survives a
 * crash of the process; a power loss may roll back the last commits, never corrupt the file. That is the
 * same class as pi's JSONL (`appendFileSync`, no fsync). `full`: every commit is also fsynced, so it survives
 * a power loss, at several times the cost of a commit.
 */
export type Durability = "normal" | "full";

export interface SqliteOpenOptions {
  readonly durability?: Durability;
  /** How long a writer waits for another process's write lock before failing (default 5000 ms). */
  readonly busyTimeoutMs?: number;
}

export function openSqliteFile(path: string, options: SqliteOpenOptions = {}): Database.Database {
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    throw new StoreOpenError(path, `cannot create its folder (${describe(error)})`, { cause: error });
  }
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
  } catch (error) {
    throw new StoreOpenError(path, explain(error), { cause: error });
  }
  try {
    // The first statement reads the file header: a file that is not SQLite fails here, before any write.
    db.pragma("schema_version");
    const mode = db.pragma("journal_mode = WAL", { simple: true });
    if (mode !== "wal") throw new Error(`the database refused WAL mode (journal_mode is ${String(mode)})`);
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    db.pragma("foreign_keys = ON");
    db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
  } catch (error) {
    db.close();
    throw new StoreOpenError(path, explain(error), { cause: error });
  }
  return db;
}

/** A readable reason for a better-sqlite3 or file-system error. */
export function explain(error: unknown): string {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  const message = describe(error);
  switch (code) {
    case "SQLITE_NOTADB":
      return `it is not a SQLite database (or it is encrypted or corrupt): ${message}`;
    case "SQLITE_CORRUPT":
      return `the database is corrupt: ${message}`;
    case "SQLITE_CANTOPEN":
      return `the file or its folder cannot be opened for writing (missing, or a read-only place?): ${message}`;
    case "SQLITE_READONLY":
    case "SQLITE_READONLY_DIRECTORY":
    case "SQLITE_READONLY_CANTINIT":
    case "SQLITE_READONLY_CANTLOCK":
      return `the database or its folder is read-only: ${message}`;
    case "SQLITE_PERM":
    case "EACCES":
    case "EPERM":
      return `permission denied: ${message}`;
    default:
      return code === "" ? message : `${code}: ${message}`;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
