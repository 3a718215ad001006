// Confining a tool's path to the workspace root. Owns: resolving a model-supplied path against the root and
// refusing anything that leaves it — `..` segments that climb out, absolute paths elsewhere, `~`, and
// symlinks (on the path or as the target) whose real location is outside the root. Does not own: reading or
// writing files (pi's tools do, with the resolved absolute path).
//
// Limit: the check and the tool's own file access are two steps, so a process that swaps a directory for a
// symlink in between could still redirect the access (a TOCTOU race). The agent's own tools cannot do that
// without `exec`, which runs with the workspace as cwd but is not a filesystem sandbox (sandboxing is the
// sandbox context's job).
import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

export class WorkspacePathError extends Error {
  override readonly name = "WorkspacePathError";
}

function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel) && rel.split(sep)[0] !== "..");
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest (for files to create). */
async function realLocation(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : resolve(real, ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      const parent = dirname(current);
      if (parent === current) return path;
      missing.push(current.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      current = parent;
    }
  }
}

/**
 * The absolute path `requested` names inside `root`, or a `WorkspacePathError` saying why it is refused.
 * Relative paths are taken from the root; an absolute path is allowed only when it is inside the root.
 */
export async function resolveInsideWorkspace(root: string, requested: string): Promise<string> {
  if (typeof requested !== "string" || requested.trim() === "") {
    throw new WorkspacePathError("path is empty; give a path relative to the workspace");
  }
  if (requested.includes("\u0000")) throw new WorkspacePathError("path contains a NUL character");
  if (requested === "~" || requested.startsWith("~/")) {
    throw new WorkspacePathError(`path "${requested}" points into the home directory, outside the workspace`);
  }
  const realRoot = await realpath(root);
  const lexical = resolve(realRoot, requested);
  const lexicalFromGivenRoot = resolve(root, requested);
  if (!isInside(realRoot, lexical) && !isInside(resolve(root), lexicalFromGivenRoot)) {
    throw new WorkspacePathError(`path "${requested}" is outside the workspace`);
  }
  // An absolute path given under the root's non-real spelling (e.g. /tmp vs /private/tmp) is re-rooted.
  const target = isInside(realRoot, lexical)
    ? lexical
    : resolve(realRoot, relative(resolve(root), lexicalFromGivenRoot));
  const real = await realLocation(target);
  if (!isInside(realRoot, real)) {
    throw new WorkspacePathError(`path "${requested}" leaves the workspace through a symbolic link`);
  }
  return target;
}
