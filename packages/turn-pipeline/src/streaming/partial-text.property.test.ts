// Partial text shown before a line ends (the preview) never shows what the line's end could still hide or
// change: the directive accumulator's decided length is a prefix of what it returns for the whole chunk, and
// ReplyStream's partial events only ever extend the text, whatever the delta splits and batch ends; the text at
// the end and the blocks are those of the whole text given at once.
import type { AssistantMessage, AssistantMessageEvent } from "@earendil-works/pi-ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StreamingDirectiveAccumulator } from "./reply-directives.ts";
import { ReplyStream } from "./reply-stream.ts";
import { HEARTBEAT_TOKEN, SILENT_REPLY_TOKEN } from "./silent-tokens.ts";

// pieces that the directive pass, the silent-token tests, the MEDIA: rule, the whitespace normalisation and
// the tag stripper treat specially, with their prefixes, and plain words
const piece = fc.constantFrom(
  "NO_REPLY",
  "NO_",
  "NO",
  "no_reply",
  "No",
  "Now",
  "N",
  "HEARTBEAT_OK",
  "HEART",
  "He",
  "MEDIA:",
  "MEDIA: https://example.com/a.png",
  " media: ./b.png",
  "M",
  "Me",
  "Med",
  "[[reply_to_current]]",
  "[[reply_to: 7]]",
  "[[audio_as_voice]]",
  "[[x",
  "[",
  "]]",
  "  ",
  " ",
  "\t",
  " \t ",
  "\u00a0",
  "\r",
  "-",
  "**",
  "- ",
  "`a  b`",
  "```",
  "<think>",
  "</think>",
  "<final>",
  "x<y",
  "hello",
  "world.",
  "a",
  "😀",
  "naïve",
);
const separator = fc.constantFrom("", " ", "  ", "\n", "\n\n", " \n");
const text = fc
  .array(fc.tuple(piece, separator), { minLength: 1, maxLength: 24 })
  .map((pairs) => pairs.map(([p, s]) => p + s).join(""));
/** Lines over PARTIAL_SPAN (256) characters: the line is cut there, mid-line, without a newline. */
const longLineText = fc
  .tuple(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.integer({ min: 40, max: 90 }), text)
  .map(
    ([pieces, times, tail]) =>
      `${Array.from({ length: times }, (_, i) => pieces[i % pieces.length]).join(" ")}${tail}`,
  );
const token = fc.constantFrom(SILENT_REPLY_TOKEN, HEARTBEAT_TOKEN);

describe("StreamingDirectiveAccumulator.decidedLength", () => {
  it("is a prefix of what the accumulator returns for the chunk, whatever follows in it, final or not", () => {
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 3 }),
        fc.oneof(
          fc.array(piece, { maxLength: 6 }).map((pieces) => pieces.join("")),
          text, // with newlines, which ReplyStream never holds: the answer must still hold
        ),
        text,
        fc.boolean(),
        token,
        fc.nat(),
        (earlier, held, rest, final, silentToken, cut) => {
          const probe = new StreamingDirectiveAccumulator();
          const actual = new StreamingDirectiveAccumulator();
          for (const chunk of earlier) {
            probe.consumeText(chunk, { silentToken });
            actual.consumeText(chunk, { silentToken });
          }
          const decided = probe.decidedLength(held, silentToken);
          expect(decided).toBeLessThanOrEqual(held.length);
          // told what it decided for a shorter start of the chunk, it looks only at the rest, with the same answer
          const known = probe.decidedLength(held.slice(0, cut % (held.length + 1)), silentToken);
          if (known > 0) expect(probe.decidedLength(held, silentToken, known)).toBe(decided);
          if (decided === 0) return;
          const returned = actual.consumeText(held + rest, { final, silentToken });
          expect(returned?.startsWith(held.slice(0, decided))).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("shows the start of an ordinary line and holds back what may still change", () => {
    const accumulator = new StreamingDirectiveAccumulator();
    const decided = (raw: string) => raw.slice(0, accumulator.decidedLength(raw));
    expect(decided("Hello wor")).toBe("Hello wor");
    expect(decided("Hello world ")).toBe("Hello world");
    expect(decided("Hello [[reply_to_cur")).toBe("Hello");
    expect(decided("Hello  world")).toBe("Hello");
    // may still be (or start with) the silent token, or become a MEDIA: line
    expect(decided("NO_RE")).toBe("");
    expect(decided("NO_REPLY")).toBe("");
    expect(decided("Now then")).toBe("Now then");
    expect(decided("- ")).toBe("");
    expect(decided("- NO")).toBe("");
    expect(decided("- Now")).toBe("- Now");
    expect(decided("MEDI")).toBe("");
    expect(decided("MEDIA: https://exa")).toBe("");
    expect(decided("Medicine")).toBe("Medicine");
    // leading whitespace the normalisation could strip, before any text was returned
    expect(decided("  indented")).toBe("");
  });
});

type PartialEvent = { text: string; delta: string };

function run(
  parts: readonly string[],
  options: { inputBatchChars: number; silentToken: string; blocks: boolean },
): { partials: PartialEvent[]; blocks: string[]; payloads: unknown } {
  const stream = new ReplyStream({
    inputBatchChars: options.inputBatchChars,
    silentToken: options.silentToken,
    currentMessageId: "m1",
    ...(options.blocks
      ? { blockStreaming: { chunking: { minChars: 10, maxChars: 60 }, breakMode: "text_end" as const } }
      : {}),
  });
  const partials: PartialEvent[] = [];
  const blocks: string[] = [];
  stream.subscribe((event) => {
    if (event.type === "partial") partials.push({ text: event.text, delta: event.delta });
    else if (event.type === "block") blocks.push(event.sourceText);
  });
  const message = {} as AssistantMessage;
  stream.handle({ type: "start", partial: message });
  for (const delta of parts)
    stream.handle({
      type: "text_delta",
      contentIndex: 0,
      delta,
      partial: message,
    } satisfies AssistantMessageEvent);
  stream.handle({ type: "text_end", contentIndex: 0, content: parts.join(""), partial: message });
  stream.handle({ type: "done", reason: "stop", message });
  return { partials, blocks, payloads: stream.finish() };
}

function splitAt(input: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let last = 0;
  for (const p of points) {
    parts.push(input.slice(last, p));
    last = p;
  }
  parts.push(input.slice(last));
  return parts;
}

describe("ReplyStream partial text with previews", () => {
  it("every partial event extends the text before it by its delta, and the text at the end is the whole text's", () => {
    fc.assert(
      fc.property(
        fc.oneof(text, longLineText),
        fc.array(fc.nat(), { maxLength: 40 }),
        // batch ends (where previews are published) at many places of the text
        fc.integer({ min: 1, max: 40 }),
        token,
        fc.boolean(),
        (input, cuts, inputBatchChars, silentToken, blocks) => {
          const whole = run([input], { inputBatchChars: 4096, silentToken, blocks });
          const split = run(splitAt(input, cuts), { inputBatchChars, silentToken, blocks });
          let shown = "";
          for (const event of split.partials) {
            expect(event.delta).not.toBe("");
            expect(event.text).toBe(shown + event.delta);
            shown = event.text;
          }
          expect(shown).toBe(whole.partials.at(-1)?.text ?? "");
          expect(split.blocks).toEqual(whole.blocks);
          expect(split.payloads).toEqual(whole.payloads);
        },
      ),
      { numRuns: 1500 },
    );
  });
});
