// headRulesOutSilentPayload decides on a prefix of a payload text only what the whole text decides: the final
// payload of a long streamed reply is tested for silence on such a prefix (FinalTextSkeleton.expandedHead), so
// that its long text is not read.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { headRulesOutSilentPayload, isSilentReplyPayloadText } from "./silent-tokens.ts";

const piece = fc.constantFrom(
  "NO_REPLY",
  "no_reply",
  "NO_RE",
  "think",
  "thinking",
  "Thinking:",
  "thought",
  "analysis",
  "reasoning",
  "reason",
  "the",
  "alpha",
  "tar",
  "a",
  "r",
  "<think>",
  "</think>",
  '"NO_REPLY"',
  '{"action": "NO_REPLY"}',
  "I will stay quiet.",
  "1.5",
  "naïve",
  "\u00a0",
  " ",
  "  ",
  "\n",
  "\t",
  ":",
);
const text = fc.array(piece, { minLength: 0, maxLength: 8 }).map((pieces) => pieces.join(""));

describe("headRulesOutSilentPayload", () => {
  it("rules a text out on a prefix only when the whole text is not silent", () => {
    let ruledOutOnPrefix = 0;
    fc.assert(
      fc.property(text, fc.nat(), (whole, cut) => {
        const head = whole.slice(0, cut % (whole.length + 1));
        if (headRulesOutSilentPayload(head, false, "NO_REPLY")) {
          ruledOutOnPrefix++;
          expect(isSilentReplyPayloadText(whole, "NO_REPLY")).toBe(false);
          // and the whole text's own first steps agree
          expect(headRulesOutSilentPayload(whole, true, "NO_REPLY")).toBe(true);
        }
      }),
      { numRuns: 20000 },
    );
    // not vacuous: many prefixes decide
    expect(ruledOutOnPrefix).toBeGreaterThan(2000);
  });

  it("leaves a prefix that stops inside a reasoning word undecided", () => {
    expect(headRulesOutSilentPayload("  reaso", false, "NO_REPLY")).toBe(false);
    expect(isSilentReplyPayloadText("  reasoning\nNO_REPLY", "NO_REPLY")).toBe(true);
    expect(headRulesOutSilentPayload("  reasonable answer", false, "NO_REPLY")).toBe(true);
  });
});
