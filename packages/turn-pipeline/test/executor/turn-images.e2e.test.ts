// A turn's images end to end through real HTTP: executor → pi → pi-ai's OpenAI / Anthropic clients →
// tooling/fake-llm. Asserts on the exact request bodies: the image is in this turn's request, in no later
// turn's request, never in the transcript; a model without image input gets OpenClaw's omission note instead.
import { type FakeLlm, fault, reply, startFakeLlm, type WireProvider } from "@agent-kernel/fake-llm";
import { afterEach, describe, expect, it } from "vitest";
import { executeTurn } from "../../src/executor/index.ts";
import { IMAGES_OMITTED_NOTE } from "../../src/executor/turn-images.ts";
import { AGENT, createHarness, type Harness } from "./harness.ts";
import { wireConfig } from "./wire-config.ts";

// A real 1×1 PNG (pi decodes and fits images before sending them).
const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const image = { type: "image" as const, data: PNG_1X1, mimeType: "image/png" };

let llm: FakeLlm | undefined;
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  await llm?.close();
  harness = undefined;
  llm = undefined;
});

/** wireConfig with the primary model's `input` set, and the fallback model's (text only unless given). */
async function setUp(wire: WireProvider, primaryInput: readonly string[], fallbackInput?: readonly string[]) {
  llm = await startFakeLlm();
  const config = wireConfig(wire, llm.baseUrlFor(wire), {
    fallback: fallbackInput !== undefined,
    profiles: ["a"],
  }) as {
    models: { providers: Record<string, { models: Record<string, unknown>[] }> };
  };
  for (const provider of Object.values(config.models.providers)) {
    provider.models = provider.models.map((model) =>
      model.id === "m1"
        ? { ...model, input: [...primaryInput] }
        : { ...model, input: [...(fallbackInput ?? ["text"])] },
    );
  }
  harness = await createHarness({ config });
  return { llm, harness };
}

/** The image blocks of a request body, in either wire format. */
function imageBlocksOf(body: unknown): unknown[] {
  const found: unknown[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) walk(item);
    else if (typeof value === "object" && value !== null) {
      const type = (value as { type?: unknown }).type;
      if (type === "image" || type === "image_url") found.push(value);
      else for (const item of Object.values(value)) walk(item);
    }
  };
  walk(body);
  return found;
}

describe.each(["openai", "anthropic"] as const)("turn images over the %s wire (tooling/fake-llm)", (wire) => {
  it("sends the image with its own turn only and keeps it out of the transcript", async () => {
    const { llm, harness } = await setUp(wire, ["text", "image"]);
    llm.enqueue(reply("A single pixel."), reply("Nothing new to see."));
    const context = await harness.context("agent:main:images");
    const first = await executeTurn(context, {
      prompt: "What is in this picture?",
      images: [image],
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(first.status).toBe("ok");
    const start = first.events.find(
      (event) => event.stream === "lifecycle" && event.data.phase === "attempt_start",
    );
    expect(start?.data.images).toEqual(["image/png"]);
    const second = await executeTurn(await harness.context("agent:main:images"), {
      prompt: "And now?",
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(second.status).toBe("ok");
    const secondStart = second.events.find(
      (event) => event.stream === "lifecycle" && event.data.phase === "attempt_start",
    );
    expect(secondStart?.data).not.toHaveProperty("images");

    expect(llm.requests).toHaveLength(2);
    const [withImage, withoutImage] = llm.requests.map((request) => request.body);
    expect(imageBlocksOf(withImage)).toHaveLength(1);
    expect(JSON.stringify(withImage)).toContain("image/png");
    expect(JSON.stringify(withImage)).toContain("What is in this picture?");
    // The next turn's request holds the earlier question and answer, not the picture.
    expect(imageBlocksOf(withoutImage)).toEqual([]);
    expect(JSON.stringify(withoutImage)).toContain("What is in this picture?");
    expect(JSON.stringify(withoutImage)).toContain("A single pixel.");
    expect(JSON.stringify(withoutImage)).not.toContain("base64");

    // Bounded transcript: the stored user message is the prompt text, no base64.
    const stored = JSON.stringify(harness.store.openTranscript(AGENT, context.sessionId).getEntries());
    expect(stored).toContain("What is in this picture?");
    expect(stored).not.toContain(PNG_1X1.slice(0, 40));
    expect(stored).not.toContain('"type":"image"');
  });

  it("omits the images for a model without image input and tells the model, as OpenClaw does", async () => {
    const { llm, harness } = await setUp(wire, ["text"]);
    llm.enqueue(reply("I cannot see images."));
    const context = await harness.context("agent:main:no-vision");
    const result = await executeTurn(context, {
      prompt: "Describe this",
      images: [image, image],
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("ok");
    const body = llm.requests[0]?.body;
    expect(imageBlocksOf(body)).toEqual([]);
    expect(JSON.stringify(body)).toContain(IMAGES_OMITTED_NOTE);
    expect(JSON.stringify(body)).not.toContain(PNG_1X1.slice(0, 40));
    const omitted = result.events.find(
      (event) => event.stream === "lifecycle" && event.data.phase === "images_omitted",
    );
    expect(omitted?.data).toMatchObject({ count: 2, reason: "model_without_vision" });
  });

  it("gives a fallback model that takes images the picture the failed text-only model did not get", async () => {
    const { llm, harness } = await setUp(wire, ["text"], ["text", "image"]);
    llm.addRule({ when: { model: "m1" }, steps: [fault("server_error", { times: "always" })] });
    llm.enqueue(reply("Seen by m2."));
    const context = await harness.context("agent:main:fallback-vision");
    const result = await executeTurn(context, {
      prompt: "Look at this",
      images: [image],
      timeoutMs: 60_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("ok");
    expect(result.fallback?.model).toBe("m2");
    const byModel = (id: string) => llm?.requests.filter((request) => request.model === id) ?? [];
    expect(byModel("m1").length).toBeGreaterThan(0);
    for (const request of byModel("m1")) {
      expect(imageBlocksOf(request.body)).toEqual([]);
      expect(JSON.stringify(request.body)).toContain(IMAGES_OMITTED_NOTE);
    }
    const [m2] = byModel("m2");
    expect(imageBlocksOf(m2?.body)).toHaveLength(1);
    expect(JSON.stringify(m2?.body)).not.toContain(IMAGES_OMITTED_NOTE);
    // Still one user message in the transcript, without the picture.
    const entries = harness.store.openTranscript(AGENT, context.sessionId).getEntries();
    const users = entries.filter(
      (entry) => entry.type === "message" && (entry.message as { role: string }).role === "user",
    );
    expect(users).toHaveLength(1);
    expect(JSON.stringify(users)).not.toContain(PNG_1X1.slice(0, 40));
  });

  it("sends an images-only turn (empty prompt) without an empty text block", async () => {
    const { llm, harness } = await setUp(wire, ["text", "image"]);
    llm.enqueue(reply("A pixel, no words."));
    const context = await harness.context("agent:main:images-only");
    const result = await executeTurn(context, {
      prompt: "",
      images: [image],
      timeoutMs: 30_000,
      entryPoint: "agent",
    });
    expect(result.status).toBe("ok");
    const body = llm.requests[0]?.body;
    expect(imageBlocksOf(body)).toHaveLength(1);
    expect(JSON.stringify(body)).not.toMatch(/"text":""/);
  });
});
