// The strided and newline-anchored searches give exactly `includes`' answers.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasSpaceAfterNewline, hasSpaceBeforeNewline, hasSpaceRun } from "./text-scan.ts";

const text = fc
  .array(fc.constantFrom(" ", "  ", "   ", "    ", "a", "bc", "\n", "\t", " \n", "\n "), { maxLength: 40 })
  .map((parts) => parts.join(""));

describe("text-scan", () => {
  it("hasSpaceRun(text, n) equals text.includes(n spaces)", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 2, max: 5 }), (value, length) => {
        expect(hasSpaceRun(value, length)).toBe(value.includes(" ".repeat(length)));
      }),
      { numRuns: 2000 },
    );
  });

  it("the newline searches equal includes(' \\n') and includes('\\n ')", () => {
    fc.assert(
      fc.property(text, (value) => {
        expect(hasSpaceBeforeNewline(value)).toBe(value.includes(" \n"));
        expect(hasSpaceAfterNewline(value)).toBe(value.includes("\n "));
      }),
      { numRuns: 2000 },
    );
  });

  it("finds runs at both ends of the text", () => {
    expect(hasSpaceRun("    ", 4)).toBe(true);
    expect(hasSpaceRun("a   ", 4)).toBe(false);
    expect(hasSpaceRun("  ab", 2)).toBe(true);
    expect(hasSpaceRun("ab  ", 2)).toBe(true);
    expect(hasSpaceRun(" a b ", 2)).toBe(false);
    expect(hasSpaceBeforeNewline("\n")).toBe(false);
    expect(hasSpaceAfterNewline("a\n")).toBe(false);
  });
});
