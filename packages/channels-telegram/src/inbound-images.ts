// The pictures of an inbound Telegram message, downloaded for the model: the largest photo size (inbound.ts
// already picked it) and image documents (a picture sent "as a file"), each through getFile and the file
// download path, under a size cap, typed by their first bytes (Telegram's `mime_type` is the sender's claim).
// Owns: which media are pictures, the download, the cap and the type check. A picture that cannot be fetched
// is left out and reported (the message still runs, its `media` still lists it). Does not own the mapping of
// the update (inbound.ts) or what the gateway does with the images (apps/auto-reply).
import { ChannelError, type InboundImage, type MediaItem, sniffImageType } from "@agent-kernel/channels-core";
import { CHANNEL_ID, type TelegramBotApi } from "./bot-api.ts";

/** The kernel's cap on one image (`TURN_IMAGE_MAX_BYTES`, OpenClaw's 6 MiB); Telegram's own download cap is 20 MB. */
export const DEFAULT_MAX_IMAGE_BYTES = 6 * 1024 * 1024;
/** The kernel's cap on images per turn (`TURN_IMAGE_MAX_COUNT`). */
const MAX_IMAGES = 10;

const IMAGE_DOCUMENT_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The image type the bytes start with (PNG, JPEG, GIF, WebP), or undefined (channels-core's check). */
export { sniffImageType };

/** The media items that are pictures the model can take: photos, and documents that claim an image type. */
export function pictureMedia(media: readonly MediaItem[]): MediaItem[] {
  return media
    .filter(
      (item) =>
        item.fileId !== undefined &&
        (item.kind === "image" ||
          (item.kind === "document" &&
            item.mimeType !== undefined &&
            IMAGE_DOCUMENT_TYPES.has(item.mimeType))),
    )
    .slice(0, MAX_IMAGES);
}

async function downloadPicture(
  api: TelegramBotApi,
  item: MediaItem & { fileId: string },
  maxBytes: number,
  signal: AbortSignal | undefined,
): Promise<InboundImage> {
  const tooLarge = (size: number) =>
    new ChannelError(CHANNEL_ID, `picture ${item.fileId}: ${size} bytes is over the ${maxBytes}-byte limit`, {
      retryable: false,
    });
  if (item.sizeBytes !== undefined && item.sizeBytes > maxBytes) throw tooLarge(item.sizeBytes);
  const file = await api.call<{ file_path?: string; file_size?: number }>(
    "getFile",
    { file_id: item.fileId },
    signal === undefined ? {} : { signal },
  );
  if (file.file_size !== undefined && file.file_size > maxBytes) throw tooLarge(file.file_size);
  if (typeof file.file_path !== "string" || file.file_path === "") {
    throw new ChannelError(CHANNEL_ID, `picture ${item.fileId}: getFile gave no file_path`, {
      retryable: false,
    });
  }
  const bytes = await api.downloadFile(file.file_path, {
    maxBytes,
    ...(signal === undefined ? {} : { signal }),
  });
  const mimeType = sniffImageType(bytes.subarray(0, 12));
  if (mimeType === undefined) {
    throw new ChannelError(CHANNEL_ID, `picture ${item.fileId}: not a PNG, JPEG, GIF or WebP image`, {
      retryable: false,
    });
  }
  return { type: "image", data: Buffer.from(bytes).toString("base64"), mimeType };
}

/**
 * Downloads the message's pictures, in order; one that fails is left out and passed to `onError` (an abort
 * is thrown: the message is not delivered half-read).
 */
export async function downloadInboundImages(
  api: TelegramBotApi,
  media: readonly MediaItem[],
  options: {
    readonly maxBytes: number;
    readonly signal?: AbortSignal;
    readonly onError: (error: Error) => void;
  },
): Promise<InboundImage[]> {
  const images: InboundImage[] = [];
  for (const item of pictureMedia(media)) {
    try {
      images.push(
        await downloadPicture(api, item as MediaItem & { fileId: string }, options.maxBytes, options.signal),
      );
    } catch (error) {
      if (options.signal?.aborted) throw error;
      options.onError(error instanceof Error ? error : new Error(String(error)));
    }
  }
  return images;
}
