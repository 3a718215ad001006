// The state at rest is the owner's alone: the state dir and every folder the store makes in it are 0700, its
// databases (with SQLite's -wal, -shm and -journal files) and append journals 0600, so provider keys or tokens
// that ever reached a transcript are never readable by another local user. Owns: creating folders and files
// owner-only from the start (never a chmod after a window in which they were readable), and tightening a
// looser folder or file an older install left (0755 / 0644) when it is opened. Does not own: which paths are
// state (state-dir.ts, store.ts) or the agent workspace, which is user content and keeps its modes.
//
// SQLite creates a database's -wal, -shm and -journal files with the database file's own permission bits, so
// a database created 0600 (an empty file is a valid new database) gets owner-only companions too.
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  statSync,
} from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** The permission bits that give group or others any access. */
const SHARED_BITS = 0o077;

/** SQLite's companion files of a database, created with the database file's mode. */
export const SQLITE_COMPANION_SUFFIXES = ["-wal", "-shm", "-journal"] as const;

/** True when `mode` gives no access to group or others. */
export function isPrivateMode(mode: number): boolean {
  return (mode & SHARED_BITS) === 0;
}

/**
 * Creates `dir` and any missing parent owner-only (0700), then tightens `dir` and every folder from `root` down
 * to it when they are looser (an older install's 0755); `root` defaults to `dir` alone. Throws when the folder
 * cannot be created; a folder that cannot be tightened (another user's, a read-only file system) is left as
 * it is.
 */
export function ensurePrivateDir(dir: string, root: string = dir): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  for (const folder of foldersFrom(root, dir)) tightenFile(folder);
}

/**
 * Creates `path` as an empty owner-only (0600) file when it is missing, or tightens it when it is looser. Best
 * effort: a file that cannot be created or tightened is left for whoever opens it next to report.
 */
export function ensurePrivateFile(path: string): void {
  let fd: number;
  try {
    // O_CREAT without O_TRUNC or O_EXCL: an existing file (another process's new database) is kept as it is.
    fd = openSync(path, constants.O_RDONLY | constants.O_CREAT, PRIVATE_FILE_MODE);
  } catch {
    return;
  }
  try {
    const { mode } = fstatSync(fd);
    if (!isPrivateMode(mode)) fchmodSync(fd, mode & 0o7777 & ~SHARED_BITS);
  } catch {
    // Another user's file, or a read-only file system: left as it is.
  } finally {
    closeSync(fd);
  }
}

/** A SQLite database file created or tightened owner-only, and its existing -wal/-shm/-journal files tightened. */
export function ensurePrivateDatabase(path: string): void {
  ensurePrivateFile(path);
  for (const suffix of SQLITE_COMPANION_SUFFIXES) tightenFile(`${path}${suffix}`);
}

/**
 * Removes group and other access from an existing file or folder that has any (0644 becomes 0600, 0755 0700);
 * a missing one, another user's, or one on a read-only file system is left as it is.
 */
export function tightenFile(path: string): void {
  try {
    const { mode } = statSync(path);
    if (!isPrivateMode(mode)) chmodSync(path, mode & 0o7777 & ~SHARED_BITS);
  } catch {
    // See above: nothing to tighten, or not ours to tighten.
  }
}

/** `root`, the folders under it down to `dir`, and `dir`; just `dir` when `dir` is not inside `root`. */
function foldersFrom(root: string, dir: string): string[] {
  const from = resolve(root);
  const to = resolve(dir);
  const rest = relative(from, to);
  if (rest === "") return [to];
  if (isAbsolute(rest) || rest === ".." || rest.startsWith(`..${sep}`)) return [to];
  const folders = [from];
  let current = from;
  for (const part of rest.split(sep)) {
    current = resolve(current, part);
    folders.push(current);
  }
  return folders;
}
