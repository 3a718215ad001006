// The web chat adapter: a node:http server (loopback unless `allowRemote` is passed) with the chat page, a
// token-authenticated JSON API for inbound messages (with attached pictures: inbound-images.ts) and a
// Server-Sent Events stream per conversation for the
// replies (`block`, `message`, `typing`, `edit`; heartbeats; `Last-Event-ID` resume). Owns the routes, the
// token and the adapter lifecycle, and at most `maxMessagesPerReply` messages per send (the page hosts no
// files: past it the last message says what was left out, channels-core's `planReplyMessages`). Does not own the page itself (page.ts), the event backlog
// (conversation-hub.ts), nor access control and routing (channels-core).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type ChannelAdapter,
  type ChannelCapabilities,
  ChannelError,
  type ChannelStartOptions,
  closeAfterBodyfulRequest,
  type InboundHandler,
  type MediaItem,
  type OutboundMessage,
  type OutboundTarget,
  planReplyMessages,
  readBoundedBody,
  resolveMaxMessagesPerReply,
  type SendResult,
  type SentMessage,
  toPlainText,
} from "@agent-kernel/channels-core";
import { type KernelConfig, WEBCHAT_DEFAULTS } from "@agent-kernel/config";
import { ConversationHub, sseFrame, type WebchatEvent } from "./conversation-hub.ts";
import {
  DEFAULT_WEBCHAT_MAX_IMAGE_BYTES,
  DEFAULT_WEBCHAT_MAX_IMAGES,
  imageBodyAllowance,
  parseAttachedImages,
} from "./inbound-images.ts";
import { CONTENT_SECURITY_POLICY, PAGE_CSS, PAGE_HTML, PAGE_SCRIPT } from "./page.ts";

export const WEBCHAT_CHANNEL_ID = "webchat";
/** The page has no hard limit; this bounds one message so a runaway reply cannot flood a browser. */
export const WEBCHAT_MAX_TEXT_LENGTH = 100_000;
const MAX_INBOUND_TEXT = 20_000;
const MAX_BODY_BYTES = 64 * 1024;
const CONVERSATION_ID_RE = /^[A-Za-z0-9_-]{1,80}$/;

export type WebchatChannelConfig = NonNullable<KernelConfig["channels"]["webchat"]>;

export interface WebchatChannelOptions {
  /** Bind address (default 127.0.0.1). A non-loopback address needs `allowRemote: true`. */
  readonly host?: string;
  /** Port (default 18790; 0 picks a free one, see `url`). */
  readonly port?: number;
  /** The Bearer token browsers present; a random one is generated when absent (read it from `token`). */
  readonly token?: string;
  /** Allow binding a non-loopback address: anyone who can reach it and holds the token can chat. */
  readonly allowRemote?: boolean;
  readonly accountId?: string;
  /** Events kept per conversation for `Last-Event-ID` resume (default 200). */
  readonly backlogSize?: number;
  /** Conversations kept in memory (default 1000). */
  readonly maxConversations?: number;
  /** Interval of the SSE heartbeat comments (default 15 s). */
  readonly heartbeatMs?: number;
  /**
   * Messages one reply may become (`channels.webchat.maxMessagesPerReply`, default 10). The page hosts no
   * files, so past it the last message says how much was left out (channels-core `planReplyMessages`).
   */
  readonly maxMessagesPerReply?: number;
  /** Pictures one message may attach (default 4; 0: none). They reach the model as `InboundMessage.images`. */
  readonly maxImagesPerMessage?: number;
  /** Largest attached picture, in bytes (default 6 MiB, the kernel's cap). */
  readonly maxImageBytes?: number;
}

export interface WebchatChannel extends ChannelAdapter {
  /** The token the API requires (configured or generated). */
  readonly token: string;
  /** The server's base URL once started. */
  readonly url: string | undefined;
  /** The page URL with the token in the fragment (`#token=…`), once started: what to open in a browser. */
  readonly pageUrl: string | undefined;
}

export function webchatOptionsFromConfig(
  config: WebchatChannelConfig,
  extra: Omit<WebchatChannelOptions, "host" | "port" | "token" | "maxMessagesPerReply"> = {},
): WebchatChannelOptions {
  return {
    ...extra,
    host: config.host,
    port: config.port,
    maxMessagesPerReply: config.maxMessagesPerReply,
    ...(config.token !== undefined ? { token: config.token } : {}),
  };
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare === "::1" || bare === "0:0:0:0:0:0:0:1") return true;
  const v4 = bare.startsWith("::ffff:") ? bare.slice("::ffff:".length) : bare;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export function createWebchatChannel(options: WebchatChannelOptions = {}): WebchatChannel {
  const host = options.host ?? WEBCHAT_DEFAULTS.host;
  if (!isLoopbackHost(host) && options.allowRemote !== true)
    throw new Error(
      `webchat: refusing to listen on ${host}, which is not a loopback address; pass allowRemote: true to expose the chat beyond this machine`,
    );
  if (options.token !== undefined && options.token.length === 0)
    throw new Error("webchat: token must not be empty");
  const token = options.token ?? randomBytes(24).toString("base64url");
  const tokenDigest = digest(token);
  const maxMessagesPerReply = resolveMaxMessagesPerReply(options.maxMessagesPerReply);
  const accountId = options.accountId ?? "default";
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const imageLimits = {
    maxImages: options.maxImagesPerMessage ?? DEFAULT_WEBCHAT_MAX_IMAGES,
    maxBytes: options.maxImageBytes ?? DEFAULT_WEBCHAT_MAX_IMAGE_BYTES,
  };
  const maxBodyBytes = MAX_BODY_BYTES + imageBodyAllowance(imageLimits);
  const hub = new ConversationHub({
    ...(options.backlogSize !== undefined ? { backlogSize: options.backlogSize } : {}),
    ...(options.maxConversations !== undefined ? { maxConversations: options.maxConversations } : {}),
  });
  const streams = new Set<ServerResponse>();
  const inFlight = new Set<Promise<unknown>>();
  let server: Server | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let handler: InboundHandler | undefined;
  let baseUrl: string | undefined;
  let stopping: Promise<void> | undefined;
  let counter = 0;
  const nextMessageId = (prefix: string): string =>
    `${prefix}-${Date.now().toString(36)}-${(++counter).toString(36)}`;

  const capabilities: ChannelCapabilities = {
    threads: false,
    edits: true,
    typing: true,
    media: true,
    reactions: false,
    maxTextLength: WEBCHAT_MAX_TEXT_LENGTH,
    dialect: "plain",
  };

  const authorised = (req: IncomingMessage): boolean => {
    const header = req.headers.authorization;
    if (typeof header !== "string" || !header.startsWith("Bearer ")) return false;
    // compare fixed-length digests: equal time whatever the presented token's length
    return timingSafeEqual(digest(header.slice("Bearer ".length)), tokenDigest);
  };

  const handleRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Refusals below answer before reading the body: the connection ends with them, so no body is drained.
    closeAfterBodyfulRequest(req, res);
    const url = new URL(req.url ?? "/", "http://localhost");
    const route = `${req.method ?? "GET"} ${url.pathname}`;
    switch (route) {
      case "GET /":
        return sendAsset(res, PAGE_HTML, "text/html; charset=utf-8");
      case "GET /app.js":
        return sendAsset(res, PAGE_SCRIPT, "text/javascript; charset=utf-8");
      case "GET /app.css":
        return sendAsset(res, PAGE_CSS, "text/css; charset=utf-8");
      case "GET /favicon.ico":
        return send(res, 204);
      case "POST /api/messages":
        if (!authorised(req)) return unauthorised(res);
        return acceptMessage(req, res);
      case "GET /api/events":
        if (!authorised(req)) return unauthorised(res);
        return openStream(req, res, url);
      default:
        if (url.pathname.startsWith("/api/") && !authorised(req)) return unauthorised(res);
        return send(res, 404, { error: "not found" });
    }
  };

  const acceptMessage = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!String(req.headers["content-type"] ?? "").startsWith("application/json"))
      return send(res, 415, { error: "send application/json" });
    const body = await readBoundedBody(req, res, maxBodyBytes);
    if (body === undefined) return send(res, 413, { error: `body larger than ${maxBodyBytes} bytes` });
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString("utf8"));
    } catch {
      return send(res, 400, { error: "body is not JSON" });
    }
    if (typeof payload !== "object" || payload === null)
      return send(res, 400, { error: "body must be an object" });
    const { conversationId, text, senderId, senderName, images } = payload as Record<string, unknown>;
    if (typeof conversationId !== "string" || !CONVERSATION_ID_RE.test(conversationId))
      return send(res, 400, { error: "conversationId must be 1-80 letters, digits, _ or -" });
    const attached = parseAttachedImages(images, imageLimits);
    if ("error" in attached) return send(res, 400, { error: attached.error });
    // A picture may come without words (as a photo without a caption does elsewhere).
    if (typeof text !== "string" || (text.trim().length === 0 && attached.images.length === 0))
      return send(res, 400, { error: "text must be a non-empty string (or attach an image)" });
    if (text.length > MAX_INBOUND_TEXT)
      return send(res, 400, { error: `text longer than ${MAX_INBOUND_TEXT} characters` });
    if (senderId !== undefined && (typeof senderId !== "string" || !CONVERSATION_ID_RE.test(senderId)))
      return send(res, 400, { error: "senderId must be 1-80 letters, digits, _ or -" });
    if (senderName !== undefined && (typeof senderName !== "string" || senderName.length > 200))
      return send(res, 400, { error: "senderName must be a string of at most 200 characters" });
    if (!handler) return send(res, 503, { error: "not receiving" });
    const messageId = nextMessageId("u");
    try {
      await handler({
        channel: WEBCHAT_CHANNEL_ID,
        accountId,
        messageId,
        conversation: { chatType: "direct", chatId: conversationId },
        sender: {
          id: typeof senderId === "string" ? senderId : conversationId,
          ...(typeof senderName === "string" && senderName ? { displayName: senderName } : {}),
        },
        text,
        media: attached.media,
        mentions: [],
        mentionsBot: true,
        timestamp: Date.now(),
        ...(attached.images.length > 0 ? { images: attached.images } : {}),
      });
    } catch {
      return send(res, 503, { error: "message not accepted, try again" });
    }
    return send(res, 202, { messageId });
  };

  const openStream = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const conversationId = url.searchParams.get("conversationId") ?? "";
    if (!CONVERSATION_ID_RE.test(conversationId)) {
      send(res, 400, { error: "conversationId must be 1-80 letters, digits, _ or -" });
      return;
    }
    const lastEventHeader = req.headers["last-event-id"];
    const lastEventId =
      typeof lastEventHeader === "string" && /^\d{1,15}$/.test(lastEventHeader)
        ? Number(lastEventHeader)
        : undefined;
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    res.write(": connected\n\n");
    streams.add(res);
    const unsubscribe = hub.subscribe(conversationId, (event) => res.write(sseFrame(event)), lastEventId);
    const close = (): void => {
      unsubscribe();
      streams.delete(res);
    };
    res.on("close", close);
    req.on("close", close);
  };

  const publish = (chatId: string, type: WebchatEvent["type"], data: Record<string, unknown>): void => {
    if (!CONVERSATION_ID_RE.test(chatId))
      throw new ChannelError(WEBCHAT_CHANNEL_ID, `"${chatId}" is not a conversation id`, {
        retryable: false,
      });
    hub.publish(chatId, type, data);
  };

  const adapter: WebchatChannel = {
    id: WEBCHAT_CHANNEL_ID,
    accountId,
    capabilities,
    token,
    get url() {
      return baseUrl;
    },
    get pageUrl() {
      return baseUrl === undefined ? undefined : `${baseUrl}/#token=${encodeURIComponent(token)}`;
    },

    async start(startOptions: ChannelStartOptions): Promise<void> {
      if (server) throw new Error("webchat: already started");
      if (stopping) throw new Error("webchat: a stopped adapter cannot be restarted; create a new one");
      handler = startOptions.onMessage;
      const listening = createServer((req, res) => {
        const work = handleRequest(req, res).catch(() => {
          if (!res.headersSent) send(res, 500, { error: "internal error" });
          else res.destroy();
        });
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
      });
      await new Promise<void>((resolve, reject) => {
        listening.once("error", reject);
        listening.listen(options.port ?? WEBCHAT_DEFAULTS.port, host, () => {
          listening.off("error", reject);
          resolve();
        });
      });
      server = listening;
      const address = listening.address() as AddressInfo;
      const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
      baseUrl = `http://${shownHost}:${address.port}`;
      heartbeat = setInterval(() => {
        for (const stream of streams) stream.write(": heartbeat\n\n");
      }, heartbeatMs);
      heartbeat.unref();
      startOptions.signal?.addEventListener("abort", () => void adapter.stop(), { once: true });
    },

    stop(): Promise<void> {
      stopping ??= (async () => {
        if (heartbeat) clearInterval(heartbeat);
        for (const stream of streams) stream.end();
        streams.clear();
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
      if ((message.media ?? []).some((item) => item.url === undefined))
        throw new ChannelError(
          WEBCHAT_CHANNEL_ID,
          "media needs a url: the web chat does not host uploaded files",
          {
            retryable: false,
          },
        );
      const media = (message.media ?? []).map(mediaForPage);
      // the page shows text only (never markup): Markdown markers are dropped, links become `text (url)`
      const text = message.text === undefined ? "" : toPlainText(message.text);
      if (!text.trim() && media.length === 0) return { messages: [] };
      const sent: SentMessage[] = [];
      // text past the page's bound is split plainly: the page shows plain text, there is no markup to keep whole
      const plan = planReplyMessages({
        text,
        chunks: text.length > WEBCHAT_MAX_TEXT_LENGTH ? splitPlain(text, WEBCHAT_MAX_TEXT_LENGTH) : [text],
        maxMessages: resolveMaxMessagesPerReply(maxMessagesPerReply, message.maxMessages),
        canAttachFiles: false,
      });
      const parts = plan.kind === "truncated" ? [...plan.chunks, plan.notice] : plan.chunks;
      parts.forEach((part, index) => {
        const messageId = nextMessageId(message.isBlock ? "b" : "m");
        publish(target.chatId, message.isBlock ? "block" : "message", {
          messageId,
          text: part,
          ...(index === parts.length - 1 && media.length > 0 ? { media } : {}),
          ...(target.replyToMessageId !== undefined ? { replyTo: target.replyToMessageId } : {}),
        });
        sent.push({ messageId, chatId: target.chatId });
      });
      return plan.kind === "all" ? { messages: sent } : { messages: sent, limited: plan.report };
    },

    async sendTyping(target: OutboundTarget): Promise<void> {
      publish(target.chatId, "typing", { active: true });
    },

    async edit(target: OutboundTarget, messageId: string, text: string): Promise<void> {
      publish(target.chatId, "edit", {
        messageId,
        text: toPlainText(text).slice(0, WEBCHAT_MAX_TEXT_LENGTH),
      });
    },
  };
  return adapter;
}

const SECURITY_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
} as const;

function mediaForPage(item: MediaItem): Record<string, string> {
  return {
    kind: item.kind,
    url: item.url ?? "",
    ...(item.fileName !== undefined ? { fileName: item.fileName } : {}),
    ...(item.caption !== undefined ? { caption: item.caption } : {}),
  };
}

function splitPlain(text: string, limit: number): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += limit) parts.push(text.slice(at, at + limit));
  return parts;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

function sendAsset(res: ServerResponse, body: string, contentType: string): void {
  res.writeHead(200, { ...SECURITY_HEADERS, "content-type": contentType, "cache-control": "no-store" });
  res.end(body);
}

function send(res: ServerResponse, status: number, body?: Record<string, unknown>): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "cache-control": "no-store",
    ...(body !== undefined ? { "content-type": "application/json; charset=utf-8" } : {}),
  });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

/** 401 with no detail: the caller learns nothing about why. */
function unauthorised(res: ServerResponse): void {
  res.writeHead(401, { ...SECURITY_HEADERS, "www-authenticate": "Bearer", "cache-control": "no-store" });
  res.end();
}
