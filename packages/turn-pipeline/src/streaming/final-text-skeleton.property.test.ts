// The final payload computed from the streamed skeleton equals the whole-text computation, for random texts
// full of the constructs that cross paragraph boundaries (tags, fences, directives, MEDIA: lines, blanks)
// and random splits of the same text into deltas.
import type { AssistantMessage, AssistantMessageEvent } from "@earendil-works/pi-ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FinalTextSkeleton } from "./final-text-skeleton.ts";
import { stripReasoningTagsFromText } from "./reasoning-tags.ts";
import { parseReplyDirectives } from "./reply-directives.ts";
import { ReplyStream } from "./reply-stream.ts";

const plainWord = fc.constantFrom("alpha", "beta", "1.5", "end.", "naïve", "😀", "x", "it's", '"q"', "a>b");
const trickyWord = fc.constantFrom(
  "[",
  "]",
  "[[",
  "]]",
  "<",
  ">",
  "'",
  "reply_to_current",
  "reply_to:",
  "reply_to: 7",
  "audio_as_voice",
  "[[reply_to_current]]",
  "[[reply_to: 42]]",
  "[[audio_as_voice]]",
  "MEDIA:",
  "media: ./a.png",
  "MEDIA: https://example.com/a.png",
  "NO_REPLY",
  "`",
  "`code`",
  "```",
  "~~~",
  "<think>",
  "</think>",
  "<thinking a='",
  "'>",
  "<final>",
  "</final>",
  "<reasoning>",
  "<internal>",
  "</internal>",
  "  ",
  "\t",
  "\u00a0",
  "\r",
  "#",
  ":",
  "\u0001",
  "\u0003",
);
const word = fc.oneof({ weight: 12, arbitrary: plainWord }, { weight: 1, arbitrary: trickyWord });
const lineText = fc.array(word, { minLength: 1, maxLength: 6 }).map((ws) => ws.join(" "));
const lineLead = fc.constantFrom("", "", "", "", "", "", " ", "    ", "- ", "# ", "\t");
const line = fc.tuple(lineLead, lineText).map(([lead, text]) => lead + text);
const prose = fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.join("\n"));
const fenced = fc
  .tuple(
    fc.constantFrom("```", "~~~", "````", "```"),
    fc.constantFrom("", "ts", "a]", "x`"),
    fc.array(line, { minLength: 0, maxLength: 4 }),
    fc.constantFrom("```", "~~~", "````", "", "``` x", " ```"),
  )
  .map(([open, info, body, close]) => [`${open}${info}`, ...body, close].join("\n"));
/** Whole paragraphs that open or close a construct around the paragraphs next to them. */
const edgeBlock = fc.constantFrom(
  "[[",
  "[[reply_to:",
  "[[ reply_to",
  "]]",
  "]",
  "reply_to_current alpha",
  "reply_to_current",
  "audio_as_voice",
  ": 7]",
  "<think a='",
  "'>",
  "<",
  "</",
  ">",
  "<<final>think",
  "alpha>b",
  "final x",
  "a  b",
  "a \nb",
  "MEDIA:",
  "```ts",
  "~~~",
);
/** A paragraph between two such edges. */
const sandwich = fc
  .tuple(
    edgeBlock,
    fc.oneof(prose, edgeBlock, fenced, fc.constantFrom("alpha", "x]", "```\n]] x\n```", "```\n x\n```")),
    edgeBlock,
  )
  .map((parts) => parts.join("\n\n"));
/** Paragraphs the silent-payload test looks at (it is settled on the skeleton when its first character decides). */
const silentish = fc.constantFrom(
  "NO_REPLY",
  "no_reply",
  "Thinking:",
  "thinking\nNO_REPLY",
  "analysis",
  "reasoning: alpha",
  "thought",
  '"NO_REPLY"',
  '{"action": "NO_REPLY"}',
  "I will stay quiet.",
  "alpha NO_REPLY",
);
const block = fc.oneof(
  { weight: 8, arbitrary: prose },
  { weight: 1, arbitrary: silentish },
  { weight: 2, arbitrary: sandwich },
  { weight: 3, arbitrary: fenced },
  { weight: 2, arbitrary: edgeBlock },
  { weight: 1, arbitrary: trickyWord },
);
const separator = fc.constantFrom("\n\n", "\n\n", "\n\n", "\n", "\n\n\n", "\n\n  ", " \n\n", "\n \n");
const text = fc
  .tuple(
    fc.array(fc.tuple(block, separator), { minLength: 1, maxLength: 10 }),
    fc.constantFrom("", "\n", " "),
  )
  .map(([pairs, end]) => pairs.map(([b, s]) => b + s).join("") + end);

function splitAt(input: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (input.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let last = 0;
  for (const point of points) {
    pieces.push(input.slice(last, point));
    last = point;
  }
  pieces.push(input.slice(last));
  return pieces.filter(Boolean);
}

const options = { currentMessageId: "m-1", silentToken: "NO_REPLY" };

describe("final-text skeleton", () => {
  it("gives the whole-text final payload for any text and any split", () => {
    let usedSkeleton = 0;
    let replacedParagraphs = 0;
    fc.assert(
      fc.property(
        text,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom(1, 8, 64),
        (raw, cuts, batch) => {
          const skeleton = new FinalTextSkeleton(batch);
          for (const piece of splitAt(raw, cuts)) skeleton.push(piece);
          const skeletonText = skeleton.skeletonText();
          const whole = parseReplyDirectives(stripReasoningTagsFromText(raw), options);
          if (skeletonText === undefined) return;
          usedSkeleton++;
          if (skeletonText !== raw) replacedParagraphs++;
          const incremental = parseReplyDirectives(stripReasoningTagsFromText(skeletonText), {
            ...options,
            expandText: (t) => skeleton.expand(t),
          });
          expect(incremental).toEqual(whole);
        },
      ),
      { numRuns: 4000 },
    );
    // the property is not vacuous: most texts use the skeleton and many replace paragraphs
    expect(usedSkeleton).toBeGreaterThan(2000);
    expect(replacedParagraphs).toBeGreaterThan(1000);
  });

  it("ReplyStream's final payload equals the whole-text computation for any delta split", () => {
    const partial = {} as AssistantMessage;
    fc.assert(
      fc.property(
        text,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 1, max: 64 }),
        (raw, cuts, batch) => {
          const stream = new ReplyStream({ currentMessageId: "m-1", inputBatchChars: batch });
          stream.handle({ type: "start", partial });
          for (const delta of splitAt(raw, cuts))
            stream.handle({ type: "text_delta", contentIndex: 0, delta, partial } as AssistantMessageEvent);
          stream.handle({ type: "done", reason: "stop", message: partial } as AssistantMessageEvent);
          const [payload] = stream.finish();
          const whole = parseReplyDirectives(stripReasoningTagsFromText(raw), options);
          const expected =
            whole.isSilent || (!whole.text && !whole.mediaUrls?.length)
              ? undefined
              : {
                  ...(whole.text ? { text: whole.text } : {}),
                  ...(whole.mediaUrls?.length ? { mediaUrls: whole.mediaUrls } : {}),
                  ...(whole.replyToId !== undefined ? { replyToId: whole.replyToId } : {}),
                  ...(whole.replyToCurrent ? { replyToCurrent: true } : {}),
                  ...(whole.audioAsVoice ? { audioAsVoice: true } : {}),
                };
          expect(payload).toEqual(expected);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("finds a silent payload whose reasoning prefix is a replaced paragraph", () => {
    // the silent-token test is settled on the skeleton only when its first character rules the token out;
    // here the first character is a key's, so the expanded text decides
    const raw = "thought\n\nNO_REPLY";
    const skeleton = new FinalTextSkeleton();
    skeleton.push(raw);
    const skeletonText = skeleton.skeletonText() ?? "";
    expect(skeletonText).not.toContain("thought");
    const parsed = parseReplyDirectives(skeletonText, { ...options, expandText: (t) => skeleton.expand(t) });
    expect(parsed.isSilent).toBe(true);
    expect(parseReplyDirectives(raw, options).isSilent).toBe(true);
  });

  it("keeps a long reply of plain paragraphs and code blocks out of the whole-text passes", () => {
    const paragraph = "Plain words here.\n- a list item\n- another one";
    const code = "```ts\nconst a = [1, 2];\n  return a;\n```";
    const raw = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? code : paragraph)).join("\n\n");
    const skeleton = new FinalTextSkeleton();
    skeleton.push(`${raw}\n\n[[reply_to_current]] done`);
    const skeletonText = skeleton.skeletonText() ?? "";
    expect(skeletonText.length).toBeLessThan(raw.length / 5);
    expect(skeleton.expand(skeletonText)).toBe(`${raw}\n\n[[reply_to_current]] done`);
  });

  it("leaves texts it cannot handle cheaply to the whole-text passes", () => {
    const longParagraph = new FinalTextSkeleton();
    longParagraph.push(`intro\n\n${"word ".repeat(60_000)}`);
    expect(longParagraph.skeletonText()).toBeUndefined();
    const keyCharacters = new FinalTextSkeleton();
    keyCharacters.push("a\n\nb \u0001 c\n\nd");
    expect(keyCharacters.skeletonText()).toBeUndefined();
    const finalTag = new FinalTextSkeleton();
    finalTag.push("a\n\n<final>b</final>\n\nc");
    expect(finalTag.skeletonText()).toBeUndefined();
  });
});
