// Pictures an adapter hands the model (`InboundMessage.images`): what counts as one (PNG, JPEG, GIF or WebP by
// its first bytes — a sender's or server's type claim is not trusted, and a sign-in page served with 200 is not
// a picture) and the kernel's caps on them. Owns the type check and the caps; does not own downloading (each
// adapter fetches from its own service) or what the kernel does with the images.
import type { InboundImage, InboundMessage } from "./contract.ts";

/** The kernel's cap on one image (`TURN_IMAGE_MAX_BYTES`, OpenClaw's 6 MiB): the adapters' default. */
export const INBOUND_IMAGE_MAX_BYTES = 6 * 1024 * 1024;
/** The kernel's cap on images per turn (`TURN_IMAGE_MAX_COUNT`): an adapter takes at most this many. */
export const INBOUND_IMAGE_MAX_COUNT = 10;

/** The image type the bytes start with (PNG, JPEG, GIF, WebP), or undefined. */
export function sniffImageType(head: Uint8Array): string | undefined {
  const starts = (bytes: readonly number[], at = 0) =>
    bytes.every((byte, index) => head[at + index] === byte);
  const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (starts(ascii("GIF87a")) || starts(ascii("GIF89a"))) return "image/gif";
  if (starts(ascii("RIFF")) && starts(ascii("WEBP"), 8)) return "image/webp";
  return undefined;
}

/**
 * The message with its deferred pictures fetched (`loadImages` run, its result as `images`) and no loader left,
 * ready to store; a message without a loader is returned as it is. Call it only for a message you let in.
 */
export async function withInboundImages(message: InboundMessage): Promise<InboundMessage> {
  const { loadImages, ...rest } = message;
  if (loadImages === undefined) return message;
  const loaded = await loadImages();
  const images = [...(rest.images ?? []), ...loaded];
  return images.length > 0 ? { ...rest, images } : rest;
}

/** The bytes as an `InboundImage` (base64, the type they start with), or undefined when they are not a picture. */
export function inboundImageOf(bytes: Uint8Array): InboundImage | undefined {
  const mimeType = sniffImageType(bytes.subarray(0, 12));
  return mimeType === undefined
    ? undefined
    : {
        type: "image",
        data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"),
        mimeType,
      };
}
