// Discovering SKILL.md skills in their folders, with OpenClaw 2026.9.6's precedence: extra folders (config
// `skills.load.extraDirs`), then bundled, then managed (`<state dir>/skills`, OpenClaw's `~/.openclaw/skills`),
// then the workspace's `skills/` — a later source wins a name conflict, and the result is sorted by name.
// Owns: which folders are read, the per-folder limits (candidates, skills per source, file size) and reading
// each file defensively (the workspace is writable by the model: only a regular file, never through a link
// that leaves its source folder, never blocking on a FIFO, never more than the size limit). Does not own:
// what the file says (manifest.ts) nor whether a skill is offered (eligibility.ts).
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { SKILLS_DEFAULTS } from "@agent-kernel/config";
import { parseSkillHeader, type SkillHeader, type SkillManifest } from "./manifest.ts";

/** Where a skill came from, lowest precedence first. */
export type SkillSource = "extra" | "bundled" | "managed" | "workspace";
/** The sources in precedence order: a later one wins a name conflict. */
export const SKILL_SOURCES: readonly SkillSource[] = ["extra", "bundled", "managed", "workspace"];

/** One loaded skill: what its SKILL.md says and where it is. */
export interface LoadedSkill {
  readonly name: string;
  readonly description: string;
  /** The absolute path of its SKILL.md: what the model reads on demand. */
  readonly filePath: string;
  readonly baseDir: string;
  readonly source: SkillSource;
  /** The key of its `skills.entries` settings: the manifest's `skillKey`, else its name. */
  readonly skillKey: string;
  readonly manifest: SkillManifest | undefined;
  readonly disableModelInvocation: boolean;
  readonly userInvocable: boolean;
}

/** A file or folder that was not loaded, and why. */
export interface SkillDiagnostic {
  readonly path: string;
  readonly message: string;
}

/** A skill that lost a name conflict to a higher-precedence source. */
export interface SkillShadow {
  readonly name: string;
  readonly winner: string;
  readonly loser: string;
}

/** The folders to read: absent ones are skipped. */
export interface SkillFolders {
  readonly workspaceDir: string;
  readonly managedDir?: string | undefined;
  readonly bundledDir?: string | undefined;
  readonly extraDirs?: readonly string[] | undefined;
}

/** OpenClaw's discovery limits (config `skills.limits`). */
export interface SkillDiscoveryLimits {
  readonly maxCandidatesPerRoot: number;
  readonly maxSkillsLoadedPerSource: number;
  readonly maxSkillFileBytes: number;
}

/** What discovery found: the winners by name (sorted), the diagnostics and the shadowed duplicates. */
export interface SkillDiscovery {
  readonly skills: readonly LoadedSkill[];
  readonly diagnostics: readonly SkillDiagnostic[];
  readonly shadowed: readonly SkillShadow[];
}

/**
 * Parsed headers by file text (and folder name, the name's fallback), as OpenClaw's localSkillContentCache: a
 * new session re-reads every SKILL.md but parses (YAML, ~0.1 ms each) only the ones that changed.
 */
const headerCache = new Map<string, SkillHeader>();
const HEADER_CACHE_ENTRIES = 256;
const HEADER_CACHE_MAX_CHARS = 64 * 1024;

function cachedHeader(text: string, folderName: string): SkillHeader {
  if (text.length > HEADER_CACHE_MAX_CHARS) return parseSkillHeader(text, folderName);
  const key = `${folderName}\u0000${text}`;
  const cached = headerCache.get(key);
  if (cached !== undefined) {
    headerCache.delete(key); // most recently used last
    headerCache.set(key, cached);
    return cached;
  }
  const header = parseSkillHeader(text, folderName);
  headerCache.set(key, header);
  if (headerCache.size > HEADER_CACHE_ENTRIES) headerCache.delete(headerCache.keys().next().value as string);
  return header;
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** `~` and `~/…` as the home directory; relative paths against `base`. */
export function expandSkillDir(dir: string, base: string): string {
  const expanded = dir === "~" ? homedir() : dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir;
  return resolve(base, expanded);
}

/** Reads every source's folder and merges them by name, a later source winning. Synchronous, like OpenClaw's. */
export function discoverSkills(
  folders: SkillFolders,
  limits: Partial<SkillDiscoveryLimits> = {},
): SkillDiscovery {
  const bounds: SkillDiscoveryLimits = {
    maxCandidatesPerRoot: limits.maxCandidatesPerRoot ?? SKILLS_DEFAULTS.maxCandidatesPerRoot,
    maxSkillsLoadedPerSource: limits.maxSkillsLoadedPerSource ?? SKILLS_DEFAULTS.maxSkillsLoadedPerSource,
    maxSkillFileBytes: limits.maxSkillFileBytes ?? SKILLS_DEFAULTS.maxSkillFileBytes,
  };
  const roots: { dir: string; source: SkillSource }[] = [
    ...(folders.extraDirs ?? []).map((dir) => ({ dir, source: "extra" as const })),
    ...(folders.bundledDir ? [{ dir: folders.bundledDir, source: "bundled" as const }] : []),
    ...(folders.managedDir ? [{ dir: folders.managedDir, source: "managed" as const }] : []),
    { dir: join(folders.workspaceDir, "skills"), source: "workspace" },
  ];
  const diagnostics: SkillDiagnostic[] = [];
  const shadowed: SkillShadow[] = [];
  const byName = new Map<string, LoadedSkill>();
  const loadedPerSource = new Map<SkillSource, number>();
  for (const root of roots) {
    for (const skill of loadRoot(root.dir, root.source, bounds, diagnostics, loadedPerSource)) {
      const replaced = byName.get(skill.name);
      if (replaced !== undefined && replaced.filePath !== skill.filePath) {
        shadowed.push({ name: skill.name, winner: skill.filePath, loser: replaced.filePath });
      }
      byName.set(skill.name, skill);
    }
  }
  const skills = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name, "en"));
  return { skills, diagnostics, shadowed };
}

function loadRoot(
  dir: string,
  source: SkillSource,
  limits: SkillDiscoveryLimits,
  diagnostics: SkillDiagnostic[],
  loadedPerSource: Map<SkillSource, number>,
): LoadedSkill[] {
  let rootReal: string;
  let children: string[];
  try {
    rootReal = realpathSync(dir);
    children = readdirSync(rootReal, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
      .map((entry) => entry.name)
      .filter((name) => !name.startsWith("."))
      .sort((a, b) => a.localeCompare(b, "en"));
  } catch {
    return []; // a missing or unreadable folder holds no skills
  }
  if (children.length > limits.maxCandidatesPerRoot) {
    diagnostics.push({
      path: dir,
      message: `${children.length} folders; only the first ${limits.maxCandidatesPerRoot} are read (skills.limits.maxCandidatesPerRoot)`,
    });
    children = children.slice(0, limits.maxCandidatesPerRoot);
  }
  const skills: LoadedSkill[] = [];
  for (const child of children) {
    if ((loadedPerSource.get(source) ?? 0) >= limits.maxSkillsLoadedPerSource) {
      diagnostics.push({
        path: dir,
        message: `more than ${limits.maxSkillsLoadedPerSource} ${source} skills; the rest are skipped (skills.limits.maxSkillsLoadedPerSource)`,
      });
      break;
    }
    const skillDir = join(dir, child);
    const filePath = join(skillDir, "SKILL.md");
    const read = readSkillFile(filePath, rootReal, limits.maxSkillFileBytes);
    if (read === undefined) continue; // a folder without SKILL.md is not a skill
    if (typeof read !== "string") {
      diagnostics.push({ path: filePath, message: read.refused });
      continue;
    }
    try {
      const header = cachedHeader(read, child);
      skills.push({
        name: header.name,
        description: header.description,
        filePath: resolve(filePath),
        baseDir: resolve(skillDir),
        source,
        skillKey: header.manifest?.skillKey ?? header.name,
        manifest: header.manifest,
        disableModelInvocation: header.disableModelInvocation,
        userInvocable: header.userInvocable,
      });
      loadedPerSource.set(source, (loadedPerSource.get(source) ?? 0) + 1);
    } catch (error) {
      diagnostics.push({ path: filePath, message: error instanceof Error ? error.message : String(error) });
    }
  }
  return skills;
}

/** The file's text; undefined when there is none; `refused` naming why a present one is not read. */
function readSkillFile(
  path: string,
  rootReal: string,
  maxBytes: number,
): string | { refused: string } | undefined {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    return { refused: "cannot be resolved (a link loop or no permission)" };
  }
  const rel = relative(rootReal, real);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    return { refused: "a symbolic link leaving its skills folder; not read" };
  }
  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch {
    return { refused: "cannot be opened" };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { refused: "not a regular file" };
    if (stats.size > maxBytes) {
      return { refused: `${stats.size} bytes, larger than ${maxBytes} (skills.limits.maxSkillFileBytes)` };
    }
    const buffer = Buffer.alloc(stats.size);
    let filled = 0;
    while (filled < buffer.length) {
      const bytes = readSync(fd, buffer, filled, buffer.length - filled, filled);
      if (bytes === 0) break;
      filled += bytes;
    }
    return buffer.subarray(0, filled).toString("utf8");
  } finally {
    closeSync(fd);
  }
}
