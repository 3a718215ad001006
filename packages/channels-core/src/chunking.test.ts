// Chunking outbound text: limits, break preferences, fences (never broken unless longer than the limit, then
// closed and reopened), chunkMode "newline", and property tests over random Markdown.
import { scanFenceSpans } from "@agent-kernel/markdown";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveTextLimit, splitText, splitTextChunks } from "./chunking.ts";

describe("resolveTextLimit", () => {
  it("is textChunkLimit (account over channel, default 4000) capped by the adapter's maxTextLength", () => {
    expect(resolveTextLimit(undefined, undefined)).toBe(4000);
    expect(resolveTextLimit({ textChunkLimit: 1000 }, 4096)).toBe(1000);
    expect(resolveTextLimit({ textChunkLimit: 9000 }, 4096)).toBe(4096);
    expect(
      resolveTextLimit({ textChunkLimit: 1000, accounts: { b: { textChunkLimit: 200 } } }, 4096, "b"),
    ).toBe(200);
    expect(() => resolveTextLimit({ textChunkLimit: 0 }, undefined)).toThrow(/positive integer/);
  });
});

describe("splitText", () => {
  it("keeps short text whole and returns nothing for empty text", () => {
    expect(splitText("hello", 10)).toEqual(["hello"]);
    expect(splitText("", 10)).toEqual([]);
  });

  it("breaks at the last newline, else the last space, else hard", () => {
    expect(splitText("aaaa bbbb\ncccc dddd", 12)).toEqual(["aaaa bbbb", "cccc dddd"]);
    expect(splitText("aaaa bbbb cccc", 10)).toEqual(["aaaa bbbb", "cccc"]);
    expect(splitText("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
  });

  it("never splits a surrogate pair", () => {
    const chunks = splitText("😀😀😀", 3);
    expect(chunks).toEqual(["😀", "😀", "😀"]);
  });

  it("moves a break in front of a code fence rather than into it", () => {
    const text = `intro line\n\`\`\`js\nconst a = 1;\nconst b = 2;\n\`\`\`\nafter`;
    const chunks = splitText(text, 45);
    expect(chunks[0]).toBe("intro line");
    expect(chunks[1]).toBe("```js\nconst a = 1;\nconst b = 2;\n```\nafter");
  });

  it("closes a fence longer than the limit at the cut and reopens it with its info string", () => {
    const body = Array.from({ length: 12 }, (_unused, i) => `line ${i}`).join("\n");
    const text = `\`\`\`python\n${body}\n\`\`\``;
    const chunks = splitText(text, 40);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(40);
      expect(chunk.startsWith("```python\n")).toBe(true);
      expect(chunk.endsWith("\n```")).toBe(true);
      expect(scanFenceSpans(chunk).state.open).toBeUndefined();
    }
    expect(
      chunks
        .map((c) => c.slice("```python\n".length, -"\n```".length))
        .join("\n")
        .split("\n"),
    ).toEqual(body.split("\n"));
  });

  it('chunkMode "newline" prefers paragraph breaks over single newlines', () => {
    const text = "para one\nstill one\n\npara two\nstill two";
    expect(splitText(text, 30, "length")).toEqual(["para one\nstill one\n\npara two", "still two"]);
    expect(splitText(text, 30, "newline")).toEqual(["para one\nstill one", "para two\nstill two"]);
  });

  it("rejects a bad limit", () => {
    expect(() => splitText("x", 0)).toThrow(/positive integer/);
    expect(() => splitText("x", 1.5)).toThrow(/positive integer/);
  });
});

// ---------------------------------------------------------------------------
// Properties.

const piece = fc.oneof(
  fc.constantFrom(
    "\n",
    "\n\n",
    " ",
    "  ",
    "```",
    "```ts",
    "~~~",
    "`",
    "**",
    "_",
    "word",
    "😀",
    "\t",
    "x".repeat(30),
  ),
  fc.string({ maxLength: 12 }),
);
const markdownLike = fc.array(piece, { maxLength: 60 }).map((parts) => parts.join(""));
const fenced = fc
  .tuple(
    fc.array(fc.string({ maxLength: 40 }), { maxLength: 30 }),
    fc.constantFrom("```", "~~~", "````"),
    fc.string({ maxLength: 6 }),
  )
  .map(([lines, marker, info]) => {
    const safe = lines.map((l) => l.replace(/[`~\n\r\u2028\u2029]/g, "."));
    return `before\n${marker}${info.replace(/[`~\s]/g, "")}\n${safe.join("\n")}\n${marker}\nafter`;
  });

function checkChunks(text: string, limit: number, mode: "length" | "newline"): void {
  const chunks = splitTextChunks(text, limit, mode);
  let cursor = 0;
  chunks.forEach((chunk, index) => {
    expect(chunk.text.length, `chunk ${index} exceeds ${limit}`).toBeLessThanOrEqual(limit);
    expect(chunk.text).toBe(chunk.prefix + text.slice(chunk.start, chunk.end) + chunk.suffix);
    // only whitespace is dropped between chunks
    expect(text.slice(cursor, chunk.start).trim()).toBe("");
    expect(chunk.end).toBeGreaterThan(chunk.start);
    cursor = chunk.end;
    const open = scanFenceSpans(chunk.text).state.open;
    if (index < chunks.length - 1 || scanFenceSpans(text).state.open === undefined) {
      expect(open, `chunk ${index} leaves a fence open: ${JSON.stringify(chunk.text)}`).toBeUndefined();
    }
  });
  expect(text.slice(cursor).trim()).toBe("");
  // minus the synthetic fence lines, the chunks are the original text
  expect(
    chunks
      .map((c) => text.slice(c.start, c.end))
      .join("")
      .replace(/\s/g, ""),
  ).toBe(text.replace(/\s/g, ""));
}

describe("splitText properties", () => {
  it("chunks fit the limit, cover the text (only whitespace dropped) and keep fences balanced", () => {
    fc.assert(
      fc.property(
        fc.oneof(markdownLike, fenced),
        fc.integer({ min: 16, max: 120 }),
        fc.constantFrom("length", "newline"),
        (text, limit, mode) => checkChunks(text, limit, mode),
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 600) },
    );
  });

  it("text under the limit is one chunk, unchanged", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 50 }), (text) => {
        expect(splitText(text, 50)).toEqual([text]);
      }),
    );
  });
});
