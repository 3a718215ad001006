// Opening one SQLite file with the store's settings. Owns: creating the parent folder and the file owner-only
// (private-files.ts: folders 0700, the database and so its -wal/-shm 0600, a looser one tightened), the
// pragmas (WAL, busy_timeout, foreign keys, synchronous), when the WAL is checkpointed, and turning low-level
// failures (not a database, read-only place, missing permissions) into a `StoreOpenError` naming the file.
// Does not own: the schema (migrator.ts), or how a missing database is built (new-database.ts). Also loads
// Kysely on demand (`loadKysely`).
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { SessionStoreError, StoreOpenError } from "../errors.ts";
import { ensurePrivateDatabase, ensurePrivateDir } from "../private-files.ts";
import { createDatabaseWhole, removeStaleCreations } from "./new-database.ts";

/**
 * `normal` (the default): in WAL mode every commit is written to the WAL before it returns, so it survives a
 * crash of the process; a power loss may roll back the last commits, never corrupt the file. That is the
 * same class as pi's JSONL (`appendFileSync`, no fsync). `full`: every commit is also fsynced, so it survives
 * a power loss, at several times the cost of a commit.
 */
export type Durability = "normal" | "full";

/**
 * When the WAL is copied back into the database file. `on-commit` is SQLite's default: the commit that takes
 * the WAL past 1000 pages (4 MB) does it, inside that call. `background` (the store's default): a passive
 * checkpoint on an unref'd timer (`BACKGROUND_CHECKPOINT_MS`) once the WAL has frames written since the last
 * checkpoint (or the open) and either `BACKGROUND_CHECKPOINT_MAX_AGE_MS` have passed since then or the WAL
 * file grew by `BACKGROUND_CHECKPOINT_BYTES`; so a page rewritten by many commits is copied once and no commit
 * pays for the copy. SQLite's own checkpoint stays as a backstop at `BACKSTOP_CHECKPOINT_PAGES` for a process
 * that writes without ever yielding to the timer, and the last connection's close checkpoints whatever is left.
 * A commit is in the WAL before it returns either way, and a WAL that was never checkpointed is replayed by the
 * next open: a `kill -9` loses nothing committed. With `durability: "normal"` (synchronous=NORMAL) the WAL is
 * fsynced only at a checkpoint, so a power loss or OS crash can roll back the commits since the last one: at
 * most about `BACKGROUND_CHECKPOINT_MAX_AGE_MS` plus one tick of them. `durability: "full"` loses none.
 */
export type WalCheckpoint = "background" | "on-commit";

/** How often the background checkpoint looks at the WAL (one `stat`; a checkpoint only when one is due). */
export const BACKGROUND_CHECKPOINT_MS = 1000;
/**
 * The longest the background checkpoint leaves written frames alone: the bound on what a power loss can roll
 * back under `durability: "normal"`. Longer than a short process (`agent -m`, about a second): a checkpoint
 * syncs the WAL and the database file, and one mid-turn would be synced again by the close.
 */
export const BACKGROUND_CHECKPOINT_MAX_AGE_MS = 5000;
/**
 * How much the WAL file may grow past its size at the last checkpoint before the background checkpoint runs
 * early: SQLite's default autocheckpoint (1000 pages of 4 KiB). Growth, not size: SQLite does not shrink the
 * WAL file after a checkpoint (it writes it again from the start), so its size alone would stay past any
 * threshold and make every tick checkpoint.
 */
export const BACKGROUND_CHECKPOINT_BYTES = 4 * 1024 * 1024;
/** 64 MB of 4 KB pages: the WAL's bound when the timer cannot run. */
export const BACKSTOP_CHECKPOINT_PAGES = 16_384;
export interface SqliteOpenOptions {
  readonly durability?: Durability;
  readonly walCheckpoint?: WalCheckpoint;
  /** How long a writer waits for another process's write lock before failing (default 5000 ms). */
  readonly busyTimeoutMs?: number;
}

/**
 * Opens (creating when missing) the database at `path`. Its folder, and every folder from `privateRoot` (the
 * state dir; default the folder itself) down to it, are made or tightened to 0700, and the file to 0600 before
 * SQLite opens it, so SQLite's -wal and -shm files, which take the database file's mode, are 0600 as well.
 * With `initialize` (the schema), a missing file is built whole first (new-database.ts: WAL mode and the
 * schema in one fsync); where the file system cannot link, it is created in place and the caller's own
 * migration makes the schema.
 */
export function openSqliteFile(
  path: string,
  options: SqliteOpenOptions = {},
  privateRoot: string = dirname(path),
  initialize?: (db: Database.Database) => void,
): Database.Database {
  try {
    ensurePrivateDir(dirname(path), privateRoot);
  } catch (error) {
    throw new StoreOpenError(path, `cannot create its folder (${describe(error)})`, { cause: error });
  }
  if (initialize !== undefined) removeStaleCreations(path);
  if (initialize !== undefined && !existsSync(path)) {
    try {
      createDatabaseWhole(path, initialize);
    } catch (error) {
      if (error instanceof SessionStoreError) throw error;
      throw new StoreOpenError(path, explain(error), { cause: error });
    }
  }
  ensurePrivateDatabase(path);
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
  } catch (error) {
    throw new StoreOpenError(path, explain(error), { cause: error });
  }
  try {
    // Another process opening the same new file at this moment may hold it while it switches it to WAL (or
    // recovers its WAL): SQLite can answer SQLITE_BUSY here without waiting, so these idempotent steps are
    // retried until the busy timeout runs out.
    retryWhileBusy(options.busyTimeoutMs ?? 5000, () => {
      // The first statement reads the file header: a file that is not SQLite fails here, before any write.
      db.pragma("schema_version");
      const mode = db.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal") throw new Error(`the database refused WAL mode (journal_mode is ${String(mode)})`);
    });
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    db.pragma("foreign_keys = ON");
    db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
    if ((options.walCheckpoint ?? "background") === "background") {
      db.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
      checkpointInBackground(db, path);
    }
  } catch (error) {
    db.close();
    throw new StoreOpenError(path, explain(error), { cause: error });
  }
  return db;
}

const BUSY_RETRY_MS = 20;

/** Runs `step`, again after a short pause while it fails with SQLITE_BUSY, for at most `timeoutMs`. */
export function retryWhileBusy(timeoutMs: number, step: () => void): void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      step();
      return;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== "string" || !code.startsWith("SQLITE_BUSY") || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, BUSY_RETRY_MS);
    }
  }
}

/**
 * A passive checkpoint (it never waits for readers or writers) when one is due (see `WalCheckpoint`), looked
 * at every `BACKGROUND_CHECKPOINT_MS` with one `stat` of the WAL; the timer stops itself on the first tick
 * after the connection closed (SQLite checkpoints on the last close anyway).
 */
function checkpointInBackground(db: Database.Database, path: string): void {
  const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
  const wal = `${path}-wal`;
  const opened = statSync(wal, { throwIfNoEntry: false });
  let last = { at: Date.now(), walSize: opened?.size ?? 0 };
  const timer = setInterval(() => {
    if (!db.open) {
      clearInterval(timer);
      return;
    }
    try {
      const now = Date.now();
      const state = statSync(wal, { throwIfNoEntry: false });
      if (!backgroundCheckpointDue(state, last, now)) return;
      const result = checkpoint.get() as { busy: number; log: number; checkpointed: number } | undefined;
      // Only a checkpoint that copied every frame restarts the clock; otherwise the next tick tries again.
      if (result !== undefined && result.busy === 0 && result.checkpointed >= result.log)
        last = { at: now, walSize: state?.size ?? 0 };
    } catch {
      // Busy or read-only: the next tick (or SQLite's backstop, or the last close) checkpoints instead.
    }
  }, BACKGROUND_CHECKPOINT_MS);
  timer.unref();
}

/**
 * Whether the background checkpoint is due: the WAL was written since the last checkpoint (its mtime, with a
 * margin for the file system's coarse clock, is not older than that checkpoint) and either it is
 * `BACKGROUND_CHECKPOINT_MAX_AGE_MS` old or the WAL file grew by `BACKGROUND_CHECKPOINT_BYTES` since.
 */
export function backgroundCheckpointDue(
  wal: { readonly size: number; readonly mtimeMs: number } | undefined,
  last: { readonly at: number; readonly walSize: number },
  now: number,
): boolean {
  if (wal === undefined || wal.size === 0) return false;
  if (wal.mtimeMs < last.at - MTIME_MARGIN_MS) return false;
  return (
    now - last.at >= BACKGROUND_CHECKPOINT_MAX_AGE_MS ||
    wal.size - last.walSize >= BACKGROUND_CHECKPOINT_BYTES
  );
}

/** File mtimes come from a coarse clock (a few ms): a write just after a checkpoint may look older than it. */
const MTIME_MARGIN_MS = 100;

/**
 * Kysely, loaded on first use. SQLite runs prepared statements and precompiled migrations, so a store that only
 * prepares and runs turns never needs it; loading it costs about 250 modules (a fifth of a second of a cold
 * `agent -m`). Synchronous (`require` of an ES module) because a Kysely instance is made inside synchronous
 * calls; the second call is a cache hit.
 */
export function loadKysely(): typeof import("kysely") {
  return createRequire(import.meta.url)("kysely") as typeof import("kysely");
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
