// The bounded read tool against pi's own read tool: the same text or error for the same file and parameters —
// worked examples, then random files, offsets and limits around both of pi's caps (fast-check).
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Outcome, ourOutcome, piOutcome, type ReadParams } from "./read-tool.test-helpers.ts";

let base: string;
let ws: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "read-tool-")));
  ws = join(base, "ws");
  mkdirSync(ws);
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

describe("createBoundedReadTool: the same output as pi's read", () => {
  /** Writes `content` and reads it with pi's read tool and with ours (an undefined parameter left out). */
  const both = async (
    content: string,
    params: { offset?: number | undefined; limit?: number | undefined },
  ) => {
    writeFileSync(join(ws, "file.txt"), content);
    const request: ReadParams = {
      path: "file.txt",
      ...(params.offset === undefined ? {} : { offset: params.offset }),
      ...(params.limit === undefined ? {} : { limit: params.limit }),
    };
    return { ours: await ourOutcome(ws, request), pis: await piOutcome(ws, request) };
  };

  const examples: readonly (readonly [string, string, Omit<ReadParams, "path">, Outcome])[] = [
    ["a final newline is kept", "- ship it\n", {}, { text: "- ship it\n" }],
    ["an empty file is one empty line", "", {}, { text: "" }],
    [
      "an offset past an empty file",
      "",
      { offset: 2 },
      { error: "Offset 2 is beyond end of file (1 lines total)" },
    ],
    ["a file of one newline", "\n", {}, { text: "\n" }],
    ["the empty line after a final newline", "a\nb\n", { offset: 3 }, { text: "" }],
    [
      "a limit stopping before that line",
      "a\nb\n",
      { limit: 2 },
      { text: "a\nb\n\n[1 more lines in file. Use offset=3 to continue.]" },
    ],
    ["a limit taking it", "a\nb\n", { limit: 3 }, { text: "a\nb\n" }],
    ["CRLF and a final newline", "a\r\nb\r\n", { offset: 2 }, { text: "b\r\n" }],
    ["no final newline", "a\nb", { offset: 2 }, { text: "b" }],
    [
      "a limit of 0",
      "a\nb\n",
      { limit: 0 },
      { text: "\n\n[3 more lines in file. Use offset=1 to continue.]" },
    ],
    [
      "a fractional offset, with pi's arithmetic",
      "a\nb\nc\nd\n",
      { offset: 2.5, limit: 1 },
      { text: "b\n\n[2.5 more lines in file. Use offset=3.5 to continue.]" },
    ],
  ];
  it.each(examples)("%s", async (_name, content, params, expected) => {
    const { ours, pis } = await both(content, params);
    expect(pis).toEqual(expected);
    expect(ours).toEqual(expected);
  });

  const piece = fc.constantFrom(
    "",
    "a",
    "word",
    " ",
    "  x",
    "\t",
    "\r",
    "é",
    "€",
    "日本",
    "😀",
    "\u00a0",
    "\ufeff",
    "\u2028",
  );
  const line = fc.oneof(
    { weight: 3, arbitrary: fc.array(piece, { maxLength: 4 }).map((parts) => parts.join("")) },
    // Any characters but NUL (which makes a file binary) and "\n".
    {
      weight: 1,
      arbitrary: fc.string({ unit: "binary", maxLength: 8 }).map((text) => text.replace(/[\0\n]/g, "")),
    },
  );
  const offsetOrLimit = (min: number) =>
    fc.option(
      fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min, max: 16 }) },
        { weight: 1, arbitrary: fc.double({ min, max: 16, noNaN: true }) },
      ),
      { nil: undefined },
    );

  it("gives pi's text or error for random small files, offsets and limits", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 12 }),
        fc.constantFrom("\n", "\r\n"),
        fc.boolean(),
        offsetOrLimit(-2),
        offsetOrLimit(0),
        async (lines, eol, finalNewline, offset, limit) => {
          const content = lines.join(eol) + (finalNewline && lines.length > 0 ? eol : "");
          const { ours, pis } = await both(content, { offset, limit });
          expect(ours).toEqual(pis);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("gives pi's text around the 2000-line cap", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1995, max: 2005 }),
        fc.array(fc.constantFrom("", "a", "bb", "c\r"), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.option(fc.constantFrom(0, 1, 2, 3, 7, 1995, 1999, 2000, 2001, 2002, 2006, 2007), {
          nil: undefined,
        }),
        fc.option(fc.constantFrom(0, 1, 7, 1995, 1999, 2000, 2001, 2002, 2003, 5000), { nil: undefined }),
        async (count, pattern, finalNewline, offset, limit) => {
          const lines = Array.from({ length: count }, (_, index) => pattern[index % pattern.length] ?? "");
          const { ours, pis } = await both(lines.join("\n") + (finalNewline ? "\n" : ""), { offset, limit });
          expect(ours).toEqual(pis);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("gives pi's text where both caps meet: 2000 lines of about 50KB", async () => {
    for (const delta of [-1, 0, 1]) {
      // 2000 lines of 24 or 25 bytes, 50KB + delta with their newlines between them.
      const lines = Array.from({ length: 2000 }, (_, index) => "a".repeat(index < 1201 + delta ? 25 : 24));
      expect(Buffer.byteLength(lines.join("\n"))).toBe(50 * 1024 + delta);
      for (const after of [[], [""], ["z"], ["", "z"]]) {
        for (const params of [{}, { limit: 2000 }, { limit: 2001 }, { offset: 1, limit: 2002 }]) {
          const { ours, pis } = await both([...lines, ...after].join("\n"), params);
          expect(ours).toEqual(pis);
        }
      }
    }
  });

  it("gives pi's text around the 50KB cap, an empty last line of the selection included", async () => {
    const maxBytes = 50 * 1024;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("", "p", "q\r"), { maxLength: 3 }),
        fc.array(fc.tuple(fc.nat({ max: 1800 }), fc.constantFrom("x", "é", "€")), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.integer({ min: -3, max: 3 }),
        fc.boolean(),
        fc.array(fc.constantFrom("", "s"), { maxLength: 2 }),
        fc.boolean(),
        fc.integer({ min: -1, max: 1 }),
        fc.option(fc.integer({ min: -1, max: 1 }), { nil: undefined }),
        async (prefix, widths, delta, emptyLast, suffix, finalNewline, offsetShift, limitShift) => {
          // A selection of maxBytes + delta bytes: some lines, one that makes up the size, maybe an empty one.
          const lines = widths.map(([width, char]) => char.repeat(width));
          const taken = Buffer.byteLength(lines.join("\n")) + 1 + (emptyLast ? 1 : 0);
          const body = [...lines, "x".repeat(maxBytes + delta - taken), ...(emptyLast ? [""] : [])];
          expect(Buffer.byteLength(body.join("\n"))).toBe(maxBytes + delta);
          const content = [...prefix, ...body, ...suffix].join("\n") + (finalNewline ? "\n" : "");
          const offset = prefix.length + 1 + offsetShift;
          // A first line over the limit is the one deliberate difference (shown cut; pi shows none of it).
          const firstShown = content.split("\n")[Math.max(0, offset - 1)] ?? "";
          fc.pre(Buffer.byteLength(firstShown) <= maxBytes);
          const limit = limitShift === undefined ? undefined : body.length + limitShift;
          const { ours, pis } = await both(content, { offset, limit });
          expect(ours).toEqual(pis);
        },
      ),
      { numRuns: 200 },
    );
  });
});
