import { scanFenceSpans } from "@agent-kernel/markdown";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkForTelegram } from "./chunk.ts";

const FENCE_LINE_RE = /^ {0,3}(`{3,}|~{3,}).*$/gm;

/** Letters and digits outside fence marker lines: what a reader must get in full. */
function content(markdown: string): string {
  return markdown.replace(FENCE_LINE_RE, "").replace(/[^\p{L}\p{N}]/gu, "");
}

const line = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 80 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 100, maxLength: 400 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      "```ts",
      "```",
      "~~~",
      "> quote. *x*",
      "# Title!",
      "- item (1)",
      "**bold** _it_",
    ),
  },
);
const markdown = fc.array(line, { maxLength: 40 }).map((lines) => lines.join("\n"));

describe("chunkForTelegram", () => {
  it("keeps a short text whole", () => {
    expect(chunkForTelegram("Hello *there*.", 4096, "MarkdownV2")).toEqual([
      { markdown: "Hello *there*.", formatted: "Hello _there_\\." },
    ]);
    expect(chunkForTelegram(" \n\n ", 4096, "MarkdownV2")).toEqual([]);
  });

  it("cuts at paragraph breaks and reopens a cut fence with its info string", () => {
    const code = Array.from({ length: 20 }, (_, i) => `print(${i})`).join("\n");
    const chunks = chunkForTelegram(`intro\n\n\`\`\`python\n${code}\n\`\`\``, 100, "MarkdownV2");
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks.slice(1)) expect(chunk.markdown.startsWith("```python\n")).toBe(true);
    for (const chunk of chunks) expect(scanFenceSpans(chunk.markdown).state.open).toBeUndefined();
    expect(chunks.flatMap((c) => c.markdown.split("\n")).filter((l) => l.startsWith("print("))).toHaveLength(
      20,
    );
  });

  it("never cuts a long line so that a part starts like a fence line (found by the property below)", () => {
    // one prose line: the "~~~" is mid-line; a part starting with it would open a code block that eats "0"
    const line = `${"        &               &   & &              &  &  & &&"}               ~~~!!!!!!!!!!!!!!!!!!  &    &0`;
    for (const mode of ["HTML", "MarkdownV2"] as const) {
      const chunks = chunkForTelegram(line, 64, mode);
      expect(chunks.length).toBeGreaterThan(1);
      for (const chunk of chunks) expect(chunk.markdown).not.toMatch(/^ {0,3}(`{3,}|~{3,})/m);
      expect(chunks.map((c) => content(c.markdown)).join("")).toBe("0");
    }
    // inside a fence, a part of a long code line must not close the fence either
    const code = `\`\`\`
${"x ".repeat(40)}\`\`\` still code ${"y ".repeat(40)}
\`\`\``;
    const chunks = chunkForTelegram(code, 64, "MarkdownV2");
    const codeLines = chunks.flatMap((c) => c.markdown.split("\n")).filter((l) => !/^```$/.test(l));
    expect(codeLines.some((l) => /^ {0,3}```/.test(l))).toBe(false);
    expect(
      chunks
        .map((c) => c.markdown.replace(/^```$/gm, ""))
        .join("")
        .replace(/\s/g, ""),
    ).toContain("stillcode");
  });

  it("property: every piece fits formatted and raw, fences close in the piece they open, nothing is lost", () => {
    fc.assert(
      fc.property(
        markdown,
        fc.integer({ min: 64, max: 700 }),
        fc.constantFrom("MarkdownV2", "HTML" as const),
        (text, limit, mode) => {
          const chunks = chunkForTelegram(text, limit, mode);
          for (const chunk of chunks) {
            expect(chunk.formatted.length).toBeLessThanOrEqual(limit);
            expect(chunk.markdown.length).toBeLessThanOrEqual(limit);
          }
          for (const chunk of chunks.slice(0, -1))
            expect(scanFenceSpans(chunk.markdown).state.open).toBeUndefined();
          expect(chunks.map((c) => content(c.markdown)).join("")).toBe(content(text));
        },
      ),
      { numRuns: 400 },
    );
  });
});
