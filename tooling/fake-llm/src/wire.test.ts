// Chunking and frame rendering properties: deltas always reassemble to the scripted content, and every
// SSE frame's JSON parses, for any text and chunk size.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anthropicFrames } from "./anthropic-wire.ts";
import { openAiFrames } from "./openai-wire.ts";
import { chunkArguments, chunkText, repeatedText, resolveResponse, wholeText } from "./wire.ts";

describe("repeatedText", () => {
  it("yields the text's pieces once per repetition, lazily; usage counts every repetition", () => {
    expect([...repeatedText("ab cd", undefined, 3)]).toEqual(["ab", " cd", "ab", " cd", "ab", " cd"]);
    const endless = repeatedText("x", 1, Number.MAX_SAFE_INTEGER);
    expect(endless.next().value).toBe("x");
    expect(wholeText("ab", 3)).toBe("ababab");
    expect(resolveResponse({ text: "abcd", repeat: 10 }, "openai").usage.output).toBe(10);
  });
});

describe("chunkText", () => {
  it("splits at word starts, keeping the spaces", () => {
    expect(chunkText("Hello from  the\nmock ", undefined)).toEqual([
      "Hello",
      " from",
      "  the",
      "\nmock",
      " ",
    ]);
    expect(chunkText("", undefined)).toEqual([]);
    expect(chunkText("abcdefg", 3)).toEqual(["abc", "def", "g"]);
  });

  it("reassembles to the original text for any text and chunk size", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme" }),
        fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
        (text, size) => {
          expect(chunkText(text, size).join("")).toBe(text);
          expect(chunkArguments(text, size).join("")).toBe(text);
        },
      ),
    );
  });
});

describe("frames", () => {
  it("carry exactly the scripted text, thinking and arguments on both wires", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.option(fc.integer({ min: 1, max: 7 }), { nil: undefined }),
        (text, thinking, args, chunkSize) => {
          const step = {
            thinking,
            text,
            toolCalls: [{ name: "tool", arguments: args }],
            ...(chunkSize ? { chunkSize } : {}),
          };
          const openai = [
            ...openAiFrames(resolveResponse(step, "openai"), {
              id: "c",
              model: "m",
              created: 1,
              includeUsage: true,
            }),
          ].flatMap((frame) => (frame.data === "[DONE]" ? [] : [JSON.parse(frame.data)]));
          const deltas = openai.flatMap((chunk) =>
            chunk.choices.map((choice: { delta: unknown }) => choice.delta),
          );
          expect(deltas.map((delta) => delta.content ?? "").join("")).toBe(text);
          expect(deltas.map((delta) => delta.reasoning_content ?? "").join("")).toBe(thinking);
          const argText = deltas.map((delta) => delta.tool_calls?.[0]?.function?.arguments ?? "").join("");
          expect(JSON.parse(argText)).toEqual(JSON.parse(JSON.stringify(args)));

          const anthropic = [
            ...anthropicFrames(resolveResponse(step, "anthropic"), { id: "m1", model: "m" }),
          ].map((frame) => {
            const event = JSON.parse(frame.data);
            expect(event.type).toBe(frame.event);
            return event;
          });
          const blockDeltas = anthropic
            .filter((event) => event.type === "content_block_delta")
            .map((event) => event.delta);
          expect(blockDeltas.map((delta) => delta.text ?? "").join("")).toBe(text);
          expect(blockDeltas.map((delta) => delta.thinking ?? "").join("")).toBe(thinking);
          expect(JSON.parse(blockDeltas.map((delta) => delta.partial_json ?? "").join(""))).toEqual(
            JSON.parse(JSON.stringify(args)),
          );
          expect(anthropic.at(-1)?.type).toBe("message_stop");
        },
      ),
      { numRuns: 200 },
    );
  });

  it("omits the OpenAI usage chunk unless the request asked for it", () => {
    const response = resolveResponse({ text: "hi", usage: { input: 3, output: 1, cacheRead: 2 } }, "openai");
    const withUsage = [...openAiFrames(response, { id: "c", model: "m", created: 1, includeUsage: true })];
    const without = [...openAiFrames(response, { id: "c", model: "m", created: 1, includeUsage: false })];
    expect(withUsage.length - without.length).toBe(1);
    expect(JSON.parse(withUsage.at(-2)?.data ?? "{}").usage).toMatchObject({
      prompt_tokens: 5,
      completion_tokens: 1,
      prompt_tokens_details: { cached_tokens: 2 },
    });
  });
});
