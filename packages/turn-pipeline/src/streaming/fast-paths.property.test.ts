// The throughput fast paths give the same answers as the plain forms they replace: whitespace normalisation
// without a regex attempt at every character, and MEDIA: extraction that only looks at candidate lines.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { normalizeDirectiveWhitespace } from "./directive-tags.ts";
import { findCodeRegions } from "./markdown-code.ts";
import { containsMediaColon, hasNonWhitespace, splitMediaFromOutput } from "./media-output.ts";
import { StreamingDirectiveAccumulator } from "./reply-directives.ts";
import {
  blankRulesOutToken,
  HEARTBEAT_TOKEN,
  isSilentReplyPrefixText,
  isSilentReplyText,
  lineRulesOutToken,
  SILENT_REPLY_TOKEN,
  startsWithSilentToken,
} from "./silent-tokens.ts";

const piece = fc.constantFrom(
  "a",
  "word",
  "x  y  z",
  "a\t\tb",
  " ",
  "  ",
  "\t",
  " \t ",
  "\n",
  "\n\n\n",
  " \n",
  "\r\n",
  "\u00a0",
  "```",
  "\n```ts\n",
  "`x`",
  "    code",
  "MEDIA: https://example.com/a.png",
  " media: ./b.png",
  "MEDıA: c",
  "note: d",
  "[[audio_as_voice]]",
  "[[reply_to_current]]",
  "[[reply_to: 7]]",
  "[[x",
  "AUDIO_AS_VOICE",
);
const text = fc.array(piece, { maxLength: 30 }).map((pieces) => pieces.join(""));

/** normalizeDirectiveWhitespace as a chain of global regex passes over the masked text (OpenClaw's form). */
function referenceNormalize(input: string, tailMode: "trim" | "preserve" | "normalize"): string {
  let sentinel = "\u0000";
  while (input.includes(sentinel)) sentinel += "\u0000";
  const blocks: string[] = [];
  let masked = "";
  let cursor = 0;
  for (const span of findCodeRegions(input)) {
    blocks.push(input.slice(span.start, span.end));
    masked += `${input.slice(cursor, span.start)}${sentinel}${blocks.length - 1}${sentinel}`;
    cursor = span.end;
  }
  masked += input.slice(cursor);
  const suffixStart = tailMode === "preserve" ? masked.trimEnd().length : masked.length;
  const normalized = masked
    .slice(0, suffixStart)
    .replace(/\r\n/g, "\n")
    .replace(/([^\s])[ \t]{2,}([^\s])/g, "$1 $2")
    .replace(/^\n+/, "")
    .replace(/^[ \t](?=\S)/, "")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n");
  return (tailMode === "trim" ? normalized.trimEnd() : normalized + masked.slice(suffixStart)).replace(
    new RegExp(`${sentinel}(\\d+)${sentinel}`, "g"),
    (_whole, index: string) => blocks[Number(index)] ?? "",
  );
}

describe("fast paths", () => {
  it("normalizeDirectiveWhitespace equals the regex chain", () => {
    fc.assert(
      fc.property(
        text,
        fc.constantFrom("trim" as const, "preserve" as const, "normalize" as const),
        (t, mode) => {
          expect(normalizeDirectiveWhitespace(t, mode)).toBe(referenceNormalize(t, mode));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("splitMediaFromOutput without segments equals the line-by-line result", () => {
    fc.assert(
      fc.property(text, fc.boolean(), (t, preserveTrailingWhitespace) => {
        const { segments: _segments, ...lineByLine } = splitMediaFromOutput(t, {
          preserveTrailingWhitespace,
        });
        expect(splitMediaFromOutput(t, { preserveTrailingWhitespace, segments: false })).toEqual(lineByLine);
      }),
      { numRuns: 1500 },
    );
  });

  it("the MEDIA: and whitespace scans equal the regex and trim forms", () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(containsMediaColon(t)).toBe(/media:/i.test(t));
        expect(hasNonWhitespace(t)).toBe(t.trim() !== "");
      }),
      { numRuns: 1500 },
    );
  });

  it("lineRulesOutToken and blankRulesOutToken are true only when none of the three token tests holds", () => {
    const tokenish = fc.constantFrom(
      "NO_REPLY",
      "no_reply",
      "NO",
      "No_",
      "NO_REPLYx",
      "NO REPLY",
      "N0_REPLY",
      "naïve",
      "nope",
      "NıO",
      "ſ",
      "NI_X",
      "nI_x",
      "Nſ_OK",
      "ns_ok",
      "HEARTBEAT_OK",
      "heartbeat",
      "HEARTBEAT_OKAY",
      "hEaRtBeAt_oK",
      "...",
      "- ",
      "```",
      "K",
    );
    const line = fc
      .array(fc.oneof(piece, tokenish, fc.string({ maxLength: 4 })), { maxLength: 6 })
      .map((pieces) => pieces.join(""));
    fc.assert(
      fc.property(
        line,
        fc.constantFrom(SILENT_REPLY_TOKEN, HEARTBEAT_TOKEN, "Nı_X", "Ns_OK", "ok"),
        (t, token) => {
          const blank = blankRulesOutToken(t, token);
          expect(blank).toBe(t.trim() === "");
          if (!lineRulesOutToken(t, token) && !blank) return;
          expect(isSilentReplyText(t, token)).toBe(false);
          expect(isSilentReplyPrefixText(t, token)).toBe(false);
          expect(startsWithSilentToken(t, token)).toBe(false);
          expect(hasNonWhitespace(t)).toBe(!blank);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it("StreamingDirectiveAccumulator.consumeText equals consume(...)?.text chunk by chunk", () => {
    const chunk = fc.oneof(
      text,
      fc.constantFrom("NO_REPLY", "NO", "M", "MEDIA", "[[reply_to: 3]]", "[", "\n"),
    );
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 12 }), (chunks) => {
        const full = new StreamingDirectiveAccumulator();
        const light = new StreamingDirectiveAccumulator();
        chunks.forEach((raw, index) => {
          const final = index === chunks.length - 1;
          expect(light.consumeText(raw, { final })).toBe(full.consume(raw, { final })?.text);
        });
      }),
      { numRuns: 1000 },
    );
  });
});
