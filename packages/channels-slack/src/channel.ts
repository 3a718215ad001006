// The Slack adapter. Inbound in Events API mode (the default): an HTTP endpoint that reads at most 1 MB of a body
// (channels-core's readBoundedBody), verifies Slack's request signatures, refuses stale and replayed requests,
// answers url_verification, dedupes Slack's retries, and hands each user message to the gateway before
// acknowledging it; or in Socket Mode over socket-mode.ts, with the same dedupe and accept-then-acknowledge rule.
// The dedupe survives a restart when given the session store's channel state (handled-log.ts); shared pictures
// are fetched only when the gateway asks (`loadImages`, inbound-images.ts). Outbound over the Web API (mrkdwn,
// chunking, threads, uploads, edits, rate limits, at most `maxMessagesPerReply` messages per send with the rest
// uploaded as reply.md — channels-core's `planReplyMessages` decides). Owns the adapter lifecycle. Does not own
// its options (channel-options.ts), the wire client (web-api.ts), the event mapping (normalize.ts), the dialect
// (mrkdwn.ts), nor access control and routing (channels-core).
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { basename } from "node:path";
import {
  type ChannelAdapter,
  type ChannelCapabilities,
  ChannelError,
  type ChannelStartOptions,
  closeAfterBodyfulRequest,
  INBOUND_IMAGE_MAX_BYTES,
  type InboundHandler,
  type InboundMessage,
  type MediaItem,
  type OutboundMessage,
  type OutboundTarget,
  planReplyMessages,
  readBoundedBody,
  resolveMaxMessagesPerReply,
  type SendResult,
  type SentMessage,
  textMessageBudget,
} from "@agent-kernel/channels-core";
import { CHANNEL_DEFAULTS } from "@agent-kernel/config";
import type { SlackChannelOptions } from "./channel-options.ts";
import { ExpiringSet } from "./expiring-set.ts";
import { HandledLog, type WorkOutcome } from "./handled-log.ts";
import { downloadSlackImages } from "./inbound-images.ts";
import { escapeSlackText, formatSlackChunks, markdownToSlackMrkdwn } from "./mrkdwn.ts";
import { normalizeSlackEvent, type SlackIdentity } from "./normalize.ts";
import { SLACK_SIGNATURE_MAX_AGE_SECONDS, verifySlackSignature } from "./signature.ts";
import { SocketModeClient } from "./socket-mode.ts";
import {
  DEFAULT_SLACK_API_BASE_URL,
  SLACK_CHANNEL_ID,
  type SlackApiResponse,
  SlackWebApi,
} from "./web-api.ts";

/** Slack's hard limit on a message's `text`. */
export const SLACK_MAX_TEXT_LENGTH = 40_000;
export const DEFAULT_SLACK_EVENTS_PATH = "/slack/events";
/** Events API bodies are small; anything past this is not Slack. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface SlackChannel extends ChannelAdapter {
  /** The events endpoint's URL once started (`http://127.0.0.1:<port>/slack/events`); undefined in Socket Mode. */
  readonly endpointUrl: string | undefined;
  /** The bot's identity from auth.test, once started. */
  readonly identity: SlackIdentity | undefined;
}

export function createSlackChannel(options: SlackChannelOptions): SlackChannel {
  if (!options.botToken) throw new Error("createSlackChannel: botToken is required");
  const mode = options.mode ?? "events";
  const signingSecret = options.signingSecret ?? "";
  if (mode === "events" && !signingSecret)
    throw new Error("createSlackChannel: signingSecret is required in events mode");
  if (mode === "socket" && !options.appToken)
    throw new Error("createSlackChannel: appToken (xapp-…) is required in socket mode");
  const textChunkLimit = Math.min(
    options.textChunkLimit ?? CHANNEL_DEFAULTS.textChunkLimit,
    SLACK_MAX_TEXT_LENGTH,
  );
  if (!Number.isInteger(textChunkLimit) || textChunkLimit < 16)
    throw new Error(
      `createSlackChannel: textChunkLimit must be an integer ≥ 16 (got ${options.textChunkLimit})`,
    );
  let maxMessagesPerReply: number;
  try {
    maxMessagesPerReply = resolveMaxMessagesPerReply(options.maxMessagesPerReply);
  } catch (error) {
    throw new Error(`createSlackChannel: ${(error as Error).message}`);
  }
  const accountId = options.accountId ?? "default";
  const path = options.path ?? DEFAULT_SLACK_EVENTS_PATH;
  const windowMs = SLACK_SIGNATURE_MAX_AGE_SECONDS * 1000;
  const stopController = new AbortController();
  const api = new SlackWebApi({
    botToken: options.botToken,
    signal: stopController.signal,
    ...(options.apiBaseUrl !== undefined ? { apiBaseUrl: options.apiBaseUrl } : {}),
    ...(options.maxRateLimitRetries !== undefined
      ? { maxRateLimitRetries: options.maxRateLimitRetries }
      : {}),
    ...(options.maxRetryAfterMs !== undefined ? { maxRetryAfterMs: options.maxRetryAfterMs } : {}),
  });

  // Accepted requests' signatures (a byte-identical replay is refused; in memory only, as a replay after a
  // restart is still caught by its event id), handled event ids (Slack's retries are acknowledged without
  // handling them twice) and message keys (`message` and `app_mention` both arrive for one mention). Only
  // accepted work is remembered, so a retry after a failed handler is handled again.
  const acceptedSignatures = new ExpiringSet(windowMs);
  const handled = new HandledLog({
    accountId,
    memoryTtlMs: windowMs * 2,
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(options.channelState !== undefined ? { channelState: options.channelState } : {}),
    ...(options.dedupeTtlMs !== undefined ? { ttlMs: options.dedupeTtlMs } : {}),
    ...(options.onError !== undefined ? { onError: options.onError } : {}),
  });
  const inFlight = new Set<Promise<unknown>>();

  let server: Server | undefined;
  let socketClient: SocketModeClient | undefined;
  let endpointUrl: string | undefined;
  let identity: SlackIdentity | undefined;
  let handler: InboundHandler | undefined;
  let stopping: Promise<void> | undefined;

  const capabilities: ChannelCapabilities = {
    threads: true,
    edits: true,
    // Slack has no typing indicator for bots on the Web API: sendTyping is a no-op.
    typing: false,
    media: true,
    // Slack has reactions, but the contract has no call to add one yet
    reactions: false,
    fileUploads: true,
    maxTextLength: textChunkLimit,
    dialect: "slack-mrkdwn",
  };

  const handleRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Refusals below answer before reading the body: the connection ends with them, so no body is drained.
    closeAfterBodyfulRequest(req, res);
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== path) return reply(res, 404);
    if (req.method !== "POST") return reply(res, 405, undefined, { allow: "POST" });
    const body = await readBoundedBody(req, res, MAX_BODY_BYTES);
    if (body === undefined) return reply(res, 413);
    const signature = header(req, "x-slack-signature");
    const check = verifySlackSignature({
      signingSecret,
      timestamp: header(req, "x-slack-request-timestamp"),
      signature,
      rawBody: body,
    });
    if (!check.ok) return reply(res, 401);
    if (signature === undefined) return reply(res, 401);
    if (acceptedSignatures.has(signature)) {
      // Slack's first retry can come within the same second (same timestamp, same body, same signature): a
      // declared retry of accepted work is acknowledged, anything else identical is a replay. Neither runs twice.
      return reply(res, header(req, "x-slack-retry-num") !== undefined ? 200 : 401);
    }
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString("utf8"));
    } catch {
      return reply(res, 400);
    }
    if (!isObject(payload)) return reply(res, 400);
    if (payload.type === "url_verification") {
      acceptedSignatures.add(signature);
      const challenge = typeof payload.challenge === "string" ? payload.challenge : "";
      return reply(res, 200, JSON.stringify({ challenge }), { "content-type": "application/json" });
    }
    if (payload.type !== "event_callback") {
      acceptedSignatures.add(signature);
      return reply(res, 200);
    }
    if (!(await acceptPayload(payload))) return reply(res, 500);
    acceptedSignatures.add(signature);
    return reply(res, 200);
  };

  /** Both transports' entry: an `event_callback` handled once per event id; other payloads need nothing. */
  const acceptPayload = async (payload: Record<string, unknown>): Promise<boolean> => {
    if (payload.type !== "event_callback") return true;
    const eventId = typeof payload.event_id === "string" ? payload.event_id : undefined;
    // Once per event id: a retry waits for the attempt in flight and succeeds with it.
    if (eventId === undefined) return (await acceptEvent(payload)) !== "failed";
    return handled.once(`event:${eventId}`, () => acceptEvent(payload));
  };

  /**
   * `handled` once the message is handled (now, or before under another event: `message` and `app_mention`
   * of one mention share the message key), `ignored` when there is nothing to hand over, `failed` when the
   * handler failed.
   */
  const acceptEvent = async (payload: Record<string, unknown>): Promise<WorkOutcome> => {
    if (!identity || !handler) return "failed";
    const teamId = typeof payload.team_id === "string" ? payload.team_id : undefined;
    const normalized = normalizeSlackEvent(payload.event, identity, teamId);
    if (!normalized) return "ignored";
    const onMessage = handler;
    const key = `message:${normalized.conversation.chatId}:${normalized.messageId}`;
    const accepted = await handled.once(key, async () => {
      try {
        // The pictures are fetched only if the gateway lets the message in (loadImages), inside the once: a
        // redelivered event does not download them again.
        await onMessage(withImageLoader(normalized));
      } catch {
        return "failed";
      }
      return "handled";
    });
    return accepted ? "handled" : "failed";
  };

  const maxImageBytes = options.maxImageBytes ?? INBOUND_IMAGE_MAX_BYTES;
  /** The message with a loader of its shared pictures (`loadImages`), when it has any. */
  const withImageLoader = (message: InboundMessage): InboundMessage => {
    if (maxImageBytes <= 0 || !message.media.some((item) => item.kind === "image")) return message;
    const loadImages = () =>
      downloadSlackImages(message.media, {
        botToken: options.botToken,
        apiBaseUrl: options.apiBaseUrl ?? DEFAULT_SLACK_API_BASE_URL,
        maxBytes: maxImageBytes,
        signal: stopController.signal,
        onError: (error) => options.onError?.(error),
      });
    return { ...message, loadImages };
  };

  const postText = async (
    channel: string,
    text: string,
    threadTs: string | undefined,
  ): Promise<SentMessage> => {
    const response = await api.call("chat.postMessage", {
      channel,
      text,
      mrkdwn: true,
      ...(threadTs !== undefined ? { thread_ts: threadTs } : {}),
    });
    return sentMessage(response, channel, threadTs);
  };

  const uploadFile = async (
    channel: string,
    item: MediaItem,
    threadTs: string | undefined,
  ): Promise<SentMessage> => {
    const bytes =
      item.data ?? (item.path !== undefined ? new Uint8Array(await readMedia(item.path)) : undefined);
    if (!bytes)
      throw new ChannelError(SLACK_CHANNEL_ID, "media item has no url, path or data", { retryable: false });
    if (bytes.length === 0)
      throw new ChannelError(SLACK_CHANNEL_ID, "media item is empty", { retryable: false });
    const filename = item.fileName ?? (item.path !== undefined ? basename(item.path) : `${item.kind}.bin`);
    const target = await api.call("files.getUploadURLExternal", { filename, length: bytes.length }, "form");
    const uploadUrl = target.upload_url;
    const fileId = target.file_id;
    if (typeof uploadUrl !== "string" || typeof fileId !== "string")
      throw new ChannelError(SLACK_CHANNEL_ID, "files.getUploadURLExternal: no upload_url/file_id", {
        retryable: false,
      });
    await api.upload(uploadUrl, bytes, item.mimeType);
    await api.call(
      "files.completeUploadExternal",
      {
        files: [{ id: fileId, title: filename }],
        channel_id: channel,
        ...(threadTs !== undefined ? { thread_ts: threadTs } : {}),
        ...(item.caption
          ? { initial_comment: markdownToSlackMrkdwn(item.caption).slice(0, SLACK_MAX_TEXT_LENGTH) }
          : {}),
      },
      "form",
    );
    return { messageId: fileId, chatId: channel, ...(threadTs !== undefined ? { threadId: threadTs } : {}) };
  };

  const adapter: SlackChannel = {
    id: SLACK_CHANNEL_ID,
    accountId,
    capabilities,
    get endpointUrl() {
      return endpointUrl;
    },
    get identity() {
      return identity;
    },

    async start(startOptions: ChannelStartOptions): Promise<void> {
      if (server || socketClient) throw new Error("slack: already started");
      if (stopping) throw new Error("slack: a stopped adapter cannot be restarted; create a new one");
      const auth = await api.call("auth.test");
      const botUserId = typeof auth.user_id === "string" ? auth.user_id : undefined;
      if (!botUserId)
        throw new ChannelError(SLACK_CHANNEL_ID, "auth.test returned no user_id", { retryable: false });
      identity = {
        accountId,
        botUserId,
        ...(typeof auth.bot_id === "string" ? { botId: auth.bot_id } : {}),
        ...(typeof auth.team_id === "string" ? { teamId: auth.team_id } : {}),
        ...(options.allowBots !== undefined ? { allowBots: options.allowBots } : {}),
      };
      handler = startOptions.onMessage;
      startOptions.signal?.addEventListener("abort", () => void adapter.stop(), { once: true });
      if (mode === "socket") {
        const appApi = new SlackWebApi({
          botToken: options.appToken ?? "",
          signal: stopController.signal,
          ...(options.apiBaseUrl !== undefined ? { apiBaseUrl: options.apiBaseUrl } : {}),
        });
        socketClient = new SocketModeClient({
          appApi,
          onEvent: (payload) => acceptPayload(payload),
          ...(options.reconnectDelayMs !== undefined ? { reconnectDelayMs: options.reconnectDelayMs } : {}),
        });
        await socketClient.start();
        return;
      }
      const listening = createServer((req, res) => {
        const work = handleRequest(req, res).catch(() => {
          if (!res.headersSent) reply(res, 500);
        });
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
      });
      await new Promise<void>((resolve, reject) => {
        listening.once("error", reject);
        listening.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
          listening.off("error", reject);
          resolve();
        });
      });
      server = listening;
      const address = listening.address() as AddressInfo;
      const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
      endpointUrl = `http://${host}:${address.port}${path}`;
    },

    stop(): Promise<void> {
      stopping ??= (async () => {
        stopController.abort();
        await socketClient?.stop();
        const closing = server;
        if (closing) {
          await new Promise<void>((resolve) => {
            closing.close(() => resolve());
            closing.closeIdleConnections();
          });
        }
        await Promise.allSettled([...inFlight]);
      })();
      return stopping;
    },

    async send(message: OutboundMessage): Promise<SendResult> {
      const { target } = message;
      const threadTs = threadOf(target);
      const sent: SentMessage[] = [];
      const media = message.media ?? [];
      const text = message.text?.trim() ? message.text : "";
      const limit = resolveMaxMessagesPerReply(maxMessagesPerReply, message.maxMessages);
      const plan = planReplyMessages({
        text,
        chunks: text === "" ? [] : formatSlackChunks(text, textChunkLimit, options.chunkMode ?? "length"),
        maxMessages: textMessageBudget(limit, media.length),
        canAttachFiles: true,
      });
      for (const chunk of plan.chunks) sent.push(await postText(target.chatId, chunk, threadTs));
      if (plan.kind === "attached") sent.push(await uploadFile(target.chatId, plan.file, threadTs));
      else if (plan.kind === "truncated")
        for (const chunk of formatSlackChunks(plan.notice, textChunkLimit))
          sent.push(await postText(target.chatId, chunk, threadTs));
      for (const item of media) {
        if (item.url !== undefined && item.data === undefined && item.path === undefined) {
          sent.push(await postText(target.chatId, mediaLink(item), threadTs));
        } else {
          sent.push(await uploadFile(target.chatId, item, threadTs));
        }
      }
      return plan.kind === "all" ? { messages: sent } : { messages: sent, limited: plan.report };
    },

    async sendTyping(_target: OutboundTarget): Promise<void> {
      // Slack gives bots no typing indicator (RTM's `typing` went with classic apps); nothing to do.
    },

    async edit(target: OutboundTarget, messageId: string, text: string): Promise<void> {
      const formatted = markdownToSlackMrkdwn(text);
      if (formatted.length > SLACK_MAX_TEXT_LENGTH)
        throw new ChannelError(
          SLACK_CHANNEL_ID,
          `edit: text is ${formatted.length} characters, Slack allows ${SLACK_MAX_TEXT_LENGTH}`,
          {
            retryable: false,
          },
        );
      await api.call("chat.update", { channel: target.chatId, ts: messageId, text: formatted });
    },
  };
  return adapter;
}

/** Replies go into the inbound thread; `replyToMessageId` (a message ts) starts or joins that message's thread. */
function threadOf(target: OutboundTarget): string | undefined {
  return target.threadId ?? target.replyToMessageId;
}

function mediaLink(item: MediaItem): string {
  const url = (item.url ?? "").replace(/&/g, "&amp;").replace(/[<>|]/g, encodeURIComponent);
  const label = item.fileName ? `<${url}|${escapeSlackText(item.fileName).replace(/\|/g, "¦")}>` : `<${url}>`;
  return item.caption ? `${markdownToSlackMrkdwn(item.caption)}\n${label}` : label;
}

function sentMessage(response: SlackApiResponse, channel: string, threadTs: string | undefined): SentMessage {
  const ts = response.ts;
  if (typeof ts !== "string")
    throw new ChannelError(SLACK_CHANNEL_ID, "chat.postMessage returned no ts", { retryable: false });
  const chatId = typeof response.channel === "string" ? response.channel : channel;
  return { messageId: ts, chatId, ...(threadTs !== undefined ? { threadId: threadTs } : {}) };
}

async function readMedia(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (cause) {
    throw new ChannelError(SLACK_CHANNEL_ID, `cannot read media file ${path}`, { retryable: false, cause });
  }
}

function reply(
  res: ServerResponse,
  status: number,
  body?: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "cache-control": "no-store", ...headers });
  res.end(body);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
