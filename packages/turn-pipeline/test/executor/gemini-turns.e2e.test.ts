// Gemini's turn quirks in what pi's real session sends (pi's faux provider on the google-generative-ai API
// records the context it receives): an assistant-first history gets OpenClaw's "(session bootstrap)" user
// turn first, and two assistant turns in a row are merged into one; the transcript keeps them as stored.
import { randomUUID } from "node:crypto";
import type { FauxProviderHandle } from "@earendil-works/pi-ai";
import { fauxAssistantMessage, fauxProvider } from "@earendil-works/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { executeTurn } from "../../src/executor/index.ts";
import { AGENT, createHarness, type Harness } from "./harness.ts";

let faux: FauxProviderHandle;
let harness: Harness;
/** The messages of every request the provider received (system messages left out). */
let sent: { role: string; content: unknown }[][];

beforeEach(async () => {
  sent = [];
  faux = fauxProvider({
    provider: "gem",
    api: "google-generative-ai",
    models: [{ id: "gem-1", input: ["text"], contextWindow: 200_000, maxTokens: 8192 }],
  });
  faux.setResponses(
    Array.from({ length: 4 }, () => (context: { messages: unknown[] }) => {
      sent.push(
        (context.messages as { role: string; content: unknown }[]).filter(
          (message) => message.role !== "system",
        ),
      );
      return fauxAssistantMessage("ok");
    }),
  );
  harness = await createHarness({
    config: {
      models: {
        providers: {
          gem: {
            baseUrl: "http://127.0.0.1:9/v1",
            api: "google-generative-ai",
            models: [{ id: "gem-1", contextWindow: 200_000, maxTokens: 8192 }],
          },
        },
      },
      agents: { defaults: { model: "gem/gem-1" } },
      tools: { profile: "minimal" },
    },
    nativeProviders: [faux.provider],
  });
});
afterEach(async () => {
  await harness.close();
});

const assistantEntry = (parentId: string | null, text: string) => ({
  type: "message",
  id: randomUUID().slice(0, 8),
  parentId,
  timestamp: new Date().toISOString(),
  message: {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "google-generative-ai",
    provider: "gem",
    model: "gem-1",
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "stop",
    timestamp: Date.now(),
  },
});

describe("Gemini turn quirks on the request", () => {
  it("merges two assistant turns in a row into one", async () => {
    const key = "agent:main:gemini-merge";
    const first = await harness.context(key);
    expect(
      (await executeTurn(first, { prompt: "hello", timeoutMs: 30_000, entryPoint: "agent" })).status,
    ).toBe("ok");
    // A second assistant message right after the answer (as an announce or a delivery mirror writes one).
    const transcript = harness.store.openTranscript(AGENT, first.sessionId);
    transcript.appendAtLeaf(assistantEntry(transcript.getLeafId(), "a note from elsewhere"));
    const second = await harness.context(key);
    expect(
      (await executeTurn(second, { prompt: "and now?", timeoutMs: 30_000, entryPoint: "agent" })).status,
    ).toBe("ok");
    const request = sent.at(-1) ?? [];
    expect(request.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(request[1]?.content)).toContain("ok");
    expect(JSON.stringify(request[1]?.content)).toContain("a note from elsewhere");
    const stored = transcript.getEntries().filter((entry) => entry.type === "message");
    expect(stored.filter((entry) => (entry.message as { role: string }).role === "assistant")).toHaveLength(
      3,
    );
  });

  it("puts the session bootstrap user turn before an assistant-first history", async () => {
    const key = "agent:main:gemini-first";
    const context = await harness.context(key);
    const transcript = harness.store.openTranscript(AGENT, context.sessionId, {
      header: {
        type: "session",
        version: 3,
        id: context.sessionId,
        timestamp: new Date().toISOString(),
        cwd: harness.workspaceDir,
      },
    });
    transcript.appendAtLeaf(assistantEntry(null, "Hi, I am your assistant."));
    expect(
      (await executeTurn(context, { prompt: "hello", timeoutMs: 30_000, entryPoint: "agent" })).status,
    ).toBe("ok");
    const request = sent.at(-1) ?? [];
    expect(request.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(request[0]?.content).toBe("(session bootstrap)");
    expect(JSON.stringify(transcript.getEntries())).not.toContain("(session bootstrap)");
  });
});
