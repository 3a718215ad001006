// `agent -m … --image <path>` as a real process against tooling/fake-llm: the picture is in that turn's request
// and not in the next one's; a model without image input does not get it and stderr says so; a file that is
// missing, not an image (whatever its name) or too large is refused with exit 2 before anything is sent.
import { readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reply } from "@agent-kernel/fake-llm";
import { TURN_IMAGE_MAX_BYTES } from "@agent-kernel/kernel";
import { describe, expect, it, type OnTestFinishedHandler } from "vitest";
import { createCliHarness } from "../test/cli-harness.ts";
import { EXIT } from "./exit-codes.ts";
import { sniffImageType } from "./image-files.ts";

/** Real agent processes on a loaded 2-core machine: minutes, not seconds. */
const CASE_TIMEOUT_MS = 300_000;

const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** The harness, with the primary model `scripted/m1` taking images (the alias `second`, m2, takes text only). */
async function harness(onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const h = await createCliHarness();
  onTestFinished(() => h.close());
  const config = readFileSync(h.configPath, "utf8");
  writeFileSync(h.configPath, config.replace('{ id: "m1",', '{ id: "m1", input: ["text", "image"],'));
  const picture = join(h.root, "photo.png");
  writeFileSync(picture, PNG_1X1);
  return { h, picture };
}

/** The image parts of an OpenAI chat-completions request body. */
function imageParts(body: unknown): { type: string; image_url: { url: string } }[] {
  const messages = (body as { messages?: { content?: unknown }[] }).messages ?? [];
  return messages.flatMap((message) =>
    Array.isArray(message.content)
      ? message.content.filter((part: { type?: string }) => part.type === "image_url")
      : [],
  );
}

describe.concurrent("agent --image", () => {
  it(
    "sends the picture with its own turn only",
    async ({ onTestFinished }) => {
      const { h, picture } = await harness(onTestFinished);
      h.llm.enqueue(reply("A single pixel."), reply("Still nothing new."));
      const first = await h.run(["-m", "what is this?", "--image", picture, "--no-stream"]);
      expect(first.stderr).toBe("");
      expect(first).toMatchObject({ code: EXIT.ok, stdout: "A single pixel.\n" });
      const second = await h.run(["-m", "and now?", "--no-stream"]);
      expect(second.code).toBe(EXIT.ok);
      expect(h.llm.requests).toHaveLength(2);
      const sent = imageParts(h.llm.requests[0]?.body);
      expect(sent).toHaveLength(1);
      expect(sent[0]?.image_url.url.startsWith("data:image/png;base64,")).toBe(true);
      expect(imageParts(h.llm.requests[1]?.body)).toEqual([]);
      expect(JSON.stringify(h.llm.requests[1]?.body)).toContain("what is this?");
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "says on stderr that a model without image input did not get the picture",
    async ({ onTestFinished }) => {
      const { h, picture } = await harness(onTestFinished);
      h.llm.enqueue(reply("I cannot see it."));
      const result = await h.run([
        "-m",
        "what is this?",
        "--image",
        picture,
        "--model",
        "second",
        "--no-stream",
      ]);
      expect(result.code).toBe(EXIT.ok);
      expect(result.stderr).toBe(
        'agent: 1 image was not sent: the model does not take image input (its input list lacks "image").\n',
      );
      const body = h.llm.requests[0]?.body;
      expect(imageParts(body)).toEqual([]);
      expect(JSON.stringify(body)).toContain(
        "[Attachment images omitted: this model does not support image input]",
      );
    },
    CASE_TIMEOUT_MS,
  );

  it(
    "refuses a missing file, a file that is not an image and one over the size cap, with exit 2",
    async ({ onTestFinished }) => {
      const { h, picture } = await harness(onTestFinished);
      const fake = join(h.root, "notes.png");
      writeFileSync(fake, "just text, named like a picture\n");
      const huge = join(h.root, "huge.jpg");
      writeFileSync(huge, Buffer.from([0xff, 0xd8, 0xff, 0xe0]));
      truncateSync(huge, TURN_IMAGE_MAX_BYTES + 1);
      const missing = join(h.root, "nowhere.png");
      const [notImage, tooLarge, absent] = await Promise.all([
        h.run(["-m", "x", "--image", picture, "--image", fake]),
        h.run(["-m", "x", "--image", huge]),
        h.run(["-m", "x", "--image", missing]),
      ]);
      expect(notImage).toMatchObject({
        code: EXIT.usage,
        stderr: `agent: --image ${fake}: not a PNG, JPEG, GIF or WebP image (judged by its first bytes, not its name).\n`,
      });
      expect(tooLarge).toMatchObject({
        code: EXIT.usage,
        stderr: `agent: --image ${huge}: 6291457 bytes (6.0 MiB) is over the limit of 6291456 bytes (6.0 MiB) for one image.\n`,
      });
      expect(absent).toMatchObject({
        code: EXIT.usage,
        stderr: `agent: --image ${missing}: no such file.\n`,
      });
      expect(h.llm.requests).toEqual([]);
    },
    CASE_TIMEOUT_MS,
  );
});

describe("sniffImageType", () => {
  it("knows the four types by their first bytes, and nothing else", () => {
    const ascii = (text: string) => new Uint8Array([...text].map((char) => char.charCodeAt(0)));
    expect(sniffImageType(PNG_1X1)).toBe("image/png");
    expect(sniffImageType(new Uint8Array([0xff, 0xd8, 0xff, 0xdb]))).toBe("image/jpeg");
    expect(sniffImageType(ascii("GIF89a...."))).toBe("image/gif");
    expect(sniffImageType(ascii("RIFF\u0000\u0000\u0000\u0000WEBP"))).toBe("image/webp");
    expect(sniffImageType(ascii("RIFF\u0000\u0000\u0000\u0000WAVE"))).toBeUndefined();
    expect(sniffImageType(ascii("<svg xmlns="))).toBeUndefined();
    expect(sniffImageType(new Uint8Array())).toBeUndefined();
  });
});
