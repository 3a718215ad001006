// Path views: the filesystem a session's file tools see. Owns: the view type (mounts as the model sees them,
// each backed by a host directory, writable or not), the unsandboxed host view, and resolving a model-supplied
// path in a view to the host path it names — refusing empty paths, NUL, `~`, paths outside every mount,
// symbolic links (on the path or as the last component, dangling ones included) whose target leaves the
// mounts, and writes into a read-only mount. Does not own: reading or writing files (the tools do, with the
// host path), nor building a sandbox's mounts (the sandbox package describes what it binds).
//
// Symbolic links are followed the way the kernel inside the sandbox follows them: an absolute target is a
// path in the view, a relative one is taken from the link's directory, and the walk goes on in the view. So a
// link made inside the sandbox (`ln -s /workspace/a b`) works, a link into another mount leads there (and a
// write through it needs that mount to be writable), and a link to a host path outside the mounts is refused
// whatever exists at that path on the host. The host path returned has every link already followed, so the
// tool's own access follows none.
//
// Limit: resolving and the tool's access are two steps, so a process that swaps a directory for a symlink in
// between could still redirect the access (a TOCTOU race). The agent's own tools cannot do that without
// `exec`; in a sandbox, `exec` sees the same mounts, so the race can only reach what the view already holds.
import { lstat, readlink, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** A directory the file tools see at `path` (absolute, as the model sees it), backed by `hostPath`. */
export interface PathMount {
  readonly path: string;
  readonly hostPath: string;
  readonly writable: boolean;
}

/** What the file tools see: relative paths start at `cwd` (a path in the view); only the mounts exist. */
export interface PathView {
  readonly cwd: string;
  readonly mounts: readonly PathMount[];
}

export type PathAccess = "read" | "write";

export interface ResolvedPath {
  /** Where the path leads on the host, every symbolic link followed. */
  readonly hostPath: string;
  /** The path the model named, absolute in the view (links not followed): what to show back to the model. */
  readonly viewPath: string;
  /** The mount `hostPath` is in (a link can lead into another mount than the one the path names). */
  readonly mount: PathMount;
}

export class WorkspacePathError extends Error {
  override readonly name = "WorkspacePathError";
}

/** Linux's own limit on symbolic links followed while resolving one path (ELOOP beyond it). */
const MAX_SYMLINK_HOPS = 40;

/** The view of an unsandboxed session: the workspace directory as itself, writable, and the cwd. */
export function hostPathView(workspaceDir: string): PathView {
  const root = resolve(workspaceDir);
  return { cwd: root, mounts: [{ path: root, hostPath: root, writable: true }] };
}

/** Whether `candidate` is `parent` or below it. A name like `..foo` is below; only a whole `..` climbs. */
export function isWithin(parent: string, candidate: string): boolean {
  const rel = relative(parent, candidate);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** One way to spell a mount's root in the view, with the mount's real host directory. */
interface MountSpelling {
  readonly mount: PathMount;
  readonly viewRoot: string;
  /** The real path of the mount's host directory; undefined when it does not exist. */
  readonly realHostRoot: string | undefined;
}

interface Located {
  readonly spelling: MountSpelling;
  /** The rest of the path below the mount root ("" for the root itself). */
  readonly rel: string;
}

async function realpathOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/**
 * Every spelling of every mount root. A mount shown at its own host path (the host view) may also be named by
 * its real path (a workspace under a symlinked /tmp is also under /private/tmp), since outside a sandbox both
 * spellings reach it; in a sandbox the host's spellings do not exist, so only `path` names the mount.
 */
async function mountSpellings(view: PathView): Promise<MountSpelling[]> {
  return (
    await Promise.all(
      view.mounts.map(async (mount): Promise<MountSpelling[]> => {
        if (!isAbsolute(mount.path) || !isAbsolute(mount.hostPath)) {
          throw new TypeError(`a mount's path and hostPath must be absolute (got ${mount.path})`);
        }
        const viewRoot = resolve(mount.path);
        const realHostRoot = await realpathOrUndefined(mount.hostPath);
        const spellings: MountSpelling[] = [{ mount, viewRoot, realHostRoot }];
        const showsItself = viewRoot === resolve(mount.hostPath);
        if (showsItself && realHostRoot !== undefined && realHostRoot !== viewRoot) {
          spellings.push({ mount, viewRoot: realHostRoot, realHostRoot });
        }
        return spellings;
      }),
    )
  ).flat();
}

/** The mount a view path is in: the longest mount root it is under, or undefined when it is under none. */
function locate(spellings: readonly MountSpelling[], viewPath: string): Located | undefined {
  let best: MountSpelling | undefined;
  for (const spelling of spellings) {
    if (!isWithin(spelling.viewRoot, viewPath)) continue;
    if (best === undefined || spelling.viewRoot.length > best.viewRoot.length) best = spelling;
  }
  return best === undefined ? undefined : { spelling: best, rel: relative(best.viewRoot, viewPath) };
}

function components(path: string): string[] {
  return path.split(sep).filter((part) => part !== "" && part !== ".");
}

/**
 * The view path `start` (absolute, normalised) leads to once every symbolic link on it is followed, as the
 * sandbox would follow them; `followedLink` says whether any was. Parts of the path that do not exist are kept
 * as they are (a file to create); directories above the mounts are the sandbox's own and hold no links.
 */
async function followLinks(
  spellings: readonly MountSpelling[],
  start: string,
  requested: string,
): Promise<{ readonly viewPath: string; readonly followedLink: boolean }> {
  let resolved: string = sep;
  // Still to walk, last part first (a link's target is pushed in front of what follows it).
  const pending = components(start).reverse();
  let hops = 0;
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (name === "..") {
      resolved = dirname(resolved);
      continue;
    }
    const next = join(resolved, name);
    const located = locate(spellings, next);
    const hostRoot = located?.spelling.realHostRoot;
    if (located === undefined || located.rel === "" || hostRoot === undefined) {
      // Above the mounts, a mount root, or a mount missing on the host (reported by the caller): no link here.
      resolved = next;
      continue;
    }
    let isLink: boolean;
    try {
      isLink = (await lstat(join(hostRoot, located.rel))).isSymbolicLink();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") {
        // Nothing exists from here on, so nothing further can be a link: the rest is the name to create.
        return { viewPath: resolve(next, ...pending.reverse()), followedLink: hops > 0 };
      }
      throw new WorkspacePathError(
        `cannot check path "${requested}": ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (!isLink) {
      resolved = next;
      continue;
    }
    hops += 1;
    if (hops > MAX_SYMLINK_HOPS) {
      throw new WorkspacePathError(
        `path "${requested}" has too many levels of symbolic links (more than ${MAX_SYMLINK_HOPS}; a loop?)`,
      );
    }
    const target = await readlink(join(hostRoot, located.rel));
    if (isAbsolute(target)) resolved = sep;
    pending.push(...components(target).reverse());
  }
  return { viewPath: resolved, followedLink: hops > 0 };
}

function checkRequested(requested: string): void {
  if (typeof requested !== "string" || requested.trim() === "") {
    throw new WorkspacePathError("path is empty; give a path relative to the workspace");
  }
  if (requested.includes("\u0000")) throw new WorkspacePathError("path contains a NUL character");
  if (requested === "~" || requested.startsWith("~/")) {
    throw new WorkspacePathError(`path "${requested}" points into the home directory, outside the workspace`);
  }
}

/** "/workspace, /agent (read-only)": the mounts, for messages that tell the model where it may go. */
export function describeMounts(view: PathView): string {
  return view.mounts.map((mount) => `${mount.path}${mount.writable ? "" : " (read-only)"}`).join(", ");
}

/**
 * Where `requested` (relative to the view's cwd, or absolute in the view) leads on the host, or a
 * `WorkspacePathError` naming the path and saying why it is refused. `access: "write"` also requires the
 * mount the path finally leads into to be writable.
 */
export async function resolveInView(
  view: PathView,
  requested: string,
  access: PathAccess,
): Promise<ResolvedPath> {
  checkRequested(requested);
  if (!isAbsolute(view.cwd)) throw new TypeError(`a path view's cwd must be absolute (got ${view.cwd})`);
  const lexical = resolve(view.cwd, requested);
  const spellings = await mountSpellings(view);
  const named = locate(spellings, lexical);
  if (named === undefined) {
    throw new WorkspacePathError(
      `path "${requested}" is outside the workspace (files are under ${describeMounts(view)})`,
    );
  }
  const namedMount = named.spelling.mount;
  const viewPath = join(resolve(namedMount.path), named.rel);
  const followed = await followLinks(spellings, lexical, requested);
  const target = locate(spellings, followed.viewPath);
  if (target === undefined) {
    throw new WorkspacePathError(
      followed.followedLink
        ? `path "${requested}" leaves the workspace through a symbolic link`
        : `path "${requested}" is outside the workspace (files are under ${describeMounts(view)})`,
    );
  }
  const mount = target.spelling.mount;
  const hostRoot = target.spelling.realHostRoot;
  if (hostRoot === undefined) {
    throw new WorkspacePathError(`path "${requested}" is in ${mount.path}, which is not available`);
  }
  if (access === "write" && !mount.writable) {
    throw new WorkspacePathError(
      mount === namedMount
        ? `path "${requested}" is in ${mount.path}, which is read-only`
        : `path "${requested}" leads through a symbolic link into ${mount.path}, which is read-only`,
    );
  }
  return { hostPath: join(hostRoot, target.rel), viewPath, mount };
}
