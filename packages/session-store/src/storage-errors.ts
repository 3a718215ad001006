// Storage failures: the one place that reads what SQLite and the file system said when a store file could not
// be written or read, and turns it into a `StorageFailure` naming the file (and the row, when one is at
// fault), what is wrong with it and what to do. Owns: the codes (SQLITE_FULL, SQLITE_READONLY*,
// SQLITE_CANTOPEN*, SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_IOERR*, ENOSPC, EFBIG, EDQUOT, EROFS, EACCES, EPERM)
// and their kinds, a look at the file when the code alone is ambiguous (is its disk really full? why is it
// read-only?), and finding a failure inside an error's causes. Does not own: deciding what a failure does to a turn (turn-pipeline, the
// kernel and the `agent` command do) or recovering from it (a corrupt transcript row is quarantined by
// transcript-quarantine.ts).
import { accessSync, constants, statfsSync } from "node:fs";
import { dirname } from "node:path";
import { SessionStoreError, StoreOpenError } from "./errors.ts";

/**
 * `disk_full`: a write found no space (or hit a size limit, or an I/O error while writing); `read_only`: the
 * file, its folder or its file system refuses writes; `corrupt`: the file or one of its rows is not what the
 * store wrote; `unreadable`: the file cannot be opened or read at all.
 */
export type StorageFailureKind = "disk_full" | "read_only" | "corrupt" | "unreadable";

/** The row a failure is about (a transcript entry whose stored body is damaged). */
export interface StorageRow {
  readonly table: string;
  readonly sessionId?: string;
  readonly seq?: number;
  readonly id?: string;
}

export interface StorageFailureInit {
  readonly kind: StorageFailureKind;
  readonly path: string;
  /** What is wrong, as a sentence start naming the file: "the disk holding /x/agent.sqlite is full". */
  readonly problem: string;
  /** What to do about it. */
  readonly hint: string;
  readonly row?: StorageRow | undefined;
  /** The SQLite or errno code it was classified from, when there was one. */
  readonly code?: string | undefined;
  /** Where what could not be written is kept meanwhile (an append journal), when it is kept at all. */
  readonly keptIn?: string | undefined;
  readonly cause?: unknown;
}

/** A store file that could not be written or read, with the file, the row if one is at fault, and what to do. */
export class StorageFailure extends SessionStoreError {
  override readonly name = "StorageFailure";
  readonly kind: StorageFailureKind;
  readonly path: string;
  readonly row: StorageRow | undefined;
  readonly problem: string;
  readonly hint: string;
  readonly code: string | undefined;
  readonly keptIn: string | undefined;

  constructor(init: StorageFailureInit) {
    super(`${init.problem}: ${init.hint}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.path = init.path;
    this.row = init.row;
    this.problem = init.problem;
    this.hint = init.hint;
    this.code = init.code;
    this.keptIn = init.keptIn;
  }
}

/** The first error code in `error` or its causes (better-sqlite3's `SQLITE_*`, Node's `E*`). */
export function storageErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && (code.startsWith("SQLITE_") || /^E[A-Z]+$/.test(code))) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The kind a code stands for; undefined for codes that say nothing about the file (busy, constraint, …). */
export function storageFailureKind(code: string | undefined): StorageFailureKind | undefined {
  if (code === undefined) return undefined;
  if (code === "SQLITE_FULL" || code === "ENOSPC" || code === "EFBIG" || code === "EDQUOT")
    return "disk_full";
  if (code.startsWith("SQLITE_READONLY") || code === "EROFS" || code === "SQLITE_PERM") return "read_only";
  if (code === "EACCES" || code === "EPERM") return "read_only";
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") return "corrupt";
  if (code.startsWith("SQLITE_CANTOPEN") || code === "ENOENT" || code === "EISDIR") return "unreadable";
  if (code.startsWith("SQLITE_IOERR")) return WRITE_IO_ERRORS.has(code) ? "disk_full" : "unreadable";
  if (code === "EIO") return "unreadable";
  return undefined;
}

/** I/O errors SQLite reports while writing: out of space more often than anything else (the hint checks). */
const WRITE_IO_ERRORS = new Set([
  "SQLITE_IOERR_WRITE",
  "SQLITE_IOERR_SHMSIZE",
  "SQLITE_IOERR_TRUNCATE",
  "SQLITE_IOERR_FSYNC",
  "SQLITE_IOERR_DIR_FSYNC",
  "SQLITE_IOERR_SHMMAP",
]);

/**
 * `error` as a `StorageFailure`: itself when it is one already (or has one among its causes); else, when its
 * code names a storage kind, a new one about the file a `StoreOpenError` among its causes names, or else about
 * `path`; undefined when it is no storage failure or no file is known (the caller rethrows it unchanged).
 *
 * Which file: every call on an agent database names its file itself (the transcript handle and statements
 * convert what they throw; opening one throws a `StoreOpenError` or a `StorageFailure`), so a bare SQLite
 * error out of a SQLite store comes from its control plane: callers pass `controlPlanePathOf(store)`.
 */
export function toStorageFailure(error: unknown, path?: string): StorageFailure | undefined {
  const found = findStorageFailure(error);
  if (found !== undefined) return found;
  const code = storageErrorCode(error);
  const kind = storageFailureKind(code);
  if (kind === undefined) return undefined;
  const file = openErrorPath(error) ?? path;
  return file === undefined ? undefined : describeFailure(kind, file, code, error);
}

/** The control-plane file of a SQLite store (what its bare SQLite errors are about); undefined for others. */
export function controlPlanePathOf(store: unknown): string | undefined {
  if (store === null || typeof store !== "object") return undefined;
  const path = (store as { controlPlanePath?: unknown }).controlPlanePath;
  return typeof path === "string" ? path : undefined;
}

/** The `StorageFailure` in `error`, its causes or (for an AggregateError) its errors; undefined when none. */
export function findStorageFailure(error: unknown): StorageFailure | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < 16) {
    const current = queue.shift();
    if (current === null || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    if (current instanceof StorageFailure) return current;
    queue.push((current as { cause?: unknown }).cause);
    if (current instanceof AggregateError) queue.push(...current.errors);
  }
  return undefined;
}

/** The file of the first `StoreOpenError` in `error` or its causes. */
function openErrorPath(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === "object"; depth++) {
    if (current instanceof StoreOpenError) return current.path;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The failure for `kind` at `path`, with the file looked at where the code alone does not say enough. */
export function describeFailure(
  kind: StorageFailureKind,
  path: string,
  code: string | undefined,
  cause?: unknown,
): StorageFailure {
  const detail = code === undefined ? "" : ` (${code})`;
  switch (kind) {
    case "disk_full": {
      const full = diskIsFull(path);
      if (full || code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT") {
        return new StorageFailure({
          kind,
          path,
          code,
          cause,
          problem: `the disk holding ${path} is full${detail}`,
          hint: `free space on it (or raise the quota) and run the command again`,
        });
      }
      return new StorageFailure({
        kind,
        path,
        code,
        cause,
        problem: `${path} could not be written${detail}`,
        hint:
          code === "EFBIG"
            ? "it reached the file size limit (ulimit -f): raise the limit and run the command again"
            : "its disk may be full, over a file size limit (ulimit -f) or failing: free space, check the limit and the system log, and run the command again",
      });
    }
    case "read_only":
      return new StorageFailure({
        kind,
        path,
        code,
        cause,
        problem: `${path} is read-only${detail}`,
        hint: readOnlyHint(path),
      });
    case "corrupt":
      return new StorageFailure({
        kind,
        path,
        code,
        cause,
        problem:
          code === "SQLITE_NOTADB"
            ? `${path} is not a SQLite database${detail}`
            : `${path} is damaged${detail}`,
        hint: `move it away and restore it from a backup (\`agent doctor\` checks what is left); the store does not repair a damaged file`,
      });
    case "unreadable":
      return new StorageFailure({
        kind,
        path,
        code,
        cause,
        problem: `${path} cannot be read${detail}`,
        hint: `check that it exists and that this user can read and write it and its folder (ls -l ${path}); if the disk is failing, restore the file from a backup`,
      });
  }
}

/** True when the file system holding `path` has no block left for this user. */
function diskIsFull(path: string): boolean {
  try {
    return statfsSync(dirname(path)).bavail === 0;
  } catch {
    return false;
  }
}

/** Why `path` (or its folder) refuses writes, as far as a look at it tells, and what to do. */
function readOnlyHint(path: string): string {
  for (const target of [path, dirname(path)]) {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === "ENOENT") continue;
      const what = target === path ? "the file" : "its folder";
      if (code === "EROFS")
        return `its file system is mounted read-only: remount it read-write (or move the state dir) and run the command again`;
      if (code === "EPERM")
        return `${what} is immutable (lsattr ${target}): clear it with chattr -i ${target} and run the command again`;
      return `${what} is not writable by this user: check its owner and mode (ls -l ${target}; chmod u+w ${target}) and run the command again`;
    }
  }
  // root passes access(2) whatever the mode: an immutable attribute, or a read-only mount SQLite saw first.
  return `check its owner and mode (chmod u+w ${path}), its folder's, an immutable attribute (lsattr ${path}; chattr -i) and that its file system is mounted read-write, then run the command again`;
}
