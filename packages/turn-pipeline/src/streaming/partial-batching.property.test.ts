// Partial text published once per processed call (partial-text.ts) against the PartialText before it, which
// published once per line (previous-partial-text.test-helpers.ts), fed the same visible text at the same
// content positions: after every processed call both have published exactly the same text, so a consumer sees
// the same text, in order, and no later (the new one publishes a call's lines before the call's blocks); every
// event extends the text before it by its delta, and the text at the end is the same.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PARTIAL_SPAN, PartialText } from "./partial-text.ts";
import { PreviousPartialText } from "./previous-partial-text.test-helpers.ts";
import { ReasoningStreamStripper } from "./reasoning-stream.ts";
import { HEARTBEAT_TOKEN, SILENT_REPLY_TOKEN } from "./silent-tokens.ts";

// what the directive pass, the silent-token tests, the MEDIA: rule, the whitespace normalisation and the tag
// stripper treat specially, with prefixes, and plain words
const piece = fc.constantFrom(
  "NO_REPLY",
  "NO_",
  "no_reply",
  "Now",
  "N",
  "HEARTBEAT_OK",
  "HEART",
  "MEDIA:",
  "MEDIA: https://example.com/a.png",
  " media: ./b.png",
  "M",
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
  "\u00a0",
  "\r",
  "-",
  "- ",
  "**",
  "```",
  "<think>",
  "</think>",
  "<final>",
  "x<y",
  "hello",
  "world.",
  "the stream keeps going",
  "😀",
  "naïve",
);
const separator = fc.constantFrom("", " ", "\n", "\n", "\n\n", " \n", "\n  \n");
const shortText = fc
  .array(fc.tuple(piece, separator), { minLength: 1, maxLength: 30 })
  .map((pairs) => pairs.map(([p, s]) => p + s).join(""));
/** Lines over PARTIAL_SPAN characters: cut there, mid-line, without a newline. */
const longLines = fc
  .tuple(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.integer({ min: 40, max: 120 }), shortText)
  .map(
    ([pieces, times, tail]) =>
      `${Array.from({ length: times }, (_, i) => pieces[i % pieces.length]).join(" ")}\n${tail}`,
  );
const text = fc.oneof(
  shortText,
  longLines,
  fc.array(shortText, { maxLength: 6 }).map((t) => t.join("\n\n")),
);

type Published = { text: string; deltas: string; extends: boolean; events: number };

function recorder(): { published: Published; publish: (text: string, delta: string) => void } {
  const published: Published = { text: "", deltas: "", extends: true, events: 0 };
  return {
    published,
    publish: (text, delta) => {
      if (text !== published.text + delta) published.extends = false;
      published.text = text;
      published.deltas += delta;
      published.events++;
    },
  };
}

/** The previous ReplyStream's content positions for the previous PartialText (each line end, every PARTIAL_SPAN). */
class PreviousFeeder {
  #span = 0;
  readonly partial: PreviousPartialText;

  constructor(partial: PreviousPartialText) {
    this.partial = partial;
  }

  feed(visible: string, final: boolean): void {
    const length = visible.length;
    let at = 0;
    let from = 0;
    while (at < length) {
      const newline = visible.indexOf("\n", at);
      const end = Math.min(newline === -1 ? length : newline + 1, at + (PARTIAL_SPAN - this.#span));
      const span = this.#span + (end - at);
      at = end;
      if (span >= PARTIAL_SPAN || visible.charCodeAt(end - 1) === 10) {
        this.#span = 0;
        this.partial.commit(visible.slice(from, end), visible, from);
        from = end;
      } else this.#span = span;
    }
    if (from < length) this.partial.hold(visible.slice(from));
    if (final) {
      this.#span = 0;
      this.partial.finish();
    }
  }
}

describe("partial text once per processed call", () => {
  it("publishes after every call exactly the text the per-line partial text had published", () => {
    fc.assert(
      fc.property(
        text,
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.constantFrom(SILENT_REPLY_TOKEN, HEARTBEAT_TOKEN),
        fc.boolean(),
        (input, cuts, silentToken, enforceFinalTag) => {
          const points = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
          const calls: string[] = [];
          let last = 0;
          for (const point of points) {
            calls.push(input.slice(last, point));
            last = point;
          }
          calls.push(input.slice(last));
          const stripper = new ReasoningStreamStripper({ enforceFinalTag });
          const next = recorder();
          const previous = recorder();
          const partial = new PartialText(silentToken, next.publish);
          const feeder = new PreviousFeeder(new PreviousPartialText(silentToken, previous.publish));
          for (const call of calls) {
            if (call === "") continue;
            const visible = stripper.push(call).visible;
            partial.feed(visible, false, true);
            feeder.feed(visible, false);
            feeder.partial.preview();
            expect(next.published.text).toBe(previous.published.text);
            // one event for the call's lines and the preview
            expect(next.published.events).toBeLessThanOrEqual(previous.published.events);
          }
          const rest = stripper.finish().visible;
          partial.feed(rest, true);
          feeder.feed(rest, true);
          expect(next.published.text).toBe(previous.published.text);
          expect(next.published.deltas).toBe(next.published.text);
          expect(next.published.extends).toBe(true);
        },
      ),
      { numRuns: 4000 },
    );
  });
});
