import { describe, expect, it } from "vitest";
import { loadFixtureCases } from "./parity-fixtures.test-helpers.ts";
import { type StripReasoningOptions, stripReasoningTagsFromText } from "./reasoning-tags.ts";

type TagCase = { text: string; options?: StripReasoningOptions; expected: string };

describe("stripReasoningTagsFromText parity with OpenClaw", () => {
  const cases = loadFixtureCases<TagCase>("strip-reasoning-tags.json");
  it("has hand-written and generated cases", () => {
    expect(cases.length).toBeGreaterThan(400);
  });
  cases.forEach((c, index) => {
    it(`#${index} ${JSON.stringify(c.text).slice(0, 60)} ${JSON.stringify(c.options ?? {})}`, () => {
      expect(stripReasoningTagsFromText(c.text, c.options)).toBe(c.expected);
    });
  });
});
