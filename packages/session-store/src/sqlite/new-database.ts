// Creating a missing SQLite database whole. Owns: building a new database — WAL mode and its schema — in a
// private temporary file beside it with SQLite's syncs off, one fsync of the finished file, then linking it
// under its name, so the name only ever appears pointing at a complete database and never replaces one a
// concurrent creator linked first. Does not own: what the schema is (the caller's `initialize`: migrator.ts),
// opening the linked file with the store's settings (connection.ts), or a file system without hard links
// (the caller then creates the file in place, as SQLite does).
//
// Why: created in place, a new database costs four fsyncs before its first write (SQLite switches the empty
// file to WAL through a rollback journal: the journal twice, its folder, the file), and the schema's pages go
// through the WAL. Here the whole file costs one fsync. No fsync of the folder is needed for the link: until
// the database's first commit nothing in it was promised (a power loss before then loses an empty schema,
// made again by the next open), and that commit creates the WAL, whose creation SQLite syncs along with
// the folder — which makes the link durable with it.
import { randomBytes } from "node:crypto";
import { closeSync, constants, fsyncSync, linkSync, openSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";

/**
 * Builds the database at `path` when it is missing: `initialize` runs on a new, empty database already in WAL
 * mode. Returns `false` when the file system cannot link (nothing was created: the caller creates the file in
 * place), `true` otherwise — made here, or there already (another process's, whole). Throws what
 * `initialize` or SQLite throws, leaving nothing behind.
 */
export function createDatabaseWhole(path: string, initialize: (db: Database.Database) => void): boolean {
  const temporary = join(
    dirname(path),
    `.${basename(path)}.creating-${process.pid}-${randomBytes(4).toString("hex")}`,
  );
  // O_EXCL: the temporary name is this call's alone; 0600 like every database file (SQLite's -wal and -shm
  // take its mode).
  const fd = openSync(temporary, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    const db = new Database(temporary);
    try {
      // Nothing here needs a sync or a journal file: the file is nobody's until it is linked, and a failed
      // build is thrown away whole.
      db.pragma("synchronous = OFF");
      db.pragma("journal_mode = MEMORY");
      db.pragma("foreign_keys = ON");
      initialize(db);
      const mode = db.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal") throw new Error(`the database refused WAL mode (journal_mode is ${String(mode)})`);
    } finally {
      // The last connection's close copies the WAL into the file and removes it (and the -shm).
      db.close();
    }
    fsyncSync(fd);
    try {
      linkSync(temporary, path);
    } catch (error) {
      // Another process linked its database first: that one is used, whole.
      if ((error as { code?: unknown }).code === "EEXIST") return true;
      return false;
    }
    return true;
  } finally {
    closeSync(fd);
    for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${temporary}${suffix}`, { force: true });
  }
}
