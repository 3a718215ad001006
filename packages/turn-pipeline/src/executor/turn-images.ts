// A turn's images, prompt-local as in OpenClaw (001_* "Prompting": images are passed with this turn's prompt
// and never re-injected from history). Owns: fitting the images to the model (pi's `resizeImage` under the
// model's `inputLimits.images.resize`, as pi's own `prompt` does), OpenClaw's omission note for a model
// without image input, and attaching the images to this turn's user message in every model request of the
// turn (pi's `transformContext`, wrapped for one attempt and restored after it).
//
// Why not `session.prompt(text, { images })`: pi would store the base64 in the user message, so the transcript
// would grow by megabytes per photo forever, and every later request would re-send the picture from history.
// Here the stored user message is the prompt text alone; the images exist only in this turn's requests
// (including a fallback attempt's, which rebuilds its context from the transcript). Does not own: validating
// the images (the kernel's validate.ts) or when attempts run (attempt-run.ts, recovery.ts).
import type { Api, ImageContent, Model, TextContent } from "@earendil-works/pi-ai";
import { type AgentSession, formatDimensionNote, resizeImage } from "@earendil-works/pi-coding-agent";

/** OpenClaw's words (context-media-runtime) when the model cannot take images: the model tells the user. */
export const IMAGES_OMITTED_NOTE = "[Attachment images omitted: this model does not support image input]";
/** pi's words when an image cannot be fitted to the model's limits. */
export const IMAGE_NOT_FITTED_NOTE =
  "[Image omitted: could not be resized below the inline image size limit.]";

/** What this turn's user message gains in a model request: image blocks, and text notes about them. */
export interface TurnImageBlocks {
  readonly images: readonly ImageContent[];
  readonly notes: readonly string[];
  /** Images not sent: the model has no image input, or an image could not be fitted. */
  readonly omitted: number;
  readonly reason?: "model_without_vision" | "not_fitted";
}

/** Whether pi-ai's model description says the model takes images (`Model.input`). */
export function modelTakesImages(model: Model<Api>): boolean {
  return model.input.includes("image");
}

/** A turn without images: nothing to fit or attach (shared: never changed). */
export const NO_TURN_IMAGES: TurnImageBlocks = Object.freeze({
  images: Object.freeze([]) as readonly ImageContent[],
  notes: Object.freeze([]) as readonly string[],
  omitted: 0,
});

/** The images as this model gets them: resized to its limits, or omitted with a note saying so. */
export async function fitImagesToModel(
  images: readonly ImageContent[],
  model: Model<Api>,
): Promise<TurnImageBlocks> {
  if (images.length === 0) return NO_TURN_IMAGES;
  if (!modelTakesImages(model)) {
    return {
      images: [],
      notes: [IMAGES_OMITTED_NOTE],
      omitted: images.length,
      reason: "model_without_vision",
    };
  }
  const fitted: ImageContent[] = [];
  const notes: string[] = [];
  let omitted = 0;
  for (const image of images) {
    // Bytes from a chat are untrusted: an image the decoder refuses is omitted like one that cannot be fitted.
    const resized = await resizeImage(
      Buffer.from(image.data, "base64"),
      image.mimeType,
      model.inputLimits?.images?.resize,
    ).catch(() => null);
    if (resized === null) {
      omitted += 1;
      notes.push(IMAGE_NOT_FITTED_NOTE);
      continue;
    }
    fitted.push({ type: "image", data: resized.data, mimeType: resized.mimeType });
    const dimensions = formatDimensionNote(resized);
    if (dimensions !== undefined) notes.push(dimensions);
  }
  return { images: fitted, notes, omitted, ...(omitted > 0 ? { reason: "not_fitted" as const } : {}) };
}

type AgentMessages = Parameters<NonNullable<AgentSession["agent"]["transformContext"]>>[0];

function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter((block): block is TextContent => block?.type === "text");
  return texts.length === content.length ? texts.map((block) => block.text).join("") : undefined;
}

/**
 * Attaches `blocks` to this turn's user message — the latest text-only user message whose text is `prompt`
 * (a later turn's message comes after it, an earlier turn's before) — in every request `session` makes until
 * the returned function restores pi's own `transformContext`. The stored message is never changed.
 */
export function attachTurnImages(session: AgentSession, prompt: string, blocks: TurnImageBlocks): () => void {
  if (blocks.images.length === 0 && blocks.notes.length === 0) return () => {};
  const agent = session.agent;
  const previous = agent.transformContext;
  agent.transformContext = async (messages, signal) => {
    const transformed: AgentMessages = previous ? await previous(messages, signal) : messages;
    const index = transformed.findLastIndex(
      (message) => message.role === "user" && textOf(message.content) === prompt,
    );
    const message = transformed[index];
    if (message === undefined || message.role !== "user") return transformed;
    const text = [prompt, ...blocks.notes].filter((part) => part.trim() !== "").join("\n\n");
    // An images-only turn has no text: providers refuse an empty text block.
    const textBlocks: TextContent[] = text === "" ? [] : [{ type: "text", text }];
    const copy = [...transformed];
    copy[index] = { ...message, content: [...textBlocks, ...blocks.images] };
    return copy;
  };
  return () => {
    if (previous === undefined) delete agent.transformContext;
    else agent.transformContext = previous;
  };
}
