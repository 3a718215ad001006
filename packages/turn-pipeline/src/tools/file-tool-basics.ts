// What every file tool's file access shares: the edit size cap, the error a model can act on, the abort error,
// and the lexical check of a requested path against a session's view (which mount, read-only or not). Owns
// those. Does not own: how files are reached (sandbox-file-operations.ts, host-file-operations.ts) or the host
// view's link-resolving rules (path-view.ts).
import { posix } from "node:path";
import {
  describeMounts,
  isWithin,
  type PathAccess,
  type PathMount,
  type PathView,
  WorkspacePathError,
} from "./path-view.ts";

/** Largest file `edit` loads (pi's edit holds the whole file, twice, plus the diff). */
export const MAX_EDIT_FILE_BYTES = 10 * 1024 * 1024;

/**
 * An error a model can act on, with `code` (an errno name) only when there is one: pi's edit then reports
 * just the code ("Could not edit file: x. Error code: ENOENT."), as for its own file access, and the message
 * otherwise.
 */
export class FileToolError extends Error {
  declare readonly code?: string;
  constructor(message: string, code?: string) {
    super(message);
    if (code !== undefined) Object.defineProperty(this, "code", { value: code, enumerable: true });
  }
}

/** The error an aborted file operation rejects with (pi's wording). */
export function aborted(): Error {
  return new Error("Operation aborted");
}

// ---------------------------------------------------------------------------------------------------------
// The lexical check of a sandboxed session's path.

export interface ViewLocation {
  /** The path, absolute in the view (no link followed: the sandbox follows them). */
  readonly viewPath: string;
  /** The mount the path names. */
  readonly mount: PathMount;
}

/**
 * Where `requested` (relative to the view's cwd, or absolute in the view) is in the view, by its spelling
 * alone, or a `WorkspacePathError` saying why it is refused: empty, NUL, `~`, outside every mount, or (for
 * writing) in a read-only mount. Touches no file: in a sandbox the kernel resolves the path, links included,
 * and enforces the mounts.
 */
export function locateInView(view: PathView, requested: string, access: PathAccess): ViewLocation {
  if (typeof requested !== "string" || requested.trim() === "") {
    throw new WorkspacePathError("path is empty; give a path relative to the workspace");
  }
  if (requested.includes("\u0000")) throw new WorkspacePathError("path contains a NUL character");
  if (requested === "~" || requested.startsWith("~/")) {
    throw new WorkspacePathError(`path "${requested}" points into the home directory, outside the workspace`);
  }
  if (!posix.isAbsolute(view.cwd))
    throw new TypeError(`a path view's cwd must be absolute (got ${view.cwd})`);
  const viewPath = posix.resolve(view.cwd, requested);
  let best: { mount: PathMount; root: string } | undefined;
  for (const mount of view.mounts) {
    const root = posix.resolve(mount.path);
    if (!isWithin(root, viewPath)) continue;
    if (best === undefined || root.length > best.root.length) best = { mount, root };
  }
  if (best === undefined) {
    throw new WorkspacePathError(
      `path "${requested}" is outside the workspace (files are under ${describeMounts(view)})`,
    );
  }
  if (access === "write" && !best.mount.writable) {
    throw new WorkspacePathError(`path "${requested}" is in ${best.mount.path}, which is read-only`);
  }
  return { viewPath, mount: best.mount };
}
