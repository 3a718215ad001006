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
// folder is needed for the link: SQLite syncs the folder at the first sync of the WAL it creates (the first
// commit with `synchronous=FULL`, the first checkpoint with NORMAL), which makes the link durable with it, and
// nothing in the file is promised before then (a power loss loses an empty schema, made again by the next open;
// with NORMAL a power loss makes no promise before a checkpoint anyway).
//
// Not built whole when a -wal, -shm or -journal file of that name is left over (a database removed by hand
// after a crash): SQLite deletes those when it opens an empty file, but a complete image marked WAL would have
// the old WAL replayed into it. A temporary file left by a creator killed mid-way (or a second link to the new
// database, when the kill came between the link and the removal) is removed by the next open
// (removeStaleCreations).
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
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

/** A creation's temporary file older than this is a leftover, whoever made it (a creation takes milliseconds). */
const STALE_CREATION_MS = 60_000;

function creationPrefix(path: string): string {
  return `.${basename(path)}.creating-`;
}

/**
 * Builds the database at `path` when it is missing: `initialize` runs on a new, empty (in-memory) database.
 * Returns `false` when the file system cannot link (nothing was created: the caller creates the file in place),
 * `true` otherwise — made here, or there already (another process's, whole). Throws what `initialize` or SQLite
 * throws, leaving nothing behind.
 */
export function createDatabaseWhole(path: string, initialize: (db: Database.Database) => void): boolean {
  if (existsSync(`${path}-wal`) || existsSync(`${path}-shm`) || existsSync(`${path}-journal`)) return false;
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
    `${creationPrefix(path)}${process.pid}-${randomBytes(4).toString("hex")}`,
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

/**
 * Removes what creations of `path` killed mid-way left in its folder: temporary files whose process is gone or
 * that are older than a minute (after a kill between the link and the removal, the temporary name is a second
 * link to the database, which SQLite warns about and a backup would copy stale). Best effort: errors are ignored.
 */
export function removeStaleCreations(path: string): void {
  const prefix = creationPrefix(path);
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const file = join(dirname(path), name);
    const pid = Number(name.slice(prefix.length).split("-")[0]);
    try {
      if (processGone(pid) || Date.now() - statSync(file).mtimeMs > STALE_CREATION_MS)
        rmSync(file, { force: true });
    } catch {
      // removed meanwhile, or not ours to remove
    }
  }
}

function processGone(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === "ESRCH";
  }
}
