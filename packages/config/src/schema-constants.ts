// The config's fixed vocabularies as plain values: queue modes, provider APIs, thinking levels, tool profiles,
// channel ids and the agent id pattern. Owns: the lists themselves, free of zod, so code that only needs a
// list (the kernel's input checks, the runtime resolver, the store's agent ids) does not build the config
// schema to get it. Does not own: the schemas made from them (schema*.ts).

/** OpenClaw's isValidAgentId, case-insensitive; stored lower-cased. */
export const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

/** The thinking levels a model may be asked for, lowest first. */
export const THINKING_LEVELS = [
  "off",
  "minimal",
  "low",
  "medium",
  "high",
  "xhigh",
  "adaptive",
  "max",
  "ultra",
] as const;

/** What a message does when its session is busy (`messages.queue.mode`). */
export const QUEUE_MODES = ["steer", "followup", "collect", "interrupt"] as const;

/** The wire APIs a custom provider (`models.providers.<id>.api`) may speak. */
export const PROVIDER_APIS = [
  "openai-completions",
  "openai-responses",
  "anthropic-messages",
  "google-generative-ai",
] as const;

/** The tool profiles (`tools.profile`): the base allowlists. */
export const TOOL_PROFILES = ["minimal", "coding", "messaging", "full"] as const;

/** The chat channels this project ships adapters for. */
export const KNOWN_CHANNELS = ["telegram", "slack", "webchat"] as const;
