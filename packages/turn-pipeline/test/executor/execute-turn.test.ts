import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionStore, Transcript, TranscriptEntry } from "@agent-kernel/session-store";
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

/**
 * The harness store, recording every transcript write (`append:1`, `appendMany:<entries>`) of the turn;
 * `refuse(write)` true makes that write throw as a full disk would.
 */
function recordingStore(
  store: SessionStore,
  writes: string[],
  refuse: (write: string) => boolean = () => false,
): SessionStore {
  const bound = <T extends object>(target: T, property: string | symbol): unknown => {
    const value: unknown = Reflect.get(target, property, target);
    return typeof value === "function" ? value.bind(target) : value;
  };
  const recording = (transcript: Transcript): Transcript =>
    new Proxy(transcript, {
      get(target, property) {
        const value = bound(target, property);
        if ((property !== "append" && property !== "appendMany") || typeof value !== "function") return value;
        return (entries: TranscriptEntry | readonly TranscriptEntry[]) => {
          const write = Array.isArray(entries) ? `appendMany:${entries.length}` : "append:1";
          writes.push(write);
          if (refuse(write)) throw new Error("SQLITE_FULL: database or disk is full");
          return value(entries);
        };
      },
    });
  return new Proxy(store, {
    get(target, property) {
      if (property !== "openTranscript") return bound(target, property);
      return (...args: Parameters<SessionStore["openTranscript"]>) =>
        recording(target.openTranscript(...args));
    },
  });
}

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
    expect(seenTools.sort()).toEqual([
      "apply_patch",
      "edit",
      "exec",
      "process",
      "read",
      "sessions_history",
      "sessions_list",
      "web_fetch",
      "write",
    ]);
    expect(seenSystem).toContain("## Tooling");
    expect(seenSystem).toContain("## Safety");
    expect(seenSystem).toContain(`Working directory: ${harness.workspaceDir}`);
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

  it("stores what the model is sent before each request: one transcript write per request, one at the end", async () => {
    writeFileSync(join(harness.workspaceDir, "a.txt"), "alpha\n");
    const writes: string[] = [];
    const context = await harness.context("agent:main:durable", {
      overrides: { store: recordingStore(harness.store, writes) },
    });
    const stored = () => harness.store.openTranscript(AGENT, context.sessionId).getEntries().map(kindOf);
    const storedAtRequest: string[][] = [];
    const answer = (message: ReturnType<typeof fauxAssistantMessage>) => () => {
      storedAtRequest.push(stored());
      return message;
    };
    faux.setResponses([
      answer(
        fauxAssistantMessage(
          [
            fauxToolCall("read", { path: "a.txt" }, { id: "r1" }),
            fauxToolCall("read", { path: "a.txt" }, { id: "r2" }),
          ],
          { stopReason: "toolUse" },
        ),
      ),
      answer(fauxAssistantMessage("Read it twice.")),
      answer(fauxAssistantMessage("Still alpha.")),
    ]);
    const turn = (prompt: string) => executeTurn(context, { prompt, timeoutMs: 30_000, entryPoint: "agent" });

    expect((await turn("Read a.txt twice")).status).toBe("ok");
    const firstRequest = [
      "custom",
      "model_change",
      "thinking_level_change",
      "message:system",
      "message:user",
    ];
    const secondRequest = [...firstRequest, "message:assistant", "message:toolResult", "message:toolResult"];
    expect(storedAtRequest).toEqual([firstRequest, secondRequest]);
    expect(stored()).toEqual([...secondRequest, "message:assistant"]);
    expect(writes).toEqual(["appendMany:5", "appendMany:3", "appendMany:1"]);

    // The next turn of the warm session: its user message is stored before the request, the answer after.
    writes.length = 0;
    expect((await turn("And now?")).status).toBe("ok");
    expect(storedAtRequest[2]).toEqual([...secondRequest, "message:assistant", "message:user"]);
    expect(stored()).toEqual([...secondRequest, "message:assistant", "message:user", "message:assistant"]);
    expect(writes).toEqual(["appendMany:1", "appendMany:1"]);
  });

  it("a refused transcript write ends the turn as an error; the next turn continues from what was stored", async () => {
    const writes: string[] = [];
    let refusing = false;
    const context = await harness.context("agent:main:refused");
    const refusingContext = { ...context, store: recordingStore(harness.store, writes, () => refusing) };
    const stored = () => harness.store.openTranscript(AGENT, context.sessionId).getEntries().map(kindOf);
    const turn = (prompt: string, turnContext = context) =>
      executeTurn(turnContext, { prompt, timeoutMs: 30_000, entryPoint: "agent" });
    faux.setResponses([fauxAssistantMessage("First answer.")]);
    expect((await turn("first", refusingContext)).status).toBe("ok");
    const firstTurn = stored();

    // The user message of the next turn cannot be stored: the model is not asked, the turn fails.
    refusing = true;
    faux.setResponses([fauxAssistantMessage("never sent")]);
    const failed = await turn("second", refusingContext);
    expect(failed.status).toBe("error");
    expect(failed.errorMessage).toMatch(/could not store/);
    expect(faux.state.callCount).toBe(1);
    expect(stored()).toEqual(firstTurn);
    expect((await harness.store.runs.get(failed.runId))?.status).toBe("failed");

    // The store works again: the next turn reopens the session from what is stored and continues it.
    refusing = false;
    faux.setResponses([fauxAssistantMessage("Third answer.")]);
    expect((await turn("third", refusingContext)).status).toBe("ok");
    expect(stored()).toEqual([...firstTurn, "message:user", "message:assistant"]);
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
