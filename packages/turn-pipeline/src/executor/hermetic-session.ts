// One hermetic pi AgentSession per attempt (pi-sdk.md §2.4; a warm session's next turn may run on the one its
// last turn answered with, see warm-agent-sessions.ts). Owns: the in-memory settings (pi's auto-retry,
// HTTP retries, auto-compaction and cache warming off: the executor's recovery loop is the only retry layer,
// so the two layers never multiply), the resource loader that discovers nothing and serves the kernel's
// prompt, and `createAgentSession` with every service injected, our tools only, and an explicit model. Does
// not own: the tools, the prompt text or the transcript (the caller's session-manager binding).
// It also installs what shapes the context sent (never what is stored): cache-TTL pruning of old tool
// results on pi's `transformContext` (context-pruning.ts), the provider quirks on pi's `convertToLlm`
// (provider-quirks.ts), and the compaction safeguard as an extension (compaction-safeguard.ts).
import type { KernelConfig } from "@agent-kernel/config";
import type { Api, Model } from "@earendil-works/pi-ai";
import {
  type AgentSession,
  createAgentSession,
  createExtensionRuntime,
  type ModelRuntime,
  type ResourceLoader,
  type SessionManager,
  SettingsManager,
  type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import {
  type CompactionSafeguardSettings,
  compactionSafeguardExtension,
  resolveCompactionSafeguardSettings,
} from "./compaction-safeguard.ts";
import {
  type CacheTtlPruningSettings,
  createPruningRecord,
  isCacheTtlEligible,
  lastProviderAnswerAt,
  type PruningRecord,
  pruneExpiredToolResults,
  resolveCacheTtlPruningSettings,
} from "./context-pruning.ts";
import { applyProviderQuirks, providerQuirksFor } from "./provider-quirks.ts";
import type { BootstrapFile } from "./system-prompt.ts";

export type PiThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/** The kernel's levels pi does not name map to the nearest pi level. */
export function toPiThinkingLevel(level: string): PiThinkingLevel {
  switch (level) {
    case "off":
    case "minimal":
    case "low":
    case "medium":
    case "high":
    case "xhigh":
    case "max":
      return level;
    case "adaptive":
      return "medium";
    case "ultra":
      return "max";
    default:
      return "off";
  }
}

export interface HermeticSessionInput {
  readonly cwd: string;
  readonly modelRuntime: ModelRuntime;
  readonly model: Model<Api>;
  /** Only for a session with no messages yet; a restored session takes its level from the transcript. */
  readonly thinkingLevel?: PiThinkingLevel | undefined;
  readonly sessionManager: SessionManager;
  readonly systemPrompt: string;
  readonly extraSystemPrompt?: string | undefined;
  readonly bootstrapFiles: readonly BootstrapFile[];
  readonly tools: readonly ToolDefinition[];
  /** Tokens kept verbatim by a compaction. */
  readonly keepRecentTokens: number;
  /** Context shaping from config (pruning, safeguard); none: pi's default compaction, nothing pruned. */
  readonly contextShaping?: ContextShaping | undefined;
}

/** What shapes a session's context beyond pi's defaults (from `agents.defaults.compaction` / `contextPruning`). */
export interface ContextShaping {
  /** Cache-TTL pruning and the session's record of what it trimmed (kept with the session's binding). */
  readonly pruning?:
    | { readonly settings: CacheTtlPruningSettings; readonly record: PruningRecord }
    | undefined;
  readonly safeguard?: CompactionSafeguardSettings | undefined;
  /** The kernel's clock (the TTL is measured with it). */
  readonly now: () => number;
}

/** Each session's pruning record, kept as long as its transcript binding (a new binding starts afresh). */
const pruningRecords = new WeakMap<SessionManager, PruningRecord>();

/**
 * The context shaping `config` asks for (`agents.defaults.compaction.mode`, `agents.defaults.contextPruning`,
 * read from the defaults as OpenClaw does), for the session behind `sessionManager`; undefined: none.
 */
export function contextShapingFor(
  config: KernelConfig,
  sessionManager: SessionManager,
  now: () => number,
): ContextShaping | undefined {
  const defaults = config.agents.defaults;
  const safeguard = resolveCompactionSafeguardSettings(defaults.compaction);
  const pruningSettings = resolveCacheTtlPruningSettings(defaults.contextPruning);
  if (safeguard === undefined && pruningSettings === undefined) return undefined;
  let pruning: ContextShaping["pruning"];
  if (pruningSettings !== undefined) {
    let record = pruningRecords.get(sessionManager);
    if (record === undefined) {
      record = createPruningRecord();
      pruningRecords.set(sessionManager, record);
    }
    pruning = { settings: pruningSettings, record };
  }
  return { safeguard, pruning, now };
}

function kernelResourceLoader(
  input: HermeticSessionInput,
  sessionRef: { current: AgentSession | undefined },
): ResourceLoader {
  const runtime = createExtensionRuntime();
  const safeguard = input.contextShaping?.safeguard;
  const extensions = safeguard ? [compactionSafeguardExtension(safeguard, sessionRef)] : [];
  const append = input.extraSystemPrompt?.trim() ? [input.extraSystemPrompt.trim()] : [];
  const agentsFiles = input.bootstrapFiles.map((file) => ({ path: file.path, content: file.content }));
  return {
    getExtensions: () => ({ extensions, errors: [], runtime }),
    getSkills: () => ({ skills: [], diagnostics: [] }),
    getPrompts: () => ({ prompts: [], diagnostics: [] }),
    getThemes: () => ({ themes: [], diagnostics: [] }),
    getAgentsFiles: () => ({ agentsFiles }),
    getSystemPrompt: () => input.systemPrompt,
    getSystemPromptSource: () => undefined,
    getAppendSystemPrompt: () => append,
    getAppendSystemPromptSources: () => [],
    extendResources: () => {},
    reload: async () => {},
  };
}

/** pi's agent dir is never read when every service is injected; this path only satisfies the option. */
const UNUSED_AGENT_DIR = "/nonexistent/agent-kernel/pi-agent-dir";

export async function createHermeticSession(input: HermeticSessionInput): Promise<AgentSession> {
  const settingsManager = SettingsManager.inMemory({
    retry: { enabled: false, maxRetries: 0, provider: { maxRetries: 0 } },
    compaction: { enabled: false, keepRecentTokens: input.keepRecentTokens },
    cacheWarming: "off",
    enableInstallTelemetry: false,
    // The executor's stall watchdog owns idle detection; pi's own idle timeout would race it.
    httpIdleTimeoutMs: 0,
  });
  const sessionRef: { current: AgentSession | undefined } = { current: undefined };
  const { session } = await createAgentSession({
    cwd: input.cwd,
    agentDir: UNUSED_AGENT_DIR,
    modelRuntime: input.modelRuntime,
    model: input.model,
    ...(input.thinkingLevel === undefined ? {} : { thinkingLevel: input.thinkingLevel }),
    settingsManager,
    sessionManager: input.sessionManager,
    resourceLoader: kernelResourceLoader(input, sessionRef),
    customTools: [...input.tools],
    tools: input.tools.map((tool) => tool.name),
  });
  sessionRef.current = session;
  shapeRequestContext(session, input.contextShaping);
  return session;
}

/**
 * What each request is sent, after pi's own transforms: expired tool results pruned (eligible providers,
 * when configured), then the provider's quirks on the converted messages. The stored transcript is not
 * touched: both run on the copy pi builds for the request.
 */
function shapeRequestContext(session: AgentSession, shaping: ContextShaping | undefined): void {
  const agent = session.agent;
  const pruning = shaping?.pruning;
  if (pruning !== undefined && shaping !== undefined) {
    const previous = agent.transformContext;
    let prunedAt: number | null = null;
    agent.transformContext = async (messages, signal) => {
      const transformed = previous ? await previous(messages, signal) : messages;
      const model = agent.state.model;
      if (!isCacheTtlEligible(model)) return transformed;
      const answeredAt = lastProviderAnswerAt(transformed);
      const touchedAt =
        prunedAt === null ? answeredAt : answeredAt === null ? prunedAt : Math.max(prunedAt, answeredAt);
      return pruneExpiredToolResults(
        {
          messages: transformed,
          settings: pruning.settings,
          contextWindowTokens: model.contextWindow,
          lastCacheTouchAt: touchedAt,
          now: shaping.now(),
          record: pruning.record,
        },
        () => {
          prunedAt = shaping.now();
        },
      );
    };
  }
  const convert = agent.convertToLlm;
  agent.convertToLlm = async (messages) =>
    applyProviderQuirks(await convert(messages), providerQuirksFor(agent.state.model));
}
