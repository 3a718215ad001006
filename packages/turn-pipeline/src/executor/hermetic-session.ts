// One hermetic pi AgentSession per attempt (pi-sdk.md §2.4; a warm session's next turn may run on the one its
// last turn answered with, see warm-agent-sessions.ts). Owns: the in-memory settings (pi's auto-retry,
// HTTP retries, auto-compaction and cache warming off: the executor's recovery loop is the only retry layer,
// so the two layers never multiply), the resource loader that discovers nothing and serves the kernel's
// prompt, and `createAgentSession` with every service injected, our tools only, and an explicit model. Does
// not own: the tools, the prompt text or the transcript (the caller's session-manager binding).
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
}

function kernelResourceLoader(input: HermeticSessionInput): ResourceLoader {
  const runtime = createExtensionRuntime();
  const append = input.extraSystemPrompt?.trim() ? [input.extraSystemPrompt.trim()] : [];
  const agentsFiles = input.bootstrapFiles.map((file) => ({ path: file.path, content: file.content }));
  return {
    getExtensions: () => ({ extensions: [], errors: [], runtime }),
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
  const { session } = await createAgentSession({
    cwd: input.cwd,
    agentDir: UNUSED_AGENT_DIR,
    modelRuntime: input.modelRuntime,
    model: input.model,
    ...(input.thinkingLevel === undefined ? {} : { thinkingLevel: input.thinkingLevel }),
    settingsManager,
    sessionManager: input.sessionManager,
    resourceLoader: kernelResourceLoader(input),
    customTools: [...input.tools],
    tools: input.tools.map((tool) => tool.name),
  });
  return session;
}
