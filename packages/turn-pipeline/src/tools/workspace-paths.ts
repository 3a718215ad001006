// Confining a tool's path to the workspace root, for callers that have a directory rather than a path view.
// Owns: `resolveInsideWorkspace`, the host view's resolution under its old name. Does not own: the rules
// themselves (`..`, absolute paths, `~`, symbolic links — path-view.ts) or reading and writing files.
import { hostPathView, resolveInView, WorkspacePathError } from "./path-view.ts";

export { WorkspacePathError };

/**
 * The absolute host path `requested` names inside `root`, or a `WorkspacePathError` saying why it is refused.
 * Relative paths are taken from the root; an absolute path is allowed only when it is inside the root (under
 * the spelling given or the root's real path). Symbolic links are followed: the result is where they lead.
 */
export async function resolveInsideWorkspace(root: string, requested: string): Promise<string> {
  return (await resolveInView(hostPathView(root), requested, "write")).hostPath;
}
