// Pictures attached in the chat page: the `images` field of `POST /api/messages` (`[{data, fileName?}]`, data
// standard base64), checked before anything reaches the handler — at most `maxImages`, each at most `maxBytes`
// decoded, and a PNG, JPEG, GIF or WebP by its bytes (a claimed type is ignored) — into the message's
// `images` (for the model) and `media` (what was attached). Any bad picture refuses the whole message with a
// message naming it (the page shows it), so nothing is half-sent. Owns the field's rules; does not own the
// route or the body cap (channel.ts).
import {
  INBOUND_IMAGE_MAX_BYTES,
  type InboundImage,
  inboundImageOf,
  type MediaItem,
} from "@agent-kernel/channels-core";

/** Pictures per message the page may attach by default (the kernel takes up to 10 per turn). */
export const DEFAULT_WEBCHAT_MAX_IMAGES = 4;
/** Default cap on one picture: the kernel's (6 MiB). */
export const DEFAULT_WEBCHAT_MAX_IMAGE_BYTES = INBOUND_IMAGE_MAX_BYTES;

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

export interface WebchatImageLimits {
  readonly maxImages: number;
  readonly maxBytes: number;
}

/** The bytes a request body may need for `limits`' pictures in base64 (plus the JSON around them). */
export function imageBodyAllowance(limits: WebchatImageLimits): number {
  if (limits.maxImages <= 0 || limits.maxBytes <= 0) return 0;
  return limits.maxImages * (Math.ceil(limits.maxBytes / 3) * 4 + 1024);
}

/** The attached pictures, or the reason they are refused (naming the field). */
export function parseAttachedImages(
  value: unknown,
  limits: WebchatImageLimits,
): { readonly images: InboundImage[]; readonly media: MediaItem[] } | { readonly error: string } {
  if (value === undefined) return { images: [], media: [] };
  if (!Array.isArray(value)) return { error: "images must be an array" };
  if (limits.maxImages <= 0 || limits.maxBytes <= 0) {
    return value.length === 0 ? { images: [], media: [] } : { error: "this chat does not take images" };
  }
  if (value.length > limits.maxImages)
    return { error: `images: at most ${limits.maxImages} per message, got ${value.length}` };
  const images: InboundImage[] = [];
  const media: MediaItem[] = [];
  for (const [index, item] of value.entries()) {
    const field = `images[${index}]`;
    if (typeof item !== "object" || item === null)
      return { error: `${field} must be an object {data, fileName?}` };
    const { data, fileName } = item as Record<string, unknown>;
    if (typeof data !== "string" || data.length === 0 || data.length % 4 !== 0 || !BASE64_RE.test(data))
      return { error: `${field}.data must be standard base64` };
    if (fileName !== undefined && (typeof fileName !== "string" || fileName.length > 200))
      return { error: `${field}.fileName must be a string of at most 200 characters` };
    const size = (data.length / 4) * 3 - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
    if (size > limits.maxBytes)
      return { error: `${field}: ${size} bytes is over the ${limits.maxBytes}-byte limit` };
    const image = inboundImageOf(Buffer.from(data, "base64"));
    if (image === undefined) return { error: `${field}: not a PNG, JPEG, GIF or WebP image` };
    images.push(image);
    media.push({
      kind: "image",
      mimeType: image.mimeType,
      sizeBytes: size,
      ...(typeof fileName === "string" && fileName !== "" ? { fileName } : {}),
    });
  }
  return { images, media };
}
