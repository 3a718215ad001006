// @agent-kernel/config: the whole config the kernel reads, as one zod schema,
// loaded from JSON5 with ${ENV} substitution and every default filled.
export { type AgentConfig, defaultAgentId, listAgentIds, resolveAgentConfig } from "./agents.ts";
export {
  CONFIG_ENV_VAR,
  type LoadConfigOptions,
  type LoadedConfig,
  resolvePath,
} from "./config-file.ts";
export {
  AGENT_DEFAULTS,
  AUTH_COOLDOWN_DEFAULTS,
  CHANNEL_DEFAULTS,
  CRON_DEFAULTS,
  CRON_JOB_DEFAULTS,
  DEFAULT_AGENT_ID,
  DEFAULT_CONFIG_FILE,
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_MAIN_KEY,
  defaultMaxConcurrent,
  QUEUE_DEFAULTS,
  SESSION_DEFAULTS,
  SKILLS_DEFAULTS,
  STORE_DEFAULTS,
  TOOLS_DEFAULTS,
  WEBCHAT_DEFAULTS,
} from "./defaults.ts";
export { type Environment, substituteEnv } from "./env.ts";
export {
  ConfigError,
  type ConfigIssue,
  type ConfigIssueKind,
  type ConfigPath,
  describeFound,
  formatConfigIssues,
  formatPath,
  issuesFromZod,
  type KnownKeysAt,
  knownKeysOf,
} from "./errors.ts";
export {
  findNonOwnerHostExposure,
  type NonOwnerHostExposure,
  type NonOwnerHostToolsSetting,
  resolveNonOwnerHostTools,
} from "./exposure.ts";
export { type ConfigFileExposure, checkConfigFileExposure } from "./file-exposure.ts";
export { CONFIG_SCHEMA_ID, configJsonSchema } from "./json-schema.ts";
export { findLiteralSecrets, type LiteralSecret } from "./literal-secrets.ts";
export {
  loadConfig,
  type ParseConfigOptions,
  type ParseConfigResult,
  parseConfig,
  parseConfigText,
  safeParseConfig,
} from "./load.ts";
export {
  CONFIG_CACHE_ENV_VAR,
  configCacheDir,
  type LoadConfigCachedOptions,
  loadConfigCached,
} from "./load-cached.ts";
export { redactSecrets } from "./redact.ts";
export type { KernelConfig, KernelConfigInput } from "./schema.ts";
export type { AgentDefaults, AgentEntry } from "./schema-agents.ts";
export type { Binding, ChannelConfig } from "./schema-channels.ts";
export {
  AGENT_ID_PATTERN,
  KNOWN_CHANNELS,
  PROVIDER_APIS,
  QUEUE_MODES,
  THINKING_LEVELS,
  TOOL_PROFILES,
} from "./schema-constants.ts";
export { configSchema } from "./schema-loader.ts";
export type { SkillsConfig } from "./schema-skills.ts";
export type { AgentToolsConfig, ApplyPatchConfig, ToolsConfig, WebFetchConfig } from "./schema-tools.ts";
export { isCredentialKey, redactSecretText } from "./secrets.ts";
export {
  applyStateDir,
  DEFAULT_STATE_DIR,
  resolveStateDir,
  STATE_DIR_ENV_VAR,
  type StateDirEnvironment,
} from "./state-dir.ts";
export { closestMatch, editDistance } from "./suggest.ts";
