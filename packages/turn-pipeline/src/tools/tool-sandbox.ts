// Where a turn's tools run. Owns: turning the session's sandbox context (runtime-resolver) into what the tools
// use — the engine (`bwrap` for a sandboxed session, `host` otherwise), the view (cwd and mounts), network,
// limits and the scrubbed environment every command gets — and the preflight that refuses a sandboxed turn
// before any model call when its engine cannot start (never falling back to the host). Also creates the
// scope's sandbox workspace, and adds the session's skill folders to the view, read-only (`withSkillFolders`). Does not own: the engines (@agent-kernel/sandbox) or deciding whether a
// session is sandboxed (runtime-resolver).
import { lstatSync, realpathSync } from "node:fs";
import { basename, dirname, relative, resolve, sep } from "node:path";
import { AGENT_DEFAULTS, type KernelConfig } from "@agent-kernel/config";
import type { SandboxContext } from "@agent-kernel/runtime-resolver";
import {
  collectSecretValues,
  createBwrapEngine,
  createHostEngine,
  DEFAULT_ENV_ALLOW,
  type EngineStatus,
  ensureSandboxWorkspace,
  type SandboxEngine,
  type SandboxLimits,
  type SandboxMount,
  SandboxUnavailableError,
  sandboxLimits,
  scrubEnvironment,
  skillFolderMounts,
} from "@agent-kernel/sandbox";
import { relocateSkillsCatalog } from "../skills/prompt.ts";
import { isWithin } from "./path-view.ts";

/** Everything a turn's `exec` and file tools need to run where the session's sandbox says. */
export interface ToolSandbox {
  readonly sandboxed: boolean;
  readonly engine: SandboxEngine;
  /** Working directory as the tools see it. */
  readonly cwd: string;
  readonly mounts: readonly SandboxMount[];
  readonly network: boolean;
  readonly limits: SandboxLimits;
  /** The environment of every command: the allowlist of the gateway's own, minus any value the config holds. */
  readonly env: Readonly<Record<string, string>>;
  /** The engine's probe (sandboxed sessions only): version and how the process limit is enforced. */
  readonly status?: EngineStatus | undefined;
}

/** Engines a caller may supply (a test's bwrap at another path); absent: one per process. */
export interface SandboxEngines {
  readonly bwrap?: SandboxEngine | undefined;
  readonly host?: SandboxEngine | undefined;
}

let defaultBwrap: SandboxEngine | undefined;
let defaultHost: SandboxEngine | undefined;

/** The process's one host engine (unsandboxed commands), unless a caller supplies its own. */
export function sharedHostEngine(): SandboxEngine {
  defaultHost ??= createHostEngine();
  return defaultHost;
}

/**
 * An unsandboxed session's tools' sandbox with no session behind it (tools built outside a turn): the
 * workspace as itself, the config's default limits, the default environment allowlist.
 */
export function hostToolSandbox(workspaceDir: string): ToolSandbox {
  const root = resolve(workspaceDir);
  return {
    sandboxed: false,
    engine: sharedHostEngine(),
    cwd: root,
    mounts: [{ path: root, hostPath: root, writable: true }],
    network: true,
    limits: sandboxLimits(AGENT_DEFAULTS.sandbox),
    env: defaultEnvironment(),
  };
}

let defaultEnv: Readonly<Record<string, string>> | undefined;
const defaultEnvironment = (): Readonly<Record<string, string>> => {
  defaultEnv ??= Object.freeze(scrubEnvironment(process.env));
  return defaultEnv;
};

const envByConfig = new WeakMap<object, Map<string, Readonly<Record<string, string>>>>();

/**
 * The environment of every command of this config: the default allowlist plus `tools.exec.envAllow`, without
 * any variable whose value appears in the config (a `${ANTHROPIC_API_KEY}` reference puts the key there).
 * Computed once per config object and environment snapshot.
 */
export function execEnvironment(
  config: KernelConfig,
  source: Readonly<Record<string, string | undefined>> = process.env,
): Readonly<Record<string, string>> {
  let byConfig = envByConfig.get(config);
  if (byConfig === undefined) {
    byConfig = new Map();
    envByConfig.set(config, byConfig);
  }
  const key = source === process.env ? "process" : JSON.stringify(source);
  let env = byConfig.get(key);
  if (env === undefined) {
    env = Object.freeze(
      scrubEnvironment(source, {
        allow: [...DEFAULT_ENV_ALLOW, ...(config.tools.exec?.envAllow ?? [])],
        secretValues: collectSecretValues(config),
      }),
    );
    byConfig.set(key, env);
  }
  return env;
}

/**
 * The tools' sandbox for a turn. For a sandboxed session, probes the engine and throws
 * `SandboxUnavailableError` when it cannot start — the caller ends the turn before the model is called.
 */
export async function prepareToolSandbox(params: {
  readonly config: KernelConfig;
  readonly sandbox: SandboxContext;
  readonly engines?: SandboxEngines | undefined;
}): Promise<ToolSandbox> {
  const { sandbox } = params;
  const env = execEnvironment(params.config);
  if (!sandbox.sandboxed) {
    return {
      sandboxed: false,
      engine: params.engines?.host ?? sharedHostEngine(),
      cwd: sandbox.cwd,
      mounts: sandbox.mounts,
      network: true,
      limits: sandbox.limits,
      env,
    };
  }
  defaultBwrap ??= createBwrapEngine();
  const engine = params.engines?.bwrap ?? defaultBwrap;
  const status = await engine.probe();
  if (!status.available) throw new SandboxUnavailableError(status.engine, status.problem, status.fix);
  // The scope's own workspace is made on first use (and, under a root gateway, given to the unprivileged user
  // its sandboxes run as); an agent workspace mounted read-write is the operator's and is left as it is.
  if (sandbox.workspaceAccess !== "rw") ensureSandboxWorkspace(sandbox.workspaceDir);
  engine.check({
    cwd: sandbox.cwd,
    env,
    mounts: sandbox.mounts,
    network: sandbox.network,
    limits: sandbox.limits,
  });
  return {
    sandboxed: true,
    engine,
    cwd: sandbox.cwd,
    mounts: sandbox.mounts,
    network: sandbox.network,
    limits: sandbox.limits,
    env,
    status,
  };
}

/** The skills a session's prompt lists (its snapshot): where each SKILL.md is on the host, and the catalog. */
export interface SessionSkillFiles {
  readonly skills: readonly { readonly filePath: string }[];
  /** The `<available_skills>` catalog naming each SKILL.md at its host path. */
  readonly prompt: string;
}

/** A turn's sandbox with its skills readable, and the catalog naming them where the tools see them. */
export interface SkillReadAccess {
  readonly sandbox: ToolSandbox;
  readonly skillsPrompt: string;
}

/**
 * The folder's real path when it is a directory itself (not a link to one), else undefined. What is bound is
 * that real path, resolved now: bwrap resolves a bind's source again at every command, so binding the spelled
 * path would follow a link swapped in later to whatever it leads to.
 */
const realDirectory = (path: string): string | undefined => {
  try {
    return lstatSync(path).isDirectory() ? realpathSync(path) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * The sandbox with exactly the listed skills' folders (each SKILL.md's folder: the file and what it refers to
 * beside it) added read-only, so `read` (and a sandboxed `exec`) reach them and nothing else outside the
 * workspace. Unsandboxed, a folder is added at its own host path (the catalog's path works as it is); one
 * already in a mount (a workspace skill) is left to it. Sandboxed, the catalog's `<location>`s are rewritten to
 * where the sandbox sees each file (the host paths do not exist in there): a folder under a mounted directory
 * (a workspace skill with the agent workspace mounted) is named there; any other is mounted read-only at
 * `/skills/<name>` (@agent-kernel/sandbox's `skillFolderMounts`) — unless it is missing on the host (a skill
 * removed since the session's snapshot: a bind of a missing folder would fail every sandboxed command).
 */
export function withSkillFolders(sandbox: ToolSandbox, skills: SessionSkillFiles): SkillReadAccess {
  if (skills.skills.length === 0) return { sandbox, skillsPrompt: skills.prompt };
  if (sandbox.sandboxed) return skillFoldersFor(sandbox, skills);
  // Unsandboxed, the answer is a function of the mounts and the snapshot alone: a warm session asks each turn.
  const mountsKey = sandbox.mounts
    .map((mount) => `${mount.path}\u0000${mount.hostPath}\u0000${mount.writable}`)
    .join("\u0001");
  const key = `${mountsKey}\u0002${skills.prompt}`;
  let added = hostSkillMounts.get(key);
  if (added === undefined) {
    added = skillFoldersFor(sandbox, skills).sandbox.mounts.slice(sandbox.mounts.length);
    if (hostSkillMounts.size >= MAX_CACHED_SKILL_VIEWS) hostSkillMounts.clear();
    hostSkillMounts.set(key, added);
  }
  return added.length === 0
    ? { sandbox, skillsPrompt: skills.prompt }
    : { sandbox: { ...sandbox, mounts: [...sandbox.mounts, ...added] }, skillsPrompt: skills.prompt };
}

/** Skill mounts of unsandboxed views, by the view's mounts and the catalog (bounded: cleared when full). */
const hostSkillMounts = new Map<string, readonly ToolSandbox["mounts"][number][]>();
const MAX_CACHED_SKILL_VIEWS = 256;

function skillFoldersFor(sandbox: ToolSandbox, skills: SessionSkillFiles): SkillReadAccess {
  const folders = [...new Set(skills.skills.map((skill) => dirname(resolve(skill.filePath))))].filter(
    (folder) => folder !== "/",
  );
  if (!sandbox.sandboxed) {
    // Unsandboxed, a folder is shown at its own path and read at its real path, resolved once here (this runs
    // when withSkillFolders' cache misses): a link swapped in for the folder later leads nowhere new. A folder
    // that is a link, or missing, is left out.
    const mounts = folders
      .filter((folder) => !sandbox.mounts.some((mount) => isWithin(mount.path, folder)))
      .flatMap((folder) => {
        const real = realDirectory(folder);
        return real === undefined ? [] : [{ path: folder, hostPath: real, writable: false }];
      });
    return mounts.length === 0
      ? { sandbox, skillsPrompt: skills.prompt }
      : { sandbox: { ...sandbox, mounts: [...sandbox.mounts, ...mounts] }, skillsPrompt: skills.prompt };
  }
  // Sandboxed. A folder the sandbox already sees (a workspace skill under a mounted workspace) is named where it
  // is seen: never bound again, since the sandbox could have swapped that path for a link to any host folder
  // (bwrap follows a bind's source on the host). Only folders outside every mount — which no sandboxed command
  // can change — are bound, at /skills/<name>; one missing on the host is left out (its bind would fail every
  // command).
  const seenAt = new Map<string, string>();
  const realOf = new Map<string, string>();
  for (const folder of folders) {
    const inside = pathInMounts(sandbox.mounts, folder);
    if (inside !== undefined) seenAt.set(folder, inside);
    else {
      const real = realDirectory(folder);
      if (real !== undefined) realOf.set(folder, real);
    }
  }
  const { mounts, pathInside } = skillFolderMounts([...new Set(realOf.values())]);
  const moves = new Map<string, string>();
  for (const skill of skills.skills) {
    const file = resolve(skill.filePath);
    const folder = dirname(file);
    const real = realOf.get(folder);
    const at = seenAt.get(folder) ?? (real === undefined ? undefined : pathInside.get(real));
    if (at !== undefined) moves.set(skill.filePath, `${at}/${basename(file)}`);
  }
  return {
    sandbox: mounts.length === 0 ? sandbox : { ...sandbox, mounts: [...sandbox.mounts, ...mounts] },
    skillsPrompt: relocateSkillsCatalog(skills.prompt, moves),
  };
}

/**
 * Where a host folder is inside the sandbox when a mount holds it — by its spelling, else by its real path (a
 * link planted on the way leads elsewhere on the host, and is then no reason to bind it) — or undefined.
 */
function pathInMounts(mounts: ToolSandbox["mounts"], folder: string): string | undefined {
  const real = realpathOrSelf(folder);
  let best: { readonly path: string; readonly rel: string; readonly depth: number } | undefined;
  for (const mount of mounts) {
    for (const [root, candidate] of [
      [resolve(mount.hostPath), folder],
      [realpathOrSelf(mount.hostPath), real],
    ] as const) {
      if (!isWithin(root, candidate)) continue;
      if (best === undefined || root.length > best.depth)
        best = { path: mount.path, rel: relative(root, candidate), depth: root.length };
    }
  }
  if (best === undefined) return undefined;
  return best.rel === "" ? best.path : `${best.path.replace(/\/+$/, "")}/${best.rel.split(sep).join("/")}`;
}

const realpathOrSelf = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
};
