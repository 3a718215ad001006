// Test-only wiring: pi-ai's real providers (openai-completions, anthropic-messages) pointed at a fake LLM
// server, and a turn runner that returns what pi reported. Not exported from the package.
import {
  type Api,
  type AssistantMessage,
  type Context,
  createModels,
  createProvider,
  type Model,
  type StreamOptions,
  Type,
} from "@earendil-works/pi-ai";
import { anthropicMessagesApi } from "@earendil-works/pi-ai/api/anthropic-messages.lazy";
import { openAICompletionsApi } from "@earendil-works/pi-ai/api/openai-completions.lazy";
import type { FakeLlm } from "../src/server.ts";
import type { WireProvider } from "../src/types.ts";

export const WIRES: readonly WireProvider[] = ["openai", "anthropic"];

export const DEFAULT_KEY: Record<WireProvider, string> = {
  openai: "sk-test-OAI1",
  anthropic: "sk-ant-test-ANT1",
};

export interface PiClient {
  model(wire: WireProvider, id?: string): Model<Api>;
  /** Streams one turn and returns the event types seen and the final message (pi never throws here). */
  turn(
    wire: WireProvider,
    options?: StreamOptions & { modelId?: string; context?: Context },
  ): Promise<{ events: string[]; message: AssistantMessage }>;
}

export const WEATHER_CONTEXT: Context = {
  systemPrompt: "Be brief.",
  messages: [{ role: "user", content: "What is the weather in Paris?", timestamp: 1 }],
  tools: [
    {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: Type.Object({ city: Type.String() }),
    },
  ],
};

export function piClient(llm: FakeLlm): PiClient {
  const models = createModels();
  const providerId = (wire: WireProvider): string => `fake-${wire}`;
  const build = (wire: WireProvider, id: string): Model<Api> => ({
    id,
    name: id,
    api: wire === "openai" ? "openai-completions" : "anthropic-messages",
    provider: providerId(wire),
    baseUrl: llm.baseUrlFor(wire),
    reasoning: wire === "anthropic",
    input: ["text"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 128_000,
    maxTokens: 1024,
  });
  for (const wire of WIRES) {
    models.setProvider(
      createProvider({
        id: providerId(wire),
        auth: {
          apiKey: {
            name: `${wire} test key`,
            resolve: async () => ({ auth: { apiKey: DEFAULT_KEY[wire] } }),
          },
        },
        models: [build(wire, "fake-model")],
        api: wire === "openai" ? openAICompletionsApi() : anthropicMessagesApi(),
      }),
    );
  }
  return {
    model: build,
    async turn(wire, options = {}) {
      const { modelId = "fake-model", context = WEATHER_CONTEXT, ...streamOptions } = options;
      const stream = models.stream(build(wire, modelId), context, streamOptions);
      const events: string[] = [];
      for await (const event of stream) events.push(event.type);
      return { events, message: await stream.result() };
    },
  };
}

export function textOf(message: AssistantMessage): string {
  return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
}
