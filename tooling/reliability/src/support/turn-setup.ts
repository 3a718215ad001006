// Shared set-up of the reliability suite: the config of a kernel whose one model is tooling/fake-llm over
// real HTTP (OpenAI wire), and a fake-llm scenario that answers every request from its prompt. Owns only
// these fixtures; the checks live in the test files, the crash child in src/crash/child.ts.
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import { type DataStep, type RecordedRequest, reply, toolCall } from "@agent-kernel/fake-llm";

export const MODEL_REF = "local/scripted-1";

export interface FakeLlmConfigOptions {
  readonly baseUrl: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
  /** Extra top-level config fields (merged shallowly), e.g. `auth`. */
  readonly extra?: Record<string, unknown>;
  /** Provider fields beyond baseUrl/api/models (e.g. `apiKey`). */
  readonly provider?: Record<string, unknown>;
  readonly env?: Record<string, string>;
}

export function fakeLlmConfig(options: FakeLlmConfigOptions): KernelConfig {
  return parseConfig(
    {
      store: { stateDir: options.stateDir },
      models: {
        providers: {
          local: {
            baseUrl: options.baseUrl,
            api: "openai-completions",
            models: [{ id: "scripted-1", contextWindow: 32_000, maxTokens: 4096 }],
            ...(options.provider ?? {}),
          },
        },
      },
      agents: { defaults: { model: MODEL_REF, workspace: options.workspaceDir, skipBootstrap: true } },
      tools: { profile: "coding" },
      ...(options.extra ?? {}),
    },
    { env: options.env ?? {} },
  );
}

interface WireMessage {
  readonly role?: string;
  readonly content?: unknown;
}

/** The text of the request's last user message (OpenAI wire: a string or a list of text parts). */
export function lastUserText(request: RecordedRequest): string {
  const messages = (request.body as { messages?: WireMessage[] } | undefined)?.messages ?? [];
  const user = messages.findLast((message) => message.role === "user");
  const content = user?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === "object" && part !== null && "text" in part ? String(part.text) : ""))
      .join("");
  }
  return "";
}

/** Whether the request's last message is a tool result (the model asked for a tool and got its answer). */
export function lastIsToolResult(request: RecordedRequest): boolean {
  const messages = (request.body as { messages?: WireMessage[] } | undefined)?.messages ?? [];
  return messages.at(-1)?.role === "tool";
}

/**
 * The crash trials' model: a prompt containing `[tool]` first asks for the `write` tool (a file named after
 * the prompt), then answers; every other prompt is answered at once. Streams slowly enough (a few ms between
 * frames) for a kill to land inside a stream.
 */
export function crashTrialStep(request: RecordedRequest): DataStep {
  const prompt = lastUserText(request);
  const slow = { delayMs: 2, chunkSize: 6 };
  if (prompt.includes("[tool]") && !lastIsToolResult(request)) {
    const name = prompt.replace(/[^a-z0-9]+/gi, "-").slice(0, 40);
    return toolCall("write", { path: `${name}.txt`, content: `${prompt}\n` }, slow);
  }
  return reply(`Answer to: ${prompt}. This reply streams in several small deltas.`, slow);
}
