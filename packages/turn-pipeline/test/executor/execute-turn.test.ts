import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TranscriptEntry } from "@agent-kernel/session-store";
import {
  type FauxProviderHandle,
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxToolCall,
  getSystemMessageText,
  type SystemMessage,
} from "@earendil-works/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BOOTSTRAP_ENTRY_TYPE, executeTurn } from "../../src/executor/index.ts";
import type { AgentEventPayload } from "../../src/executor/types.ts";
import { AGENT, createHarness, fauxConfig, type Harness } from "./harness.ts";

let faux: FauxProviderHandle;
let harness: Harness;

beforeEach(async () => {
  faux = fauxProvider({
    provider: "faux",
    models: [
      { id: "faux-1", reasoning: true, input: ["text", "image"], contextWindow: 200_000, maxTokens: 8192 },
    ],
    tokenSize: { min: 4, max: 4 },
  });
  harness = await createHarness({ config: fauxConfig(), nativeProviders: [faux.provider] });
});
afterEach(async () => {
  await harness.close();
});

/** The system prompt as the provider receives it (pi sends it as leading system messages). */
function systemText(ctx: { messages: readonly { role: string }[] }): string {
  return ctx.messages
    .filter((message): message is SystemMessage => message.role === "system")
    .map((message) => getSystemMessageText(message))
    .join("\n");
}

const kindOf = (entry: TranscriptEntry): string =>
  entry.type === "message" ? `message:${(entry.message as { role: string }).role}` : entry.type;

function expectGapFree(events: readonly AgentEventPayload[], runId: string): void {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
  for (const event of events) expect(event.runId).toBe(runId);
}

describe("executeTurn with pi's faux provider", () => {
  it("runs a tool-using turn: the file is written in the workspace, everything is stored once", async () => {
    const context = await harness.context("agent:main:main");
    let seenTools: string[] = [];
    let seenSystem = "";
    faux.setResponses([
      (ctx) => {
        seenTools = ctx.messages.flatMap((message) =>
          message.role === "system" ? (message.toolsAdded ?? []).map((tool) => tool.name) : [],
        );
        seenSystem = systemText(ctx);
        return fauxAssistantMessage(
          [
            fauxText("Writing it."),
            fauxToolCall("write", { path: "notes.txt", content: "hello" }, { id: "w1" }),
          ],
          { stopReason: "toolUse" },
        );
      },
      fauxAssistantMessage("Saved notes.txt."),
    ]);
    const partials: string[] = [];
    const streamed: AgentEventPayload[] = [];
    const result = await executeTurn(context, {
      prompt: "Save hello to notes.txt",
      timeoutMs: 30_000,
      entryPoint: "agent",
      callbacks: {
        onPartialReply: (payload) => partials.push(payload.text),
        onAgentEvent: (event) => streamed.push(event),
      },
    });

    expect(result.status).toBe("ok");
    expect(result.assistantText).toBe("Saved notes.txt.");
    expect(result.payloads.map((payload) => payload.text)).toEqual(["Writing it.", "Saved notes.txt."]);
    expect(readFileSync(join(harness.workspaceDir, "notes.txt"), "utf8")).toBe("hello");
    expect(partials.at(-1)).toBe("Saved notes.txt.");
    expect(seenTools.sort()).toEqual(["edit", "exec", "read", "sessions_history", "sessions_list", "write"]);
    expect(seenSystem).toContain("## Tooling");
    expect(seenSystem).toContain("## Safety");
    expect(seenSystem).toContain(`Your working directory is ${harness.workspaceDir}`);
    expect(seenSystem).toContain("model=faux/faux-1");
    // Missing bootstrap files are one-line markers on the first turn.
    expect(seenSystem).toContain(`[MISSING] Expected at: ${join(harness.workspaceDir, "AGENTS.md")}`);

    expect(streamed).toEqual(result.events);
    expectGapFree(result.events, result.runId);
    const streams = new Set(result.events.map((event) => event.stream));
    expect([...streams].sort()).toEqual(["assistant", "lifecycle", "tool"]);
    expect(result.events.at(0)?.data).toMatchObject({ phase: "start" });
    expect(result.events.at(-1)?.data).toMatchObject({ phase: "end", status: "ok" });

    const transcript = harness.store.openTranscript(AGENT, context.sessionId);
    expect(transcript.getEntries().map(kindOf)).toEqual([
      "custom",
      "model_change",
      "thinking_level_change",
      "message:system",
      "message:user",
      "message:assistant",
      "message:toolResult",
      "message:assistant",
    ]);
    const run = await harness.store.runs.get(result.runId);
    expect(run).toMatchObject({
      status: "succeeded",
      provider: "faux",
      model: "faux-1",
      entryPoint: "agent",
    });
    expect(run?.fallbackChain).toEqual([{ provider: "faux", model: "faux-1" }]);
    const storedEvents = await harness.store.runs.events(result.runId);
    expect(storedEvents.length).toBe(result.events.length);
    expect(result.attempts).toHaveLength(1);
  });

  it("injects bootstrap files on the first turn only: blank skipped, large trimmed, and replayed unchanged", async () => {
    writeFileSync(join(harness.workspaceDir, "AGENTS.md"), "Always answer in French.\n");
    writeFileSync(join(harness.workspaceDir, "SOUL.md"), "   \n\n");
    writeFileSync(join(harness.workspaceDir, "TOOLS.md"), `${"x".repeat(30_000)}END`);
    const context = await harness.context("agent:main:boot");
    const systems: string[] = [];
    const capture = (answer: string) => (ctx: { messages: readonly { role: string }[] }) => {
      systems.push(systemText(ctx));
      return fauxAssistantMessage(answer);
    };
    faux.setResponses([capture("Bonjour"), capture("Encore")]);
    expect((await executeTurn(context, { prompt: "hi", timeoutMs: 0, entryPoint: "agent" })).status).toBe(
      "ok",
    );
    // The files change after the first turn; the session keeps what its first turn saw.
    writeFileSync(join(harness.workspaceDir, "AGENTS.md"), "Always answer in German.\n");
    expect((await executeTurn(context, { prompt: "again", timeoutMs: 0, entryPoint: "agent" })).status).toBe(
      "ok",
    );
    const [first, second] = systems;
    expect(first).toContain("Always answer in French.");
    expect(first).not.toContain("SOUL.md");
    expect(first).toContain("[...truncated, read TOOLS.md for full content...]");
    expect(first).toContain("END");
    expect(first).toContain(`[MISSING] Expected at: ${join(harness.workspaceDir, "USER.md")}`);
    expect(second).toBe(first);
    const entries = harness.store.openTranscript(AGENT, context.sessionId).getEntries();
    expect(entries.filter((entry) => entry.type === "custom")).toHaveLength(1);
    expect(entries.find((entry) => entry.type === "custom")).toMatchObject({
      customType: BOOTSTRAP_ENTRY_TYPE,
    });
    // One system message: the second turn changed nothing in the prompt.
    expect(entries.filter((entry) => kindOf(entry) === "message:system")).toHaveLength(1);
  });

  it("sends images with the current turn only", async () => {
    const context = await harness.context("agent:main:images");
    const seen: string[][] = [];
    const capture = (ctx: { messages: { role: string; content: unknown }[] }) => {
      seen.push(
        ctx.messages
          .filter((message) => message.role === "user")
          .map((message) =>
            Array.isArray(message.content)
              ? message.content.map((block: { type: string }) => block.type).join("+")
              : "text",
          ),
      );
      return fauxAssistantMessage("ok");
    };
    faux.setResponses([capture, capture]);
    // A real 1×1 PNG: pi decodes images before sending them.
    const image = {
      type: "image" as const,
      data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      mimeType: "image/png",
    };
    await executeTurn(context, { prompt: "look", images: [image], timeoutMs: 0, entryPoint: "agent" });
    await executeTurn(context, { prompt: "and now?", timeoutMs: 0, entryPoint: "agent" });
    expect(seen[0]).toEqual(["text+image"]);
    expect(seen[1]?.at(-1)).not.toContain("image");
  });

  it("gives the message tool the delivery sink and drops the reply that repeats it", async () => {
    const sent: string[] = [];
    const context = await harness.context("agent:main:msg", {
      overrides: {
        deliverySink: {
          send: async (message) => {
            sent.push(message.text);
            return { messageId: `m${sent.length}` };
          },
        },
      },
    });
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("message", { text: "The build is green again." }, { id: "m1" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("The build is green again."),
    ]);
    const result = await executeTurn(context, { prompt: "tell me", timeoutMs: 0, entryPoint: "auto-reply" });
    expect(result.status).toBe("ok");
    expect(sent).toEqual(["The build is green again."]);
    expect(result.messagingToolTexts).toEqual(["The build is green again."]);
    expect(result.payloads).toEqual([]);
  });

  it("lowers the thinking level when the provider rejects it, on the same model", async () => {
    const context = await harness.context("agent:main:think", { request: { thinking: "high" } });
    faux.setResponses([
      fauxAssistantMessage([], {
        stopReason: "error",
        errorMessage:
          "400: {\"error\":{\"message\":\"Unsupported value: 'reasoning_effort' does not support 'high' with this model. Supported values are: 'low' and 'medium'.\"}}",
      }),
      fauxAssistantMessage("thought less"),
    ]);
    const result = await executeTurn(context, { prompt: "think", timeoutMs: 0, entryPoint: "agent" });
    expect(result.status).toBe("ok");
    expect(result.attempts.map((attempt) => [attempt.thinkingLevel, attempt.action ?? "ok"])).toEqual([
      ["high", "lower_thinking:low"],
      ["low", "ok"],
    ]);
    const entries = harness.store.openTranscript(AGENT, context.sessionId).getEntries();
    expect(entries.filter((entry) => kindOf(entry) === "message:user")).toHaveLength(1);
    expect(
      entries.filter((entry) => entry.type === "thinking_level_change").map((e) => e.thinkingLevel),
    ).toEqual(["high", "low"]);
  });
});
