import { BlockChunker, scanFenceSpans } from "@agent-kernel/markdown";
import type { AssistantMessage, AssistantMessageEvent } from "@earendil-works/pi-ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReasoningStreamStripper } from "./reasoning-stream.ts";
import { ReplyStream } from "./reply-stream.ts";

const word = fc.constantFrom(
  "alpha",
  "beta",
  "1.5",
  "end.",
  "ok!",
  "why?",
  "😀",
  "naïve",
  "x",
  "<b>",
  "a<c",
  "[[x]]",
);
const line = fc.array(word, { minLength: 1, maxLength: 10 }).map((ws) => ws.join(" "));
const paragraph = fc.array(line, { minLength: 1, maxLength: 4 }).map((ls) => ls.join("\n"));
const fenced = fc
  .tuple(
    fc.constantFrom("```", "~~~", "````"),
    fc.constantFrom("", "ts", "python"),
    fc.array(line, { minLength: 1, maxLength: 12 }),
  )
  .map(([marker, info, body]) => `${marker}${info}\n${body.join("\n")}\n${marker}`);
const tagged = fc
  .tuple(fc.constantFrom("think", "thinking", "reasoning", "final"), paragraph)
  .map(([name, body]) => `<${name}>${body}</${name}>`);
const directive = fc.constantFrom(
  "[[reply_to_current]] ",
  "[[reply_to: 42]] ",
  "[[audio_as_voice]] ",
  "MEDIA: https://example.com/a.png\n",
);
const markdown = fc
  .array(
    fc.oneof(
      { weight: 5, arbitrary: paragraph },
      { weight: 2, arbitrary: fenced },
      { weight: 1, arbitrary: tagged },
      { weight: 1, arbitrary: directive },
    ),
    {
      minLength: 1,
      maxLength: 12,
    },
  )
  .map((blocks) => blocks.join("\n\n"));
const tagSoup = fc
  .array(
    fc.constantFrom(
      "<think>",
      "</think>",
      "<final>",
      "</final>",
      "<thinking a='>'>",
      "`",
      "```\n",
      "\n",
      "text ",
      "<",
      "< /think>",
      "<internal>",
      "</internal>",
      "x<y ",
    ),
    {
      maxLength: 30,
    },
  )
  .map((xs) => xs.join(""));

/** Splits text at random cut points (sorted, deduplicated). */
function splitAt(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let last = 0;
  for (const p of points) {
    parts.push(text.slice(last, p));
    last = p;
  }
  parts.push(text.slice(last));
  return parts;
}

function strip(parts: string[], enforceFinalTag: boolean): { visible: string; reasoning: string } {
  const stripper = new ReasoningStreamStripper({ enforceFinalTag });
  let visible = "";
  let reasoning = "";
  for (const part of [...parts, null]) {
    const out = part === null ? stripper.finish() : stripper.push(part);
    visible += out.visible;
    reasoning += out.reasoning;
  }
  return { visible, reasoning };
}

describe("split invariance", () => {
  it("the streaming tag stripper's output does not depend on delta boundaries", () => {
    fc.assert(
      fc.property(
        fc.oneof(tagSoup, markdown),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.boolean(),
        (text, cuts, enforce) => {
          expect(strip(splitAt(text, cuts), enforce)).toEqual(strip([text], enforce));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("ReplyStream: final payloads, blocks and partial text do not depend on delta boundaries", () => {
    fc.assert(
      fc.property(
        markdown,
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 20, max: 300 }),
        fc.constantFrom("paragraph" as const, "newline" as const, "sentence" as const),
        fc.integer({ min: 1, max: 64 }),
        (text, cuts, minChars, extra, breakPreference, inputBatchChars) => {
          const chunking = { minChars, maxChars: minChars + extra, breakPreference };
          const one = runReplyStream([text], chunking);
          // small input batches: the collected deltas are processed at many places of the text
          const many = runReplyStream(splitAt(text, cuts), chunking, { inputBatchChars });
          expect(many.payloads).toEqual(one.payloads);
          // the chunker is drained at content positions (line ends), never at delta boundaries
          expect(many.blocks).toEqual(one.blocks);
          expect(many.blockPayloads).toEqual(one.blockPayloads);
          // previews publish partial text at other points (batch ends), but each event only extends the text,
          // and the text at the end is the same
          expect(many.partialText).toBe(one.partialText);
          expect(many.partialDeltas).toBe(many.partialText);
          expect(one.partialDeltas).toBe(one.partialText);
          expect(many.partialsExtend).toBe(true);
          // directives are consumed (a directive-only block carries its target to the next block)
          const withoutDirectives = (blocks: string[]): string =>
            squash(blocks.join("").replace(/\[\[[^\]]*\]\]/g, ""));
          expect(withoutDirectives(many.blocks)).toBe(withoutDirectives(one.blocks));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("ReplyStream without partials gives the same blocks and final payloads, and no partial event", () => {
    fc.assert(
      fc.property(
        markdown,
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 20, max: 300 }),
        fc.integer({ min: 1, max: 64 }),
        (text, cuts, minChars, extra, inputBatchChars) => {
          const chunking = { minChars, maxChars: minChars + extra, breakPreference: "paragraph" as const };
          const withPartials = runReplyStream(splitAt(text, cuts), chunking, { inputBatchChars });
          const without = runReplyStream(splitAt(text, cuts), chunking, { inputBatchChars, partials: false });
          expect(without.payloads).toEqual(withPartials.payloads);
          expect(without.blocks).toEqual(withPartials.blocks);
          expect(without.blockPayloads).toEqual(withPartials.blockPayloads);
          expect(without.partialEvents).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("drain positions", () => {
  // text without tags (visible text = raw text), with lines longer than PARTIAL_SPAN (256) characters
  const longLine = fc
    .tuple(fc.array(word, { minLength: 1, maxLength: 8 }), fc.integer({ min: 20, max: 120 }))
    .map(([ws, times]) => Array.from({ length: times }, (_, i) => ws[i % ws.length]).join(" "));
  const untagged = fc
    .tuple(
      fc.array(fc.oneof({ weight: 4, arbitrary: paragraph }, { weight: 2, arbitrary: fenced }, longLine), {
        minLength: 1,
        maxLength: 14,
      }),
      fc.constantFrom("\n\n", "\n", "\n\n\n"),
    )
    .map(([blocks, separator]) => blocks.join(separator))
    .filter((text) => !text.includes("<"));

  /**
   * The documented rule: the chunker is drained after each line and every 256 characters of a line (the
   * last piece, when it ends neither, only by the forced drain at the end).
   */
  function linePieces(text: string): string[] {
    const pieces: string[] = [];
    let start = 0;
    for (let at = 0; at < text.length; at++) {
      if (text.charCodeAt(at) === 10 || at + 1 - start === 256) {
        pieces.push(text.slice(start, at + 1));
        start = at + 1;
      }
    }
    if (start < text.length) pieces.push(text.slice(start));
    return pieces;
  }

  it("ReplyStream drains as a chunker fed line-sized pieces does, with and without partials", () => {
    fc.assert(
      fc.property(
        untagged,
        fc.array(fc.nat(), { maxLength: 60 }),
        // small blocks make a drain one character off find another break
        fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 400 })),
        fc.oneof(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 300 })),
        fc.constantFrom("paragraph" as const, "newline" as const, "sentence" as const),
        fc.boolean(),
        (text, cuts, minChars, extra, breakPreference, partials) => {
          const chunking = { minChars, maxChars: minChars + extra, breakPreference };
          const reference = new BlockChunker(chunking);
          const expected: string[] = [];
          for (const piece of linePieces(text)) {
            reference.append(piece);
            if (piece.endsWith("\n") || piece.length === 256)
              reference.drain(false, (block) => expected.push(block.sourceText));
          }
          reference.drain(true, (block) => expected.push(block.sourceText));
          const streamed = runReplyStream(splitAt(text, cuts), chunking, { partials, inputBatchChars: 97 });
          expect(streamed.blocks).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("block invariants", () => {
  it("blocks cover the text, stay within maxChars and keep fences balanced", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(paragraph, fenced), { minLength: 1, maxLength: 10 }).map((b) => b.join("\n\n")),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 24, max: 300 }),
        (text, cuts, minChars, extra) => {
          const maxChars = minChars + extra;
          const chunker = new BlockChunker({ minChars, maxChars });
          const blocks: { text: string; sourceText: string }[] = [];
          for (const part of splitAt(text, cuts)) {
            chunker.append(part);
            chunker.drain(false, (b) => blocks.push(b));
          }
          chunker.drain(true, (b) => blocks.push(b));
          expect(squash(blocks.map((b) => b.sourceText).join(""))).toBe(squash(text));
          for (const block of blocks) {
            expect(block.text.length).toBeLessThanOrEqual(maxChars);
            expect(scanFenceSpans(block.text).state.open).toBeUndefined();
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

function squash(text: string): string {
  return text.replace(/\s+/g, "");
}

function runReplyStream(
  parts: string[],
  chunking: { minChars: number; maxChars: number; breakPreference: "paragraph" | "newline" | "sentence" },
  options: { inputBatchChars?: number; partials?: boolean } = {},
): {
  payloads: unknown;
  blocks: string[];
  blockPayloads: unknown[];
  partialText: string;
  /** The partial events' deltas, concatenated. */
  partialDeltas: string;
  /** Every partial event's text was the one before it plus its delta. */
  partialsExtend: boolean;
  partialEvents: number;
} {
  const stream = new ReplyStream({
    blockStreaming: { chunking, breakMode: "text_end" },
    currentMessageId: "m1",
    ...options,
  });
  const blocks: string[] = [];
  const blockPayloads: unknown[] = [];
  let partialText = "";
  let partialDeltas = "";
  let partialsExtend = true;
  let partialEvents = 0;
  stream.subscribe((event) => {
    if (event.type === "block") {
      blocks.push(event.sourceText);
      blockPayloads.push(event.payload);
    } else if (event.type === "partial") {
      if (event.text !== partialText + event.delta) partialsExtend = false;
      partialText = event.text;
      partialDeltas += event.delta;
      partialEvents++;
    }
  });
  const partial = {} as AssistantMessage;
  stream.handle({ type: "start", partial });
  for (const delta of parts)
    stream.handle({ type: "text_delta", contentIndex: 0, delta, partial } satisfies AssistantMessageEvent);
  stream.handle({ type: "text_end", contentIndex: 0, content: parts.join(""), partial });
  stream.handle({ type: "done", reason: "stop", message: partial });
  return {
    payloads: stream.finish(),
    blocks,
    blockPayloads,
    partialText,
    partialDeltas,
    partialsExtend,
    partialEvents,
  };
}
