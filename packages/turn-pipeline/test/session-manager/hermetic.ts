// Test helper: a hermetic pi AgentSession (pi-sdk.md §2.4) over a given SessionManager. Faux provider, in-memory
// credentials, settings and resources, an explicit model: nothing under ~/.pi is read or written and no
// request leaves the process. Shared by the adapter test and the child process that continues its session.
import { type FauxProviderHandle, fauxProvider, InMemoryCredentialStore, Type } from "@earendil-works/pi-ai";
import {
  type AgentSession,
  createAgentSession,
  createExtensionRuntime,
  defineTool,
  ModelRuntime,
  type ResourceLoader,
  type SessionManager,
  SettingsManager,
} from "@earendil-works/pi-coding-agent";

export const SYSTEM_PROMPT = "You are the session-manager adapter test agent.";

export interface HermeticRuntime {
  readonly faux: FauxProviderHandle;
  readonly modelRuntime: ModelRuntime;
}

export async function hermeticRuntime(): Promise<HermeticRuntime> {
  const faux = fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1", reasoning: true, contextWindow: 200_000, maxTokens: 8192 }],
  });
  const modelRuntime = await ModelRuntime.create({
    credentials: new InMemoryCredentialStore(),
    modelsPath: null,
    refreshOnCreate: false,
  });
  modelRuntime.registerNativeProvider(faux.provider);
  return { faux, modelRuntime };
}

const emptyResourceLoader: ResourceLoader = {
  getExtensions: () => ({ extensions: [], errors: [], runtime: createExtensionRuntime() }),
  getSkills: () => ({ skills: [], diagnostics: [] }),
  getPrompts: () => ({ prompts: [], diagnostics: [] }),
  getThemes: () => ({ themes: [], diagnostics: [] }),
  getAgentsFiles: () => ({ agentsFiles: [] }),
  getSystemPrompt: () => SYSTEM_PROMPT,
  getSystemPromptSource: () => undefined,
  getAppendSystemPrompt: () => [],
  getAppendSystemPromptSources: () => [],
  extendResources: () => {},
  reload: async () => {},
};

/** A tool that answers from a fixed table, so the transcript's tool result is predictable. */
export const weatherTool = defineTool({
  name: "get_weather",
  label: "Get weather",
  description: "The weather in a city",
  parameters: Type.Object({ city: Type.String() }),
  execute: async (_toolCallId, params) => ({
    content: [{ type: "text", text: `Sunny in ${params.city}, 21C` }],
    details: { city: params.city },
  }),
});

export async function hermeticSession(
  runtime: HermeticRuntime,
  options: {
    sessionManager: SessionManager;
    cwd: string;
    agentDir: string;
    thinkingLevel: "low" | undefined;
  },
): Promise<AgentSession> {
  const { session } = await createAgentSession({
    cwd: options.cwd,
    agentDir: options.agentDir,
    modelRuntime: runtime.modelRuntime,
    model: runtime.faux.getModel(),
    ...(options.thinkingLevel === undefined ? {} : { thinkingLevel: options.thinkingLevel }),
    settingsManager: SettingsManager.inMemory({
      // keepRecentTokens: 1 makes a manual compact() keep only the last assistant message.
      compaction: { enabled: false, keepRecentTokens: 1, reserveTokens: 64 },
      retry: { enabled: false },
      cacheWarming: "off",
      enableInstallTelemetry: false,
    }),
    sessionManager: options.sessionManager,
    resourceLoader: emptyResourceLoader,
    customTools: [weatherTool],
    tools: ["get_weather"],
  });
  return session;
}
