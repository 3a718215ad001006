// SKILL.md skills: discovery with OpenClaw's precedence, gating, the prompt catalog and the session snapshot.
export { type AgentSkillsReport, inspectAgentSkills } from "./agent-skills.ts";
export {
  binaryOnPath,
  currentSkillHost,
  type SkillHost,
  type SkillStatus,
  skillStatuses,
} from "./eligibility.ts";
export {
  discoverSkills,
  expandSkillDir,
  type LoadedSkill,
  SKILL_SOURCES,
  type SkillDiagnostic,
  type SkillDiscovery,
  type SkillDiscoveryLimits,
  type SkillFolders,
  type SkillShadow,
  type SkillSource,
} from "./load.ts";
export {
  parseSkillHeader,
  type SkillHeader,
  type SkillManifest,
  type SkillRequirements,
} from "./manifest.ts";
export {
  type CatalogSkill,
  formatSkillsCatalog,
  relocateSkillsCatalog,
  type SkillsCatalog,
} from "./prompt.ts";
export {
  buildSkillsSnapshot,
  inspectSkills,
  recordedSkillsSnapshot,
  resolveSessionSkills,
  SKILLS_ENTRY_TYPE,
  type SkillsOptions,
  type SkillsReport,
  type SkillsSnapshot,
  type SnapshotSkill,
  skillFoldersOf,
  snapshotOf,
} from "./snapshot.ts";
