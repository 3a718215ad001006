// Every default value of the config, in one place. Owns: the numbers and
// choices a config file may leave out (OpenClaw 2026.9.6 values unless
// docs/parity.md says otherwise). Does not own: how they are applied (the
// schema reads these constants) or per-run resolution (runtime-resolver).

export const DEFAULT_AGENT_ID = "main";
export const DEFAULT_MAIN_KEY = "main";
export const DEFAULT_CONFIG_FILE = "~/.agent-kernel/config.json5";

export const AGENT_DEFAULTS = {
  /** 48 h; 0 means no timeout. Older OpenClaw releases used 600 s. */
  timeoutSeconds: 172_800,
  verboseDefault: "off",
  reasoningDefault: "off",
  elevatedDefault: "on",
  blockStreamingDefault: "off",
  blockStreamingBreak: "text_end",
  blockStreamingChunk: { minChars: 800, maxChars: 1200, breakPreference: "paragraph" },
  blockStreamingCoalesce: { idleMs: 1000 },
  typingIntervalSeconds: 6,
  skipBootstrap: false,
  bootstrapMaxChars: 20_000,
  /** All bootstrap files together (OpenClaw's DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS); USER.md alone gets at most 4000. */
  bootstrapTotalMaxChars: 60_000,
  subagents: { maxSpawnDepth: 5, maxConcurrent: 8 },
  sandbox: {
    mode: "off",
    scope: "agent",
    workspaceAccess: "none",
    engine: "bwrap",
    network: false,
    /** Wall time of one sandboxed command (the exec tool's own timeout still applies when shorter). */
    timeoutSeconds: 120,
    /** Output a sandboxed command may write before it is killed. */
    maxOutputBytes: 1024 * 1024,
    /** Address space of each sandboxed process. */
    memoryMb: 1024,
    /** Processes (and threads) in one sandboxed command at once. */
    maxProcesses: 256,
    /** Largest file a sandboxed process may write. */
    maxFileMb: 512,
    /** Size of the sandbox's private /tmp (memory-backed). */
    tmpMb: 256,
  },
  /** `mode: "default"` and `maxHistoryShare: 0.5`: OpenClaw 2026.9.6's (it runs safeguard mode on request only). */
  compaction: { reserveTokensFloor: 20_000, timeoutSeconds: 180, mode: "default", maxHistoryShare: 0.5 },
  /**
   * The memory tools (memory_search / memory_get over MEMORY.md and memory/*.md) and the prompt's Memory
   * section. OpenClaw turns them on by default; the kernel leaves them off until asked (docs/parity.md).
   */
  memorySearch: { enabled: false },
  // Turn limits (OpenClaw bounds a run only by its timeout and its run loop; these bound what one turn may
  // cost so a model in a loop or an endless stream ends the turn, not the process).
  /** Provider requests one turn may make, tool-loop continuations and retries included: OpenClaw's run-loop bound at its top (clamp(24 + 8·profiles, 32, 160)). */
  maxModelCallsPerTurn: 160,
  /** A model response that sends nothing for this long is cut as stalled (the stall watchdog). */
  streamIdleSeconds: 120,
  /** The longest one model response may stream, however steadily it sends. */
  streamMaxSeconds: 1800,
  /** Characters one model response may stream (text, thinking and tool-call arguments); past it the reply is cut. */
  replyMaxChars: 200_000,
} as const;

/** `skills` defaults: OpenClaw 2026.9.6's discovery and prompt limits. */
export const SKILLS_DEFAULTS = {
  maxSkillsInPrompt: 150,
  maxSkillsPromptChars: 18_000,
  maxSkillFileBytes: 256_000,
  maxCandidatesPerRoot: 300,
  maxSkillsLoadedPerSource: 200,
} as const;

/** `tools` defaults. */
export const TOOLS_DEFAULTS = {
  /** Tool calls one turn may make: twice the model-call bound, room for a few parallel calls per response. */
  maxCallsPerTurn: 320,
  /** `tools.web.fetch` (OpenClaw 2026.9.6's values). */
  webFetch: {
    enabled: true,
    /** Characters of text the tool returns by default; a call may ask for up to `maxCharsCap`. */
    maxChars: 20_000,
    maxCharsCap: 20_000,
    /** Bytes read from a response before the rest is dropped (OpenClaw clamps to 32 000 – 10 000 000). */
    maxResponseBytes: 750_000,
    timeoutSeconds: 30,
    maxRedirects: 3,
  },
  /** `tools.exec.applyPatch`: on for every model unless `allowModels` narrows it (OpenClaw 2026.9.6). */
  applyPatch: { enabled: true, workspaceOnly: true },
} as const;

/** Used when neither the agent, the model catalog nor the session knows better. */
export const DEFAULT_CONTEXT_TOKENS = 200_000;

/** OpenClaw 2026.9.x: max(8, 4 × CPUs). */
export function defaultMaxConcurrent(cpuCount: number): number {
  return Math.max(8, 4 * cpuCount);
}

export const QUEUE_DEFAULTS = { mode: "steer", debounceMs: 500, cap: 20, drop: "summarize" } as const;

export const SESSION_DEFAULTS = {
  scope: "per-sender",
  dmScope: "main",
  groupScope: "per-group",
  mainKey: DEFAULT_MAIN_KEY,
  reset: { mode: "daily", atHour: 4 },
} as const;

export const CHANNEL_DEFAULTS = {
  enabled: true,
  dmPolicy: "pairing",
  groupPolicy: "allowlist",
  textChunkLimit: 4000,
  /** Not in OpenClaw (it sends every chunk): a deliberate bound, docs/parity.md. */
  maxMessagesPerReply: 10,
} as const;

export const WEBCHAT_DEFAULTS = { host: "127.0.0.1", port: 18_790 } as const;

/** The OpenClaw 2026.9.6 cooldown ladder (openclaw-behaviors §8). */
export const AUTH_COOLDOWN_DEFAULTS = {
  transientSeconds: [30, 60, 300],
  rateLimitBaseSeconds: 30,
  rateLimitMaxHours: 24,
  billingBaseMinutes: 10,
  billingMaxHours: 24,
  authPermanentBaseMinutes: 10,
  authPermanentMaxHours: 1,
  failureWindowHours: 24,
} as const;

export const STORE_DEFAULTS = { driver: "sqlite" } as const;

export const CRON_DEFAULTS = { enabled: true, maxConcurrentRuns: 1 } as const;
export const CRON_JOB_DEFAULTS = { enabled: true, missedRuns: "run-once", deliveryMode: "announce" } as const;
