// The skills a session sees: discovered, gated and rendered once, then kept with the session (OpenClaw keeps a
// `skillsSnapshot` on the session entry). The snapshot is a `custom` transcript entry on the session's branch,
// recorded by its first turn, like the bootstrap record: a later turn replays it (no disk read), so a skill
// added, edited or removed shows in the next session, never mid-conversation, and the prompt stays the same
// across restarts and processes. Owns: the folders a config names, the snapshot's shape and record, reading a
// recorded one back (a damaged record is never trusted). Does not own: the gates (eligibility.ts), the
// catalog text (prompt.ts) or where the snapshot is rendered (system-prompt.ts's Skills section).
import { homedir } from "node:os";
import { join } from "node:path";
import type { KernelConfig } from "@agent-kernel/config";
import type { SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import { latestOnBranch } from "../session-manager/index.ts";
import { currentSkillHost, type SkillHost, type SkillStatus, skillStatuses } from "./eligibility.ts";
import { discoverSkills, expandSkillDir, type SkillDiscovery, type SkillSource } from "./load.ts";
import { formatSkillsCatalog } from "./prompt.ts";

/** The transcript entry holding a session's skills snapshot (not part of the model context). */
export const SKILLS_ENTRY_TYPE = "agent-kernel.skills";
const SNAPSHOT_VERSION = 1;

/** One skill as the session's prompt lists it. */
export interface SnapshotSkill {
  readonly name: string;
  readonly description: string;
  readonly filePath: string;
  readonly source: SkillSource;
}

/** What a session's prompt lists: the skills admitted to the catalog and the catalog's text. */
export interface SkillsSnapshot {
  readonly version: typeof SNAPSHOT_VERSION;
  readonly skills: readonly SnapshotSkill[];
  /** The `<available_skills>` catalog (empty when no skill is offered). */
  readonly prompt: string;
}

/** Everything known about an agent's skills now: the folders, what was found and each skill's gates. */
export interface SkillsReport extends SkillDiscovery {
  readonly folders: {
    readonly workspaceDir: string;
    readonly extraDirs: readonly string[];
    readonly bundledDir: string | undefined;
    readonly managedDir: string;
  };
  readonly statuses: readonly SkillStatus[];
}

/** Where the managed folder is looked for and what the gates read. */
export interface SkillsOptions {
  /** The resolved state dir (the kernel's `runtime.stateDir`); else the config's, the environment's, ~/.agent-kernel. */
  readonly stateDir?: string | undefined;
  readonly host?: SkillHost | undefined;
}

function stateDirOf(config: KernelConfig, options: SkillsOptions, env: NodeJS.ProcessEnv): string {
  const dir = options.stateDir ?? config.store.stateDir ?? env.AGENT_KERNEL_STATE_DIR?.trim() ?? "";
  return dir === "" ? join(homedir(), ".agent-kernel") : expandSkillDir(dir, process.cwd());
}

/** The folders the config names for a workspace: extra, bundled, managed (default `<state dir>/skills`), workspace. */
export function skillFoldersOf(
  config: KernelConfig,
  workspaceDir: string,
  options: SkillsOptions = {},
): SkillsReport["folders"] {
  const env = (options.host?.env ?? process.env) as NodeJS.ProcessEnv;
  const load = config.skills.load;
  return {
    workspaceDir,
    extraDirs: load.extraDirs.map((dir) => expandSkillDir(dir, workspaceDir)),
    bundledDir: load.bundledDir === undefined ? undefined : expandSkillDir(load.bundledDir, workspaceDir),
    managedDir:
      load.managedDir === undefined
        ? join(stateDirOf(config, options, env), "skills")
        : expandSkillDir(load.managedDir, workspaceDir),
  };
}

/** Discovers and gates an agent's skills now (what `agent skills list` shows; what a new session snapshots). */
export function inspectSkills(
  config: KernelConfig,
  workspaceDir: string,
  options: SkillsOptions = {},
): SkillsReport {
  const host = options.host ?? currentSkillHost();
  const folders = skillFoldersOf(config, workspaceDir, { ...options, host });
  const discovery = discoverSkills(folders, config.skills.limits);
  return { ...discovery, folders, statuses: skillStatuses(discovery.skills, config, host) };
}

/** The snapshot of the skills offered now: eligible ones the model may invoke, in OpenClaw's catalog. */
export function buildSkillsSnapshot(
  config: KernelConfig,
  workspaceDir: string,
  options: SkillsOptions = {},
): SkillsSnapshot {
  return snapshotOf(inspectSkills(config, workspaceDir, options), config);
}

/** The snapshot of a report (its eligible, model-invocable skills within the catalog's budget). */
export function snapshotOf(report: SkillsReport, config: KernelConfig): SkillsSnapshot {
  const offered = report.statuses
    .filter((status) => status.eligible && !status.skill.disableModelInvocation)
    .map((status) => status.skill);
  const catalog = formatSkillsCatalog(offered, config.skills.limits);
  const admitted = new Set(catalog.skills.map((skill) => skill.filePath));
  return {
    version: SNAPSHOT_VERSION,
    skills: offered
      .filter((skill) => admitted.has(skill.filePath))
      .map(({ name, description, filePath, source }) => ({ name, description, filePath, source })),
    prompt: catalog.prompt,
  };
}

/** Each recorded snapshot's data, read back once (null: not a snapshot); a warm session asks every turn. */
const readBack = new WeakMap<object, SkillsSnapshot | null>();

/** A recorded snapshot read back, or undefined when the data is not one (a damaged record is rebuilt). */
export function recordedSkillsSnapshot(data: unknown): SkillsSnapshot | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  let snapshot = readBack.get(data);
  if (snapshot === undefined) {
    snapshot = readSnapshot(data) ?? null;
    readBack.set(data, snapshot);
  }
  return snapshot ?? undefined;
}

function readSnapshot(data: object): SkillsSnapshot | undefined {
  const { version, skills, prompt } = data as Record<string, unknown>;
  if (version !== SNAPSHOT_VERSION || typeof prompt !== "string" || !Array.isArray(skills)) return undefined;
  const valid = skills.every(
    (skill) =>
      typeof skill === "object" &&
      skill !== null &&
      typeof skill.name === "string" &&
      typeof skill.description === "string" &&
      typeof skill.filePath === "string" &&
      typeof skill.source === "string",
  );
  return valid ? { version: SNAPSHOT_VERSION, skills: skills as SnapshotSkill[], prompt } : undefined;
}

const isSkillsRecord = (entry: SessionEntry): boolean =>
  entry.type === "custom" && entry.customType === SKILLS_ENTRY_TYPE;
const isUserMessage = (entry: SessionEntry): boolean =>
  entry.type === "message" && entry.message.role === "user";

/** A session with no skills: nothing listed, nothing recorded. */
const NO_SKILLS: SkillsSnapshot = { version: SNAPSHOT_VERSION, skills: [], prompt: "" };

/**
 * The session's snapshot: the one recorded on its branch; else, on the session's first turn, one taken now
 * (recorded when it lists any skill — a session without skills records nothing, and its absence on a later
 * turn means none); else none (a session from before skills existed gets them in its next session, not
 * mid-conversation). `build` is called only on a first turn without a record.
 */
export function resolveSessionSkills(
  sessionManager: SessionManager,
  build: () => SkillsSnapshot,
): SkillsSnapshot {
  const record = latestOnBranch(sessionManager, "custom", isSkillsRecord);
  const recorded =
    record?.type === "custom" ? recordedSkillsSnapshot((record as { data?: unknown }).data) : undefined;
  if (recorded !== undefined) return recorded;
  const firstTurn = latestOnBranch(sessionManager, "message", isUserMessage) === undefined;
  if (!firstTurn) return NO_SKILLS;
  const snapshot = build();
  if (snapshot.skills.length > 0) sessionManager.appendCustomEntry(SKILLS_ENTRY_TYPE, snapshot);
  return snapshot;
}
