// What a sandboxed session sees. Owns: the mount layout for each workspace access (`none`: only the sandbox
// workspace at /workspace; `ro`: that plus the agent workspace read-only at /agent; `rw`: the agent workspace
// read-write at /workspace), the read-only mounts of skill folders under /skills, the sandbox workspace
// directory of a scope key under the workspace root, and limits from plain settings. Does not own: which scope key a session has (runtime-resolver) or running.
import { createHash } from "node:crypto";
import { closeSync, constants, fchownSync, fstatSync, mkdirSync, openSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { SandboxLimits, SandboxMount } from "./types.ts";

/** How a sandboxed session sees the agent workspace: not at all (`none`), read-only at /agent (`ro`), or read-write as its workspace (`rw`). */
export type WorkspaceAccess = "none" | "ro" | "rw";

/** Where the writable workspace appears inside (the command's cwd). */
export const SANDBOX_WORKSPACE_PATH = "/workspace";
/** Where the agent workspace appears inside with `workspaceAccess: "ro"`. */
export const AGENT_WORKSPACE_PATH = "/agent";

/** Where skill folders appear inside, each read-only in a folder of its own (`/skills/<folder name>`). */
export const SKILLS_PATH = "/skills";

/** The mounts and working directory a sandboxed command gets for one workspace access. */
export interface SandboxLayout {
  /** The working directory inside. */
  readonly cwd: string;
  readonly mounts: readonly SandboxMount[];
}

/** The mounts for a workspace access: the sandbox workspace at /workspace, plus the agent workspace at /agent (`ro`), or the agent workspace at /workspace (`rw`). */
export function sandboxLayout(params: {
  readonly workspaceAccess: WorkspaceAccess;
  /** The agent's own workspace on the host. */
  readonly agentWorkspace: string;
  /** The sandbox workspace on the host (unused with `rw`). */
  readonly sandboxWorkspace: string;
}): SandboxLayout {
  switch (params.workspaceAccess) {
    case "rw":
      return {
        cwd: SANDBOX_WORKSPACE_PATH,
        mounts: [{ path: SANDBOX_WORKSPACE_PATH, hostPath: params.agentWorkspace, writable: true }],
      };
    case "ro":
      return {
        cwd: SANDBOX_WORKSPACE_PATH,
        mounts: [
          { path: SANDBOX_WORKSPACE_PATH, hostPath: params.sandboxWorkspace, writable: true },
          { path: AGENT_WORKSPACE_PATH, hostPath: params.agentWorkspace, writable: false },
        ],
      };
    case "none":
      return {
        cwd: SANDBOX_WORKSPACE_PATH,
        mounts: [{ path: SANDBOX_WORKSPACE_PATH, hostPath: params.sandboxWorkspace, writable: true }],
      };
  }
}

/** Skill folders mounted read-only under `SKILLS_PATH`, and where each host folder appears inside. */
export interface SkillFolderMounts {
  /** One read-only mount per folder, at `/skills/<name>`. */
  readonly mounts: readonly SandboxMount[];
  /** Host folder (as given, resolved) → its path inside (`/skills/<name>`). */
  readonly pathInside: ReadonlyMap<string, string>;
}

/**
 * Read-only mounts of exactly these host folders (skill folders: a SKILL.md and the files beside it), each at
 * `/skills/<its folder name>` — a name made safe (`[A-Za-z0-9._-]`, never `.` or `..`), with `-2`, `-3`, …
 * when two folders share one. The same folder given twice is mounted once. Nothing else of the host is added:
 * a sandboxed session reads its skills without seeing the folders they sit in.
 */
export function skillFolderMounts(hostFolders: Iterable<string>): SkillFolderMounts {
  const mounts: SandboxMount[] = [];
  const pathInside = new Map<string, string>();
  const taken = new Set<string>();
  for (const folder of hostFolders) {
    const hostPath = resolve(folder);
    if (pathInside.has(hostPath)) continue;
    const base =
      basename(hostPath)
        .replace(/[^A-Za-z0-9._-]+/g, "_")
        .replace(/^\.+$/, "_") || "skill";
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
    taken.add(name);
    const path = `${SKILLS_PATH}/${name}`;
    mounts.push({ path, hostPath, writable: false });
    pathInside.set(hostPath, path);
  }
  return { mounts, pathInside };
}

/**
 * The host directory of a scope's sandbox workspace: a readable slug of the key plus a hash of it, so two
 * keys never share a directory and no key (`../x`, `a/b`) leaves the root.
 */
export function sandboxWorkspaceDir(root: string, scopeKey: string): string {
  const slug = scopeKey
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[-.]+|-+$/g, "")
    .slice(0, 48);
  const hash = createHash("sha256").update(scopeKey).digest("hex").slice(0, 12);
  return join(root, `${slug || "sandbox"}-${hash}`);
}

/** The host uid and gid sandboxed commands run as when the gateway runs as root: nobody. */
export const SANDBOX_HOST_ID = 65534;

/**
 * Makes a sandbox workspace directory (0700) and, when this process runs as root, gives that directory — only
 * it, never what is in it — to `SANDBOX_HOST_ID`, the user a root gateway's sandboxes run as (the bwrap engine
 * refuses a root-owned working directory). Everything inside was made by the sandbox (so is its user's already);
 * walking it as root would follow whatever links a running command swaps in (a recursive chown of host files).
 * The directory itself is changed through a descriptor opened without following links. Returns the directory.
 */
export function ensureSandboxWorkspace(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.getuid?.() !== 0) return dir;
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const stat = fstatSync(fd);
    if (stat.uid === 0 || stat.gid === 0) fchownSync(fd, SANDBOX_HOST_ID, SANDBOX_HOST_ID);
  } finally {
    closeSync(fd);
  }
  return dir;
}

/** Config-style settings (seconds, MiB) as limits. */
export function sandboxLimits(settings: {
  readonly timeoutSeconds: number;
  readonly maxOutputBytes: number;
  readonly memoryMb: number;
  readonly maxProcesses: number;
  readonly maxFileMb: number;
  readonly tmpMb: number;
}): SandboxLimits {
  const mib = 1024 * 1024;
  return {
    timeoutMs: settings.timeoutSeconds * 1000,
    maxOutputBytes: settings.maxOutputBytes,
    memoryBytes: settings.memoryMb * mib,
    maxProcesses: settings.maxProcesses,
    maxFileBytes: settings.maxFileMb * mib,
    tmpBytes: settings.tmpMb * mib,
  };
}
