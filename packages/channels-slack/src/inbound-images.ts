// The pictures of an inbound Slack message, downloaded for the model: file shares whose `mimetype` says image,
// fetched from `url_private_download` (else `url_private`) with the bot token (Slack's files need the
// `files:read` scope), under a size cap, typed by their first bytes. Without the scope Slack answers a private
// URL with its HTML sign-in page and HTTP 200: the byte check is what tells. The bot token is sent only to
// Slack's own hosts (https `slack.com` / `*.slack.com`) or the Web API's origin (a test fake, a proxy): a
// file URL in an event is never trusted with it otherwise, redirects included. Owns: which files are
// pictures, the download, the cap and the check. A picture that cannot be fetched is left out and reported
// (the message still runs; its `media` still lists the file). Does not own the event's mapping (normalize.ts).
import {
  ChannelError,
  INBOUND_IMAGE_MAX_COUNT,
  type InboundImage,
  inboundImageOf,
  type MediaItem,
} from "@agent-kernel/channels-core";
import { SLACK_CHANNEL_ID } from "./web-api.ts";

/** Redirects followed per download (each target checked like the first URL). */
const MAX_REDIRECTS = 3;
/**
 * One picture's whole download, redirects included: a stalled host must not hold the event for ever (Slack
 * re-sends an event not acknowledged in 3 s; the retry waits for this attempt), so past it the picture is left out.
 */
export const DEFAULT_IMAGE_DOWNLOAD_TIMEOUT_MS = 20_000;

export interface SlackImageDownload {
  readonly botToken: string;
  /** The Web API's base URL: its origin may receive the token too (besides Slack's own hosts). */
  readonly apiBaseUrl: string;
  /** Largest picture taken, in bytes; a larger one is left out (reported). */
  readonly maxBytes: number;
  readonly signal?: AbortSignal | undefined;
  /** One picture's download, redirects and body included (default 20 s). */
  readonly timeoutMs?: number | undefined;
  readonly onError: (error: Error) => void;
}

/** The shared files that are pictures the model can take (image mimetypes, with a URL), at most the kernel's count. */
export function slackPictureFiles(media: readonly MediaItem[]): (MediaItem & { url: string })[] {
  return media
    .filter((item): item is MediaItem & { url: string } => item.kind === "image" && item.url !== undefined)
    .slice(0, INBOUND_IMAGE_MAX_COUNT);
}

/** Whether `url` may be sent the bot token: Slack's own https hosts, or the Web API's origin. */
export function mayCarryBotToken(url: URL, apiBaseUrl: string): boolean {
  if (url.origin === new URL(apiBaseUrl).origin) return true;
  return url.protocol === "https:" && (url.hostname === "slack.com" || url.hostname.endsWith(".slack.com"));
}

const refused = (file: MediaItem, why: string, retryable = false) =>
  new ChannelError(SLACK_CHANNEL_ID, `picture ${file.fileId ?? file.fileName ?? "(unnamed)"}: ${why}`, {
    retryable,
  });

/** The response body, refused as soon as it passes `maxBytes` (a lying or absent content-length included). */
async function cappedBody(response: Response, file: MediaItem, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw refused(file, `${declared} bytes is over the ${maxBytes}-byte limit`);
  }
  const parts: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  if (reader === undefined) return new Uint8Array();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw refused(file, `over the ${maxBytes}-byte limit`);
    }
    parts.push(value);
  }
  return Buffer.concat(parts, total);
}

async function downloadPicture(
  file: MediaItem & { url: string },
  options: SlackImageDownload,
): Promise<InboundImage> {
  if (file.sizeBytes !== undefined && file.sizeBytes > options.maxBytes) {
    throw refused(file, `${file.sizeBytes} bytes is over the ${options.maxBytes}-byte limit`);
  }
  let url: URL;
  try {
    url = new URL(file.url);
  } catch {
    throw refused(file, "its URL is not a URL");
  }
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_IMAGE_DOWNLOAD_TIMEOUT_MS);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  try {
    return await fetchPicture(file, url, options, signal);
  } catch (error) {
    if (timeout.aborted && !options.signal?.aborted) throw refused(file, "the download took too long", true);
    throw error;
  }
}

async function fetchPicture(
  file: MediaItem & { url: string },
  first: URL,
  options: SlackImageDownload,
  signal: AbortSignal,
): Promise<InboundImage> {
  let url = first;
  for (let hop = 0; ; hop++) {
    if (!mayCarryBotToken(url, options.apiBaseUrl)) {
      throw refused(file, `${url.origin} is not a Slack file host; the bot token is not sent there`);
    }
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${options.botToken}` },
        redirect: "manual",
        signal,
      });
    } catch (cause) {
      if (signal.aborted) throw cause;
      throw refused(file, "network error", true);
    }
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw refused(file, `more than ${MAX_REDIRECTS} redirects`);
      url = new URL(location, url);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw refused(file, `HTTP ${response.status}`, response.status >= 500 || response.status === 429);
    }
    const image = inboundImageOf(await cappedBody(response, file, options.maxBytes));
    if (image === undefined) {
      throw refused(
        file,
        "not a PNG, JPEG, GIF or WebP image (Slack's sign-in page: does the bot token have files:read?)",
      );
    }
    return image;
  }
}

/**
 * Downloads the message's pictures at once (Slack waits for the event's acknowledgement, so not one after
 * another), kept in the message's order; one that fails is left out and passed to `onError` (an abort is
 * thrown: the message is not delivered half-read).
 */
export async function downloadSlackImages(
  media: readonly MediaItem[],
  options: SlackImageDownload,
): Promise<InboundImage[]> {
  const settled = await Promise.allSettled(
    slackPictureFiles(media).map((file) => downloadPicture(file, options)),
  );
  if (options.signal?.aborted) throw options.signal.reason ?? new Error("aborted");
  const images: InboundImage[] = [];
  for (const result of settled) {
    if (result.status === "fulfilled") images.push(result.value);
    else options.onError(result.reason instanceof Error ? result.reason : new Error(String(result.reason)));
  }
  return images;
}
