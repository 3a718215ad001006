// The cold-start benchmark's baseline: the least a script can do to run one pi turn against the same scripted
// server — import pi-coding-agent, register an OpenAI-compatible provider, create an in-memory agent session
// with pi's default coding tools, prompt once, print the answer. No config, no store, no kernel. With
// `--stream`, the answer's text deltas are written to stdout as pi delivers them (first-text.bench.ts), the
// least a script can do to show a reply as it streams. With `--session <file>`, the turn continues pi's JSONL
// session file (SessionManager.open) instead of an in-memory session. bare-pi-turn-cached.ts runs this script
// with Node's on-disk compile cache on, as the agent binary has it.
// Usage: node bench/bare-pi-turn.ts <openai baseUrl> <workspace dir> [--stream] [--session <file>]
import { createProvider, InMemoryCredentialStore, type Model } from "@earendil-works/pi-ai";
import { openAICompletionsApi } from "@earendil-works/pi-ai/api/openai-completions.lazy";
import {
  createAgentSession,
  ModelRuntime,
  SessionManager,
  SettingsManager,
} from "@earendil-works/pi-coding-agent";

const [baseUrl = "", cwd = process.cwd(), ...flags] = process.argv.slice(2);
const streamText = flags.includes("--stream");
const sessionAt = flags.indexOf("--session");
const sessionFile = sessionAt === -1 ? undefined : flags[sessionAt + 1];
if (sessionAt !== -1 && !sessionFile) throw new Error("bare-pi-turn: --session needs a file");
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
  sessionManager: sessionFile === undefined ? SessionManager.inMemory() : SessionManager.open(sessionFile),
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
