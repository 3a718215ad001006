// The provider-quirk sanitizers against OpenClaw 2026.9.6's own answers on the same inputs (recorded by
// tooling/parity/record/provider-quirks.mjs), plus what the kernel adds: system messages ahead of the
// history, which quirks each model gets, and unchanged input returned as is.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  applyProviderQuirks,
  providerQuirksFor,
  type RequestMessage,
  sanitizeGoogleAssistantFirstOrdering,
  scrubAnthropicRefusalMagic,
  validateAnthropicTurns,
  validateGeminiTurns,
} from "./provider-quirks.ts";

interface Fixture {
  readonly cases: readonly {
    readonly name: string;
    readonly input: RequestMessage[];
    readonly validateAnthropicTurns: RequestMessage[];
    readonly validateGeminiTurns: RequestMessage[];
    readonly sanitizeGoogleAssistantFirstOrdering: RequestMessage[];
  }[];
  readonly scrub: readonly { readonly provider: string; readonly prompt: string; readonly sent: string }[];
}

const fixture = JSON.parse(
  readFileSync(new URL("../../fixtures/openclaw/provider-quirks/sanitizers.json", import.meta.url), "utf8"),
) as Fixture;

/** Timestamps of inserted messages are the clock's: normalised as the recorder did. */
const normalise = (messages: unknown) =>
  JSON.parse(
    JSON.stringify(messages, (key, value) =>
      key === "timestamp" && typeof value === "number" && value > 1e12 ? 0 : value,
    ),
  );

describe("provider quirks match OpenClaw 2026.9.6", () => {
  it.each(fixture.cases.map((entry) => [entry.name, entry] as const))("%s", (_name, entry) => {
    expect(normalise(validateAnthropicTurns(structuredClone(entry.input)))).toEqual(
      entry.validateAnthropicTurns,
    );
    expect(normalise(validateGeminiTurns(structuredClone(entry.input)))).toEqual(entry.validateGeminiTurns);
    expect(normalise(sanitizeGoogleAssistantFirstOrdering(structuredClone(entry.input)))).toEqual(
      entry.sanitizeGoogleAssistantFirstOrdering,
    );
  });

  it("scrubs the refusal magic string for provider anthropic, as OpenClaw", () => {
    // Each provider on its own API; OpenClaw compares the id exactly, so "Anthropic" is another provider.
    const apiOf: Record<string, string> = {
      anthropic: "anthropic-messages",
      openai: "openai-responses",
      google: "google-generative-ai",
      Anthropic: "openai-completions",
    };
    expect(fixture.scrub.length).toBeGreaterThan(10);
    for (const { provider, prompt, sent } of fixture.scrub) {
      const quirks = providerQuirksFor({ provider, api: apiOf[provider] ?? "openai-completions" });
      expect(quirks.scrubRefusalMagic ? scrubAnthropicRefusalMagic(prompt) : prompt).toBe(sent);
    }
  });
});

describe("applyProviderQuirks", () => {
  const system = { role: "system", content: "You are a test agent.", timestamp: 0 };

  it("puts the Google bootstrap turn after the request's system messages", () => {
    const messages = [
      system,
      { role: "assistant", content: [{ type: "text", text: "first" }], timestamp: 2 },
    ];
    const quirks = providerQuirksFor({ provider: "google", api: "google-generative-ai" });
    const sent = applyProviderQuirks(messages, quirks);
    expect(sent.map((message) => message.role)).toEqual(["system", "user", "assistant"]);
    expect(sent[1]).toMatchObject({ role: "user", content: "(session bootstrap)" });
  });

  it("scrubs and merges user turns for Anthropic, and leaves the input untouched", () => {
    const messages = [
      system,
      {
        role: "user",
        content: [{ type: "text", text: "ANTHROPIC_MAGIC_STRING_TRIGGER_REFUSAL please" }],
        timestamp: 1,
      },
      { role: "user", content: "second", timestamp: 2 },
    ];
    const before = structuredClone(messages);
    const sent = applyProviderQuirks(
      messages,
      providerQuirksFor({ provider: "anthropic", api: "anthropic-messages" }),
    );
    expect(sent).toEqual([
      system,
      {
        role: "user",
        content: [
          { type: "text", text: "[redacted] please" },
          { type: "text", text: "second" },
        ],
        timestamp: 2,
      },
    ]);
    expect(messages).toEqual(before);
  });

  it("drops errored assistant turns (never sent by pi-ai) before merging the user turns around them", () => {
    const messages = [
      system,
      { role: "user", content: "first", timestamp: 1 },
      { role: "assistant", content: [], stopReason: "error", errorMessage: "401", timestamp: 2 },
      { role: "user", content: "second", timestamp: 3 },
    ];
    const sent = applyProviderQuirks(
      messages,
      providerQuirksFor({ provider: "ant", api: "anthropic-messages" }),
    );
    expect(sent.map((message) => message.role)).toEqual(["system", "user"]);
    expect(sent[1]?.content).toEqual([
      { type: "text", text: "first" },
      { type: "text", text: "second" },
    ]);
  });

  it("returns the same array when there is nothing to change or no quirk applies", () => {
    const messages = [system, { role: "user", content: "hi", timestamp: 1 }];
    expect(
      applyProviderQuirks(messages, providerQuirksFor({ provider: "anthropic", api: "anthropic-messages" })),
    ).toBe(messages);
    const openai = providerQuirksFor({ provider: "openai", api: "openai-completions" });
    expect(openai).toEqual({
      scrubRefusalMagic: false,
      validateAnthropicTurns: false,
      validateGeminiTurns: false,
      googleTurnOrdering: false,
    });
    const doubled = [...messages, { role: "user", content: "again", timestamp: 2 }];
    expect(applyProviderQuirks(doubled, openai)).toBe(doubled);
  });
});
