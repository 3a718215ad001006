// The `tools` section and the per-agent tool policy. Owns: the shape of allow
// and deny lists, profiles and their per-provider, sandbox and subagent
// variants. Does not own: what groups contain or how layers combine
// (tool-policy does, and reports unknown group names with their config path).
import { z } from "zod";
import { TOOLS_DEFAULTS } from "./defaults.ts";
import { TOOL_PROFILES } from "./schema-constants.ts";
import { nonEmptyString, positiveInt, toolPatternList } from "./schema-primitives.ts";

export { TOOL_PROFILES };
export const toolProfile = z.enum(TOOL_PROFILES);

const allowDeny = {
  allow: toolPatternList.optional().describe("Only these tools (names, group:* or * globs); empty = all."),
  deny: toolPatternList.optional().describe("Never these tools; deny always wins."),
  alsoAllow: toolPatternList.optional().describe("Added to the profile's allowlist."),
};

export const toolListPolicy = z.strictObject(allowDeny);

export const toolProviderPolicy = z.strictObject({ profile: toolProfile.optional(), ...allowDeny });

const byProvider = z
  .record(nonEmptyString, toolProviderPolicy)
  .describe('Per provider ("openai") or model ("openai/gpt-5") policy, applied after the general one.');

export const elevatedConfig = z.strictObject({
  enabled: z.boolean().optional(),
  allowFrom: z
    .record(nonEmptyString, z.array(z.union([z.string(), z.number().int()]).transform(String)))
    .optional()
    .describe("Per channel, the senders who may use elevated mode."),
});

const nonOwnerHostTools = z
  .boolean()
  .describe(
    "Let sessions that non-owners can reach (open DMs, groups) run exec/write/edit outside a sandbox. Default false.",
  );

/** `tools.exec.applyPatch`: whether the `apply_patch` tool is offered, and to which models. */
export const applyPatchConfig = z.strictObject({
  enabled: z
    .boolean()
    .default(TOOLS_DEFAULTS.applyPatch.enabled)
    .describe("Offer apply_patch. Default true."),
  allowModels: z
    .array(nonEmptyString)
    .optional()
    .describe('Only these models get apply_patch ("gpt-5.4" or "openai/gpt-5.4"); unset = every model.'),
  workspaceOnly: z
    .literal(true)
    .default(TOOLS_DEFAULTS.applyPatch.workspaceOnly)
    .describe(
      "apply_patch stays inside the workspace (the only mode here; OpenClaw's false is not supported).",
    ),
});

/** `tools.web.fetch.ssrfPolicy`: which network targets `web_fetch` may reach besides public addresses. */
export const webFetchSsrfPolicy = z.strictObject({
  dangerouslyAllowPrivateNetwork: z
    .boolean()
    .optional()
    .describe(
      "Let web_fetch reach loopback, private, link-local and other internal addresses. Default false.",
    ),
  allowedHostnames: z
    .array(nonEmptyString)
    .optional()
    .describe(
      "Exact host names (or IP literals) web_fetch may reach even when they resolve to internal addresses.",
    ),
  blockedHostnames: z
    .array(nonEmptyString)
    .optional()
    .describe('Hosts web_fetch never reaches ("tracker.example.com", "*.ads.example.com"); checked first.'),
});

/** `tools.web.fetch`: the `web_fetch` tool. */
export const webFetchConfig = z.strictObject({
  enabled: z.boolean().default(TOOLS_DEFAULTS.webFetch.enabled).describe("Offer web_fetch. Default true."),
  maxChars: positiveInt
    .default(TOOLS_DEFAULTS.webFetch.maxChars)
    .describe("Characters of text returned by default (at most maxCharsCap)."),
  maxCharsCap: positiveInt
    .default(TOOLS_DEFAULTS.webFetch.maxCharsCap)
    .describe("The most characters one call may ask for."),
  maxResponseBytes: z
    .number()
    .int()
    .min(32_000)
    .max(10_000_000)
    .default(TOOLS_DEFAULTS.webFetch.maxResponseBytes)
    .describe("Bytes of a response read before the rest is dropped (32000-10000000)."),
  timeoutSeconds: positiveInt
    .default(TOOLS_DEFAULTS.webFetch.timeoutSeconds)
    .describe("Wall time of one fetch, redirects included."),
  maxRedirects: z
    .number()
    .int()
    .min(0)
    .max(20)
    .default(TOOLS_DEFAULTS.webFetch.maxRedirects)
    .describe("Redirects followed, each checked like the first URL."),
  userAgent: nonEmptyString.optional().describe("The User-Agent header sent."),
  ssrfPolicy: webFetchSsrfPolicy.optional(),
});

/** `tools.web`. */
export const webToolsConfig = z.strictObject({ fetch: webFetchConfig.optional() });

/** `tools.exec`: what every `exec` command gets, sandboxed or not. */
export const execConfig = z.strictObject({
  applyPatch: applyPatchConfig.optional(),
  backgroundMs: z
    .number()
    .int()
    .min(10)
    .max(120_000)
    .optional()
    .describe(
      "Yield of an exec call that gives no yieldMs: still running after this, it goes on in the background (OpenClaw 10000). Unset: such a call runs in the foreground.",
    ),
  cleanupMs: z
    .number()
    .int()
    .min(60_000)
    .max(10_800_000)
    .optional()
    .describe("How long a finished background command is kept for the process tool (default 1800000)."),
  maxBackgroundProcesses: positiveInt
    .optional()
    .describe("Background commands one session may run at once (default 8)."),
  backgroundMaxOutputChars: z
    .number()
    .int()
    .min(1000)
    .max(10_000_000)
    .optional()
    .describe("Characters of output kept per background command, the newest (default 200000)."),
  envAllow: z
    .array(nonEmptyString)
    .optional()
    .describe(
      'Environment variables passed to commands besides the default allowlist (names or "PREFIX_*"); never one the config references.',
    ),
});

/** `agents.list[].tools`: the agent layer (and its sandbox override). */
export const agentToolsConfig = z.strictObject({
  profile: toolProfile.optional(),
  ...allowDeny,
  byProvider: byProvider.optional(),
  sandbox: z.strictObject({ tools: toolListPolicy.optional() }).optional(),
  elevated: elevatedConfig.optional(),
  nonOwnerHostTools: nonOwnerHostTools.optional(),
  maxCallsPerTurn: positiveInt
    .optional()
    .describe("This agent's tool calls per turn; unset = tools.maxCallsPerTurn."),
});

/** Top-level `tools`. */
export const toolsConfig = z.strictObject({
  profile: toolProfile.optional().describe("Base tool set; unset = no profile restriction."),
  ...allowDeny,
  byProvider: byProvider.optional(),
  sandbox: z
    .strictObject({ tools: toolListPolicy.optional() })
    .optional()
    .describe("Tools of sandboxed sessions; allow replaces the default sandbox allowlist."),
  subagents: z
    .strictObject({ tools: toolListPolicy.optional() })
    .optional()
    .describe("Extra limits for subagent sessions; deny adds to the built-in subagent denylist."),
  elevated: elevatedConfig.optional(),
  bySender: z
    .record(nonEmptyString, toolListPolicy)
    .optional()
    .describe('Per sender ("telegram:123") policy, the last pipeline layer.'),
  maxCallsPerTurn: positiveInt
    .default(TOOLS_DEFAULTS.maxCallsPerTurn)
    .describe(
      "Tool calls one turn may make; the call past it is refused and the turn ends (tool_call_limit).",
    ),
  nonOwnerHostTools: nonOwnerHostTools.optional(),
  exec: execConfig.optional(),
  web: webToolsConfig.optional(),
});

export type ToolsConfig = z.output<typeof toolsConfig>;
export type AgentToolsConfig = z.output<typeof agentToolsConfig>;
/** `tools.web.fetch` after parsing (defaults applied). */
export type WebFetchConfig = z.output<typeof webFetchConfig>;
/** `tools.exec.applyPatch` after parsing (defaults applied). */
export type ApplyPatchConfig = z.output<typeof applyPatchConfig>;
