// stripInlineDirectiveTagsForDisplay against OpenClaw 2026.9.6's answers
// (fixtures/openclaw/streaming/directive-display.json, recorded by
// tooling/parity/record/parity-leftovers.mjs), and how it differs from the delivery variant.
import { describe, expect, it } from "vitest";
import { stripInlineDirectiveTagsForDelivery, stripInlineDirectiveTagsForDisplay } from "./directive-tags.ts";
import { loadFixtureCases } from "./parity-fixtures.test-helpers.ts";

describe("stripInlineDirectiveTagsForDisplay parity with OpenClaw", () => {
  const cases = loadFixtureCases<{ input: string; output: { text: string; changed: boolean } }>(
    "directive-display.json",
  );
  it("strips as OpenClaw does on every recorded text", () => {
    expect(cases.length).toBeGreaterThan(10);
    for (const c of cases) expect(stripInlineDirectiveTagsForDisplay(c.input), c.input).toEqual(c.output);
  });

  it("removes the tag only and keeps the padding, unlike the delivery variant", () => {
    const text = "  [[reply_to:123]]  padded  ";
    expect(stripInlineDirectiveTagsForDisplay(text)).toEqual({ text: "    padded  ", changed: true });
    expect(stripInlineDirectiveTagsForDelivery(text).text).toBe("padded");
    expect(stripInlineDirectiveTagsForDisplay("`[[audio_as_voice]]`")).toEqual({
      text: "`[[audio_as_voice]]`",
      changed: false,
    });
  });
});
