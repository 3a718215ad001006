// The cold-start benchmark's baseline: the least a script can do to run one pi turn against the same scripted
// server — import pi-coding-agent, register an OpenAI-compatible provider, create an in-memory agent session
// with pi's default coding tools, prompt once, print the answer. No config, no store, no kernel. With
// `--stream`, the answer's text deltas are written to stdout as pi delivers them (first-text.bench.ts), the
// least a script can do to show a reply as it streams.
// Usage: node bench/bare-pi-turn.ts <openai baseUrl> <workspace dir> [--stream]
import { createProvider, InMemoryCredentialStore, type Model } from "@earendil-works/pi-ai";
import { openAICompletionsApi } from "@earendil-works/pi-ai/api/openai-completions.lazy";
import {
  createAgentSession,
  ModelRuntime,
  SessionManager,
  SettingsManager,
} from "@earendil-works/pi-coding-agent";

const [baseUrl = "", cwd = process.cwd(), mode] = process.argv.slice(2);
const streamText = mode === "--stream";
const model: Model<"openai-completions"> = {
  id: "m1",
  name: "m1",
  api: "openai-completions",
  provider: "scripted",
  baseUrl,
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 32_000,
  maxTokens: 4096,
};
const modelRuntime = await ModelRuntime.create({
  credentials: new InMemoryCredentialStore(),
  modelsPath: null,
  refreshOnCreate: false,
});
modelRuntime.registerNativeProvider(
  createProvider({
    id: "scripted",
    baseUrl,
    auth: { apiKey: { name: "scripted key", resolve: async () => ({ auth: { apiKey: "no-key" } }) } },
    models: [model],
    api: openAICompletionsApi(),
  }),
);
await modelRuntime.refresh({ allowNetwork: false, providers: ["scripted"] });
const { session } = await createAgentSession({
  cwd,
  agentDir: "/nonexistent/bare-pi-agent-dir",
  modelRuntime,
  model,
  settingsManager: SettingsManager.inMemory({ retry: { enabled: false, maxRetries: 0 } }),
  sessionManager: SessionManager.inMemory(),
});
let text = "";
session.subscribe((event) => {
  if (streamText && event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
    process.stdout.write(event.assistantMessageEvent.delta);
  }
  if (event.type === "message_end" && event.message.role === "assistant") {
    text = event.message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  }
});
await session.prompt("write the notes");
session.dispose();
process.stdout.write(streamText ? "\n" : `${text}\n`);
