// The gateway's own state under the state dir is the owner's alone: its folders are created 0700 and its files
// 0600 from the start (never chmod'ed after a window in which they were readable), and a looser folder or file
// an older install left (0755 / 0644) is tightened when the gateway opens it. The same rule as
// @agent-kernel/session-store's private-files.ts, which the app layer cannot import (apps reach the store only
// through the kernel). Owns: the modes and the create/tighten steps. Does not own: which paths are state
// (inbox.ts), the store's files (session-store) or the agent workspace, which is user content.
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** The permission bits that give group or others any access. */
const SHARED_BITS = 0o077;

/**
 * Creates `dir` and any missing parent owner-only (0700), then tightens `dir` and every folder from `root` (the
 * state dir) down to it when looser. Throws when the folder cannot be created; a folder that cannot be
 * tightened (another user's, a read-only file system) is left as it is.
 */
export function ensurePrivateDir(dir: string, root: string = dir): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  for (const folder of foldersFrom(root, dir)) tightenFile(folder);
}

/** Removes group and other access from an existing file or folder that has any; anything else is left alone. */
export function tightenFile(path: string): void {
  try {
    const { mode } = statSync(path);
    if ((mode & SHARED_BITS) !== 0) chmodSync(path, mode & 0o7777 & ~SHARED_BITS);
  } catch {
    // Missing, another user's, or a read-only file system: nothing to tighten, or not ours to tighten.
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
