// @agent-kernel/sandbox: run a shell command contained. One small interface (`SandboxEngine`) with two
// engines: `bwrap` (bubblewrap namespaces: only chosen directories, no network, no capabilities, limits on
// time, output, memory, file size and processes) and `host` (no containment; the same bounds on time and
// output). Plus the environment allowlist every command gets and the mount layout of a sandboxed session.
export {
  type BwrapEngineOptions,
  bwrapArgs,
  createBwrapEngine,
  SANDBOX_PATH,
  SANDBOX_UID,
} from "./bwrap-engine.ts";
export {
  collectSecretValues,
  DEFAULT_ENV_ALLOW,
  type ScrubOptions,
  scrubEnvironment,
} from "./environment.ts";
export { createHostEngine } from "./host-engine.ts";
export {
  AGENT_WORKSPACE_PATH,
  ensureSandboxWorkspace,
  SANDBOX_HOST_ID,
  SANDBOX_WORKSPACE_PATH,
  type SandboxLayout,
  SKILLS_PATH,
  type SkillFolderMounts,
  sandboxLayout,
  sandboxLimits,
  sandboxWorkspaceDir,
  skillFolderMounts,
  type WorkspaceAccess,
} from "./layout.ts";
export {
  type EngineStatus,
  type ProcessLimitEnforcement,
  type SandboxCommand,
  type SandboxEngine,
  type SandboxLimits,
  type SandboxMount,
  type SandboxResult,
  type SandboxSettings,
  SandboxUnavailableError,
} from "./types.ts";
