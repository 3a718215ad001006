// Creating a missing SQLite database whole. Owns: building a new database — its schema, in WAL mode — in
// memory, writing that image to a private temporary file beside it, one fsync, then linking it under its name,
// so the name only ever appears pointing at a complete database and never replaces one a concurrent creator
// linked first. Does not own: what the schema is (the caller's `initialize`: migrator.ts), opening the linked
// file with the store's settings (connection.ts), or a file system without hard links (the caller then
// creates the file in place, as SQLite does).
//
// Why: created in place, a new database costs four fsyncs before its first write (SQLite switches the empty
// file to WAL through a rollback journal: the journal twice, its folder, the file), and the schema's pages go
// through the WAL and are copied back at the close. Here the whole file costs one fsync. No fsync of the
// folder is needed for the link: until the database's first commit nothing in it was promised (a power loss
// before then loses an empty schema, made again by the next open), and that commit creates the WAL, whose
// creation SQLite syncs along with the folder — which makes the link durable with it.
import { randomBytes } from "node:crypto";
import { closeSync, constants, fsyncSync, linkSync, openSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";

/**
 * SQLite's file format: the header's "file format write version" and "read version" bytes, 1 for a rollback
 * journal, 2 for WAL (https://sqlite.org/fileformat2.html#database_header). An in-memory database cannot be
 * switched to WAL, so its image is marked here: the same two bytes `PRAGMA journal_mode = WAL` writes.
 */
const WRITE_VERSION_OFFSET = 18;
const READ_VERSION_OFFSET = 19;
const WAL_FORMAT = 2;

/**
 * Builds the database at `path` when it is missing: `initialize` runs on a new, empty (in-memory) database.
 * Returns `false` when the file system cannot link (nothing was created: the caller creates the file in place),
 * `true` otherwise — made here, or there already (another process's, whole). Throws what `initialize` or SQLite
 * throws, leaving nothing behind.
 */
export function createDatabaseWhole(path: string, initialize: (db: Database.Database) => void): boolean {
  const built = new Database(":memory:");
  let image: Buffer;
  try {
    initialize(built);
    image = built.serialize();
  } finally {
    built.close();
  }
  image[WRITE_VERSION_OFFSET] = WAL_FORMAT;
  image[READ_VERSION_OFFSET] = WAL_FORMAT;
  const temporary = join(
    dirname(path),
    `.${basename(path)}.creating-${process.pid}-${randomBytes(4).toString("hex")}`,
  );
  // O_EXCL: the temporary name is this call's alone; 0600 like every database file (SQLite's -wal and -shm
  // take its mode).
  const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    for (let written = 0; written < image.length; ) written += writeSync(fd, image, written);
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
    rmSync(temporary, { force: true });
  }
}
