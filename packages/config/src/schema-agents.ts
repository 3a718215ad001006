// `agents.defaults` and `agents.list[]`. Owns: per-agent settings and their
// defaults. Does not own: resolving workspace/agentDir paths, model refs or
// thinking levels for a run (runtime-resolver).
import { z } from "zod";
import { AGENT_DEFAULTS } from "./defaults.ts";
import {
  agentId,
  elevatedLevel,
  modelSelection,
  modelsMap,
  nonEmptyString,
  nonNegativeInt,
  onOff,
  positiveInt,
  reasoningLevel,
  thinkingLevel,
  verboseLevel,
} from "./schema-primitives.ts";
import { agentToolsConfig } from "./schema-tools.ts";

const D = AGENT_DEFAULTS;

// Each nested section exists twice: with every field optional (an agent
// entry, merged over the defaults) and with defaults filled (agents.defaults).
// Zod applies an inner default even under .partial(), so the two are built
// from one field list rather than derived from each other.
const chunkFields = {
  minChars: positiveInt,
  maxChars: positiveInt,
  breakPreference: z.enum(["paragraph", "newline", "sentence"]),
};
const coalesceFields = { idleMs: nonNegativeInt, minChars: positiveInt, maxChars: positiveInt };
const sandboxFields = {
  mode: z.enum(["off", "non-main", "all"]).describe('"non-main": sandbox every session but the main one.'),
  scope: z
    .enum(["session", "agent", "shared"])
    .describe("One sandbox workspace per session, per agent, or one for all."),
  workspaceAccess: z
    .enum(["none", "ro", "rw"])
    .describe(
      '"none": only the sandbox workspace; "ro": the agent workspace read-only at /agent; "rw": the agent workspace read-write at /workspace.',
    ),
  engine: z.enum(["bwrap"]).describe("bubblewrap (Debian package `bubblewrap`): the only engine."),
  workspaceRoot: nonEmptyString.describe("Where sandbox workspaces live; default <stateDir>/sandboxes."),
  network: z.boolean().describe("Network inside the sandbox; default off (loopback only)."),
  timeoutSeconds: positiveInt.describe("Wall time of one sandboxed command."),
  maxOutputBytes: positiveInt.describe("Output one sandboxed command may write before it is killed."),
  memoryMb: positiveInt.describe("Address space of each sandboxed process (MiB)."),
  maxProcesses: positiveInt.describe("Processes of one sandboxed command at once."),
  maxFileMb: positiveInt.describe("Largest file a sandboxed process may write (MiB)."),
  tmpMb: positiveInt.describe("Size of the sandbox's private /tmp (MiB, memory-backed)."),
};
const memorySearchFields = {
  enabled: z
    .boolean()
    .describe(
      "Offer memory_search and memory_get (full-text search over the workspace's MEMORY.md and memory/*.md) and the prompt's Memory section; the tool policy still decides.",
    ),
};
const subagentFields = {
  maxSpawnDepth: positiveInt,
  maxConcurrent: positiveInt,
  model: modelSelection,
  thinking: thinkingLevel,
};

const blockStreamingChunk = z.strictObject({
  minChars: chunkFields.minChars.default(D.blockStreamingChunk.minChars),
  maxChars: chunkFields.maxChars.default(D.blockStreamingChunk.maxChars),
  breakPreference: chunkFields.breakPreference.default(D.blockStreamingChunk.breakPreference),
});
const blockStreamingCoalesce = z.strictObject({
  idleMs: coalesceFields.idleMs.default(D.blockStreamingCoalesce.idleMs),
  minChars: coalesceFields.minChars.optional(),
  maxChars: coalesceFields.maxChars.optional(),
});
const sandbox = z.strictObject({
  mode: sandboxFields.mode.default(D.sandbox.mode),
  scope: sandboxFields.scope.default(D.sandbox.scope),
  workspaceAccess: sandboxFields.workspaceAccess.default(D.sandbox.workspaceAccess),
  engine: sandboxFields.engine.default(D.sandbox.engine),
  workspaceRoot: sandboxFields.workspaceRoot.optional(),
  network: sandboxFields.network.default(D.sandbox.network),
  timeoutSeconds: sandboxFields.timeoutSeconds.default(D.sandbox.timeoutSeconds),
  maxOutputBytes: sandboxFields.maxOutputBytes.default(D.sandbox.maxOutputBytes),
  memoryMb: sandboxFields.memoryMb.default(D.sandbox.memoryMb),
  maxProcesses: sandboxFields.maxProcesses.default(D.sandbox.maxProcesses),
  maxFileMb: sandboxFields.maxFileMb.default(D.sandbox.maxFileMb),
  tmpMb: sandboxFields.tmpMb.default(D.sandbox.tmpMb),
});
const subagents = z.strictObject({
  maxSpawnDepth: subagentFields.maxSpawnDepth.default(D.subagents.maxSpawnDepth),
  maxConcurrent: subagentFields.maxConcurrent.default(D.subagents.maxConcurrent),
  model: subagentFields.model.optional(),
  thinking: subagentFields.thinking.optional(),
});
const memorySearch = z.strictObject({
  enabled: memorySearchFields.enabled.default(D.memorySearch.enabled),
});
const compaction = z.strictObject({
  reserveTokensFloor: nonNegativeInt.default(D.compaction.reserveTokensFloor),
  timeoutSeconds: positiveInt.default(D.compaction.timeoutSeconds),
  mode: z
    .enum(["default", "safeguard"])
    .default(D.compaction.mode)
    .describe(
      '"safeguard": summaries in chunks sized to the messages, the oldest history summarized first when what is kept exceeds maxHistoryShare, failed tool calls and read/modified files kept in the summary.',
    ),
  maxHistoryShare: z
    .number()
    .min(0.1)
    .max(0.9)
    .default(D.compaction.maxHistoryShare)
    .describe(
      "Safeguard mode: the share of the context window the kept history may take before the oldest is summarized apart.",
    ),
});
const durationText = z
  .string()
  .regex(
    /^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)?\s*$/i,
    'a duration such as "5m", "1h" or "30s" (a bare number is minutes)',
  );
const contextPruning = z.strictObject({
  mode: z
    .enum(["off", "cache-ttl"])
    .default("off")
    .describe(
      '"cache-ttl": once the provider\'s prompt cache expired, old tool results are trimmed in what the model is sent (the transcript keeps them).',
    ),
  ttl: durationText.optional().describe('How long the provider keeps its prompt cache; default "5m".'),
  tools: z
    .strictObject({
      allow: z
        .array(nonEmptyString)
        .optional()
        .describe("Tools whose results may be pruned (globs); default all."),
      deny: z.array(nonEmptyString).optional().describe("Tools whose results are never pruned (globs)."),
    })
    .optional(),
  hardClear: z
    .strictObject({
      enabled: z
        .boolean()
        .optional()
        .describe("Replace old results by a placeholder under high pressure; default on."),
      placeholder: nonEmptyString.optional().describe('Default "[Old tool result content cleared]".'),
    })
    .optional(),
});

/** What bounds one turn besides its timeout (turn-pipeline's turn-limits.ts enforces them). */
const turnLimitFields = {
  maxModelCallsPerTurn: positiveInt.describe(
    "Provider requests one turn may make (tool-loop continuations and retries included); then the turn ends (model_call_limit).",
  ),
  streamIdleSeconds: positiveInt.describe(
    "A model response that sends nothing for this long is cut as stalled and retried once.",
  ),
  streamMaxSeconds: positiveInt.describe(
    "The longest one model response may stream, however steadily; then it is cut and the turn ends (stream_time_limit).",
  ),
  replyMaxChars: positiveInt.describe(
    "Characters one model response may stream (text, thinking, tool-call arguments); past it the reply is cut with a note and the turn ends (reply_size_limit).",
  ),
};

const optionalFields = <T extends Record<string, z.ZodType>>(fields: T) => z.strictObject(fields).partial();

/** Settings an agent entry may override; shared by defaults (with defaults) and entries (without). */
const agentSettings = {
  workspace: nonEmptyString.optional().describe("The agent's working directory; ~ is the home directory."),
  agentDir: nonEmptyString.optional().describe("Where the agent's auth profiles and state live."),
  model: modelSelection.optional(),
  models: modelsMap.optional(),
  imageModel: modelSelection.optional(),
  contextTokens: positiveInt.optional().describe("Context window override; else the model's, else 200000."),
  thinkingDefault: thinkingLevel.optional(),
  skipBootstrap: z.boolean().optional(),
  bootstrapMaxChars: positiveInt.optional(),
  bootstrapTotalMaxChars: positiveInt
    .optional()
    .describe("Characters all bootstrap files may take together; USER.md alone at most 4000."),
  tools: agentToolsConfig.optional(),
};

export const agentDefaults = z.strictObject({
  ...agentSettings,
  timeoutSeconds: nonNegativeInt.default(D.timeoutSeconds).describe("Turn timeout; 0 = none."),
  verboseDefault: verboseLevel.default(D.verboseDefault),
  reasoningDefault: reasoningLevel.default(D.reasoningDefault),
  elevatedDefault: elevatedLevel.default(D.elevatedDefault),
  blockStreamingDefault: onOff.default(D.blockStreamingDefault),
  blockStreamingBreak: z.enum(["text_end", "message_end"]).default(D.blockStreamingBreak),
  blockStreamingChunk: blockStreamingChunk.prefault({}),
  blockStreamingCoalesce: blockStreamingCoalesce.prefault({}),
  typingIntervalSeconds: positiveInt.default(D.typingIntervalSeconds),
  skipBootstrap: z.boolean().default(D.skipBootstrap),
  bootstrapMaxChars: positiveInt.default(D.bootstrapMaxChars),
  bootstrapTotalMaxChars: positiveInt.default(D.bootstrapTotalMaxChars),
  maxConcurrent: positiveInt
    .optional()
    .describe("Turns at once across all sessions; default max(8, 4 x CPUs)."),
  sandbox: sandbox.prefault({}),
  subagents: subagents.prefault({}),
  compaction: compaction.prefault({}),
  contextPruning: contextPruning.prefault({}),
  memorySearch: memorySearch.prefault({}),
  maxModelCallsPerTurn: turnLimitFields.maxModelCallsPerTurn.default(D.maxModelCallsPerTurn),
  streamIdleSeconds: turnLimitFields.streamIdleSeconds.default(D.streamIdleSeconds),
  streamMaxSeconds: turnLimitFields.streamMaxSeconds.default(D.streamMaxSeconds),
  replyMaxChars: turnLimitFields.replyMaxChars.default(D.replyMaxChars),
});

export const agentEntry = z.strictObject({
  id: agentId,
  default: z.boolean().optional().describe("The agent used when a request names none."),
  name: nonEmptyString.optional(),
  identity: z.strictObject({ name: nonEmptyString.optional(), emoji: nonEmptyString.optional() }).optional(),
  ...agentSettings,
  timeoutSeconds: nonNegativeInt.optional(),
  verboseDefault: verboseLevel.optional(),
  reasoningDefault: reasoningLevel.optional(),
  elevatedDefault: elevatedLevel.optional(),
  blockStreamingDefault: onOff.optional(),
  blockStreamingBreak: z.enum(["text_end", "message_end"]).optional(),
  blockStreamingChunk: optionalFields(chunkFields).optional(),
  blockStreamingCoalesce: optionalFields(coalesceFields).optional(),
  sandbox: optionalFields(sandboxFields).optional(),
  subagents: optionalFields(subagentFields).optional(),
  memorySearch: optionalFields(memorySearchFields).optional(),
  maxModelCallsPerTurn: turnLimitFields.maxModelCallsPerTurn.optional(),
  streamIdleSeconds: turnLimitFields.streamIdleSeconds.optional(),
  streamMaxSeconds: turnLimitFields.streamMaxSeconds.optional(),
  replyMaxChars: turnLimitFields.replyMaxChars.optional(),
});

export const agentsConfig = z.strictObject({
  defaults: agentDefaults.prefault({}),
  list: z.array(agentEntry).default([]).describe('The agents; none means one agent, "main".'),
});

export type AgentDefaults = z.output<typeof agentDefaults>;
export type AgentEntry = z.output<typeof agentEntry>;
