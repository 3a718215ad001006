// The fake Slack: a real HTTP server on 127.0.0.1 speaking the Slack Web API wire format (`POST /api/<method>`,
// Bearer token, form or JSON bodies, `{ok:true,…}` / `{ok:false,error}` with HTTP 200, HTTP 429 + `Retry-After`)
// and an Events API sender that POSTs signed `event_callback`s to an endpoint. Owns: the subset of methods the
// adapter uses (auth.test, chat.postMessage, chat.update, the files.uploadV2 flow, files.upload,
// reactions.add), Socket Mode (apps.connections.open with the app token, a WebSocket that carries `hello`,
// `events_api` envelopes and `disconnect`, and the client's acks), fault injection and a record of every call.
// Does not own any adapter logic.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { signSlackRequest } from "./signing.ts";
import { acceptWebSocket, type ServerWebSocket } from "./websocket.ts";

/** Slack's hard limit on `text` in chat.postMessage / chat.update. */
export const SLACK_MAX_TEXT = 40_000;

export type SlackParams = Record<string, unknown>;

export interface RecordedCall {
  readonly method: string;
  readonly params: SlackParams;
  /** The token the caller presented (Bearer header, else the `token` parameter). */
  readonly token: string | undefined;
  readonly contentType: string;
  /** What the fake answered. */
  readonly status: number;
  readonly response: SlackParams;
}

export interface PostedMessage {
  readonly channel: string;
  readonly ts: string;
  text: string;
  readonly threadTs?: string;
  readonly blocks?: unknown;
  readonly mrkdwn?: boolean;
  readonly edits: string[];
}

export interface UploadedFile {
  readonly id: string;
  readonly filename: string;
  readonly length: number;
  bytes?: Uint8Array;
  title?: string;
  channel?: string;
  threadTs?: string;
  initialComment?: string;
  completed: boolean;
}

/** A fault for the next matching call(s). */
export type SlackFault =
  | { readonly kind: "rate-limited"; readonly retryAfterSeconds?: number }
  | { readonly kind: "server-error"; readonly status?: number }
  | { readonly kind: "error"; readonly error: string };

export interface FakeSlackOptions {
  readonly botToken?: string;
  /** The app-level token (`xapp-…`) Socket Mode's apps.connections.open requires. */
  readonly appToken?: string;
  readonly botUserId?: string;
  readonly botId?: string;
  readonly teamId?: string;
  readonly appId?: string;
  /** The app's signing secret, used by `deliverEvent`. */
  readonly signingSecret?: string;
}

export interface DeliverOptions {
  readonly eventId?: string;
  /** Request timestamp in seconds (default now): an old one makes a stale request. */
  readonly timestampSeconds?: number;
  /** Sign with this secret instead of the app's (a forged request). */
  readonly forgeWithSecret?: string;
  /** Send exactly this signature header. */
  readonly signature?: string;
  /** `X-Slack-Retry-Num` (and `X-Slack-Retry-Reason: http_timeout`). */
  readonly retryNum?: number;
  /** Send this raw body instead of the envelope built from the event. */
  readonly rawBody?: string;
}

export interface DeliveryResult {
  readonly status: number;
  readonly body: string;
  readonly eventId: string;
  /** The exact request sent, so a test can replay it byte for byte. */
  readonly request: { readonly body: string; readonly headers: Readonly<Record<string, string>> };
}

export interface SocketDeliverOptions {
  readonly eventId?: string;
  readonly retryAttempt?: number;
  /** How long to wait for the client's ack (default 10 s). */
  readonly ackTimeoutMs?: number;
}

export interface SocketAck {
  readonly envelopeId: string;
  readonly eventId: string;
}

export interface FakeSlack {
  /** Base URL of the Web API, ending in `/api/`: `${apiBaseUrl}chat.postMessage`. */
  readonly apiBaseUrl: string;
  readonly origin: string;
  readonly botToken: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly teamId: string;
  readonly signingSecret: string;
  readonly appToken: string;
  readonly calls: readonly RecordedCall[];
  /** Socket Mode connections opened so far (reconnects count). */
  readonly socketConnections: number;
  /** Socket Mode connections open now. */
  readonly openSockets: number;
  readonly messages: readonly PostedMessage[];
  readonly files: readonly UploadedFile[];
  /** Calls of one method. */
  callsTo(method: string): RecordedCall[];
  /** Fails the next `times` (default 1) calls of `method` (or of any method with `*`). */
  failNext(method: string, fault: SlackFault, times?: number): void;
  /** POSTs a signed `event_callback` wrapping `event` to `url`. */
  deliverEvent(url: string, event: SlackParams, options?: DeliverOptions): Promise<DeliveryResult>;
  /** POSTs a signed `url_verification` challenge. */
  sendUrlVerification(url: string, challenge: string, options?: DeliverOptions): Promise<DeliveryResult>;
  /** Sends an `events_api` envelope over the newest Socket Mode connection; resolves with the client's ack. */
  deliverSocketEvent(event: SlackParams, options?: SocketDeliverOptions): Promise<SocketAck>;
  /** Waits until a Socket Mode connection is open (default 10 s). */
  waitForSocket(timeoutMs?: number): Promise<void>;
  /** Sends `disconnect` (Slack's refresh) on every open connection and closes them. */
  disconnectSockets(reason?: string): void;
  /** Re-sends a request exactly as it was (a replay attack). */
  replay(url: string, request: DeliveryResult["request"]): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

const METHODS_WITHOUT_AUTH = new Set<string>();

export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const botToken = options.botToken ?? "xoxb-fake-bot-token";
  const botUserId = options.botUserId ?? "UBOT0001";
  const botId = options.botId ?? "BBOT0001";
  const teamId = options.teamId ?? "T0FAKE01";
  const appId = options.appId ?? "A0FAKE01";
  const signingSecret = options.signingSecret ?? "fake-signing-secret";
  const appToken = options.appToken ?? "xapp-fake-app-token";
  const sockets: ServerWebSocket[] = [];
  const pendingAcks = new Map<string, (ack: SocketAck) => void>();
  const socketWaiters: (() => void)[] = [];
  let socketConnections = 0;
  let envelopeCounter = 0;
  const calls: RecordedCall[] = [];
  const messages: PostedMessage[] = [];
  const files: UploadedFile[] = [];
  const faults: { method: string; fault: SlackFault; remaining: number }[] = [];
  let tsCounter = 0;
  let fileCounter = 0;
  let eventCounter = 0;
  let origin = "";

  const nextTs = (): string => {
    tsCounter++;
    return `${1_700_000_000 + tsCounter}.${String(tsCounter).padStart(6, "0")}`;
  };

  const takeFault = (method: string): SlackFault | undefined => {
    const index = faults.findIndex((f) => f.method === method || f.method === "*");
    const entry = faults[index];
    if (!entry) return undefined;
    entry.remaining--;
    if (entry.remaining <= 0) faults.splice(index, 1);
    return entry.fault;
  };

  const handleMethod = (method: string, params: SlackParams, token: string | undefined): SlackParams => {
    if (method === "apps.connections.open") {
      if (!token) return { ok: false, error: "not_authed" };
      if (token === botToken) return { ok: false, error: "not_allowed_token_type" };
      if (token !== appToken) return { ok: false, error: "invalid_auth" };
      return { ok: true, url: `${origin.replace(/^http/, "ws")}/socket/${randomBytes(6).toString("hex")}` };
    }
    if (!METHODS_WITHOUT_AUTH.has(method)) {
      if (!token) return { ok: false, error: "not_authed" };
      if (token !== botToken) return { ok: false, error: "invalid_auth" };
    }
    switch (method) {
      case "auth.test":
        return {
          ok: true,
          url: "https://fake.slack.com/",
          team: "Fake Team",
          user: "bot",
          team_id: teamId,
          user_id: botUserId,
          bot_id: botId,
        };
      case "chat.postMessage": {
        const channel = stringParam(params, "channel");
        const text = stringParam(params, "text");
        if (!channel) return { ok: false, error: "channel_not_found" };
        const invalid = invalidJsonFields(params);
        if (invalid) return { ok: false, error: invalid };
        if (!text && params.blocks === undefined && params.attachments === undefined)
          return { ok: false, error: "no_text" };
        if (text && text.length > SLACK_MAX_TEXT) return { ok: false, error: "msg_too_long" };
        const threadTs = stringParam(params, "thread_ts");
        const ts = nextTs();
        const message: PostedMessage = {
          channel,
          ts,
          text: text ?? "",
          edits: [],
          ...(threadTs ? { threadTs } : {}),
          ...(params.blocks !== undefined ? { blocks: params.blocks } : {}),
          ...(params.mrkdwn !== undefined
            ? { mrkdwn: params.mrkdwn !== false && params.mrkdwn !== "false" }
            : {}),
        };
        messages.push(message);
        return {
          ok: true,
          channel,
          ts,
          message: {
            type: "message",
            text: message.text,
            user: botUserId,
            bot_id: botId,
            ts,
            ...(threadTs ? { thread_ts: threadTs } : {}),
            ...(params.blocks !== undefined ? { blocks: params.blocks } : {}),
          },
        };
      }
      case "chat.update": {
        const channel = stringParam(params, "channel");
        const ts = stringParam(params, "ts");
        const text = stringParam(params, "text") ?? "";
        const message = messages.find((m) => m.channel === channel && m.ts === ts);
        if (!message) return { ok: false, error: "message_not_found" };
        const invalid = invalidJsonFields(params);
        if (invalid) return { ok: false, error: invalid };
        if (text.length > SLACK_MAX_TEXT) return { ok: false, error: "msg_too_long" };
        message.edits.push(text);
        message.text = text;
        return { ok: true, channel, ts, text };
      }
      case "files.getUploadURLExternal": {
        const filename = stringParam(params, "filename");
        const length = Number(params.length);
        if (!filename) return { ok: false, error: "invalid_arguments" };
        if (!Number.isInteger(length) || length <= 0) return { ok: false, error: "invalid_arguments" };
        fileCounter++;
        const id = `F${String(fileCounter).padStart(8, "0")}`;
        files.push({ id, filename, length, completed: false });
        return { ok: true, upload_url: `${origin}/upload/${id}`, file_id: id };
      }
      case "files.completeUploadExternal": {
        const list = parseJsonParam(params.files);
        if (!Array.isArray(list) || list.length === 0) return { ok: false, error: "invalid_arguments" };
        const completed: SlackParams[] = [];
        for (const item of list) {
          const id = typeof item === "object" && item !== null ? (item as SlackParams).id : undefined;
          const file = files.find((f) => f.id === id);
          if (!file?.bytes) return { ok: false, error: "file_not_found" };
          if (file.bytes.length !== file.length) return { ok: false, error: "file_upload_size_mismatch" };
          const title = (item as SlackParams).title;
          if (typeof title === "string") file.title = title;
          const channel = stringParam(params, "channel_id");
          if (channel) file.channel = channel;
          const threadTs = stringParam(params, "thread_ts");
          if (threadTs) file.threadTs = threadTs;
          const comment = stringParam(params, "initial_comment");
          if (comment) file.initialComment = comment;
          file.completed = true;
          completed.push({ id: file.id, title: file.title ?? file.filename });
        }
        return { ok: true, files: completed };
      }
      case "files.upload": {
        const filename = stringParam(params, "filename") ?? "file";
        const content = stringParam(params, "content") ?? "";
        fileCounter++;
        const id = `F${String(fileCounter).padStart(8, "0")}`;
        const bytes = new TextEncoder().encode(content);
        const channel = stringParam(params, "channels");
        const threadTs = stringParam(params, "thread_ts");
        files.push({
          id,
          filename,
          length: bytes.length,
          bytes,
          completed: true,
          ...(channel ? { channel } : {}),
          ...(threadTs ? { threadTs } : {}),
        });
        return { ok: true, file: { id, name: filename } };
      }
      case "reactions.add": {
        const channel = stringParam(params, "channel");
        const ts = stringParam(params, "timestamp");
        const name = stringParam(params, "name");
        if (!channel || !ts || !name) return { ok: false, error: "invalid_arguments" };
        return { ok: true };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  };

  const server: Server = createServer((req, res) => {
    readBody(req)
      .then((body) => route(req, res, body))
      .catch(() => {
        if (!res.headersSent) res.writeHead(400);
        res.end();
      });
  });

  const route = async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    const url = new URL(req.url ?? "/", origin);
    if (url.pathname.startsWith("/upload/") && req.method === "POST") {
      const file = files.find((f) => f.id === url.pathname.slice("/upload/".length));
      if (!file) {
        res.writeHead(404).end();
        return;
      }
      // Slack's upload URL takes the file as the raw body or as a multipart form (what @slack/web-api's
      // filesUploadV2 sends): the stored bytes are the file's, never the multipart envelope around them
      const bytes = await uploadedBytes(req.headers["content-type"] ?? "", body);
      if (bytes === undefined) {
        res.writeHead(400, { "content-type": "text/plain" }).end("no file in the multipart body");
        return;
      }
      file.bytes = bytes;
      res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${bytes.length}`);
      return;
    }
    if (!url.pathname.startsWith("/api/") || req.method !== "POST") {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ ok: false, error: "unknown_method" }));
      return;
    }
    const method = url.pathname.slice("/api/".length);
    const contentType = req.headers["content-type"] ?? "";
    let params: SlackParams;
    try {
      params = parseParams(contentType, body.toString("utf8"));
    } catch {
      respond(res, method, {}, undefined, contentType, 200, { ok: false, error: "invalid_json" });
      return;
    }
    const authHeader = req.headers.authorization;
    const token = authHeader?.startsWith("Bearer ")
      ? authHeader.slice("Bearer ".length)
      : stringParam(params, "token");
    const fault = takeFault(method);
    if (fault?.kind === "rate-limited") {
      const seconds = fault.retryAfterSeconds ?? 1;
      respond(
        res,
        method,
        params,
        token,
        contentType,
        429,
        { ok: false, error: "ratelimited" },
        {
          "retry-after": String(seconds),
        },
      );
      return;
    }
    if (fault?.kind === "server-error") {
      respond(res, method, params, token, contentType, fault.status ?? 500, {
        ok: false,
        error: "internal_error",
      });
      return;
    }
    if (fault?.kind === "error") {
      respond(res, method, params, token, contentType, 200, { ok: false, error: fault.error });
      return;
    }
    respond(res, method, params, token, contentType, 200, handleMethod(method, params, token));
  };

  const respond = (
    res: ServerResponse,
    method: string,
    params: SlackParams,
    token: string | undefined,
    contentType: string,
    status: number,
    response: SlackParams,
    headers: Record<string, string> = {},
  ): void => {
    calls.push({ method, params, token, contentType, status, response });
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(response));
  };

  server.on("upgrade", (req, socket) => {
    if (!(req.url ?? "").startsWith("/socket/")) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
      return;
    }
    const connection = acceptWebSocket(req, socket, {
      onText: (text) => {
        let message: unknown;
        try {
          message = JSON.parse(text);
        } catch {
          return;
        }
        const envelopeId =
          typeof message === "object" && message !== null ? (message as SlackParams).envelope_id : undefined;
        if (typeof envelopeId !== "string") return;
        const resolve = pendingAcks.get(envelopeId);
        pendingAcks.delete(envelopeId);
        resolve?.({ envelopeId, eventId: envelopeEvents.get(envelopeId) ?? "" });
      },
      onClose: () => {
        const index = connection ? sockets.indexOf(connection) : -1;
        if (index !== -1) sockets.splice(index, 1);
      },
    });
    if (!connection) return;
    sockets.push(connection);
    socketConnections++;
    connection.send(
      JSON.stringify({ type: "hello", num_connections: sockets.length, connection_info: { app_id: appId } }),
    );
    for (const wake of socketWaiters.splice(0)) wake();
  });
  const envelopeEvents = new Map<string, string>();

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;

  const post = async (
    url: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: string }> => {
    const response = await fetch(url, { method: "POST", headers, body });
    return { status: response.status, body: await response.text() };
  };

  const signedHeaders = (
    body: string,
    contentType: string,
    deliver: DeliverOptions,
  ): Record<string, string> => {
    const timestamp = deliver.timestampSeconds ?? Math.floor(Date.now() / 1000);
    const signature =
      deliver.signature ?? signSlackRequest(deliver.forgeWithSecret ?? signingSecret, timestamp, body);
    const headers: Record<string, string> = {
      "content-type": contentType,
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": signature,
      "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    };
    if (deliver.retryNum !== undefined) {
      headers["x-slack-retry-num"] = String(deliver.retryNum);
      headers["x-slack-retry-reason"] = "http_timeout";
    }
    return headers;
  };

  const sendSigned = async (
    url: string,
    body: string,
    eventId: string,
    deliver: DeliverOptions,
  ): Promise<DeliveryResult> => {
    const headers = signedHeaders(body, "application/json", deliver);
    const result = await post(url, body, headers);
    return { ...result, eventId, request: { body, headers } };
  };

  return {
    apiBaseUrl: `${origin}/api/`,
    origin,
    botToken,
    botUserId,
    botId,
    teamId,
    signingSecret,
    appToken,
    calls,
    messages,
    files,
    callsTo: (method) => calls.filter((c) => c.method === method),
    failNext: (method, fault, times = 1) => {
      faults.push({ method, fault, remaining: times });
    },
    deliverEvent: (url, event, deliver = {}) => {
      eventCounter++;
      const eventId =
        deliver.eventId ??
        `Ev${String(eventCounter).padStart(8, "0")}${randomBytes(2).toString("hex").toUpperCase()}`;
      const body =
        deliver.rawBody ??
        JSON.stringify({
          token: "verification-token-unused",
          team_id: teamId,
          api_app_id: appId,
          event,
          type: "event_callback",
          event_id: eventId,
          event_time: Math.floor(Date.now() / 1000),
          authorizations: [{ team_id: teamId, user_id: botUserId, is_bot: true }],
        });
      return sendSigned(url, body, eventId, deliver);
    },
    sendUrlVerification: (url, challenge, deliver = {}) => {
      const body = JSON.stringify({
        token: "verification-token-unused",
        challenge,
        type: "url_verification",
      });
      return sendSigned(url, body, "", deliver);
    },
    replay: (url, request) => post(url, request.body, { ...request.headers }),
    get socketConnections() {
      return socketConnections;
    },
    get openSockets() {
      return sockets.filter((socket) => !socket.closed).length;
    },
    deliverSocketEvent: (event, deliver = {}) => {
      const socket = sockets.filter((candidate) => !candidate.closed).at(-1);
      if (!socket) return Promise.reject(new Error("fake-slack: no Socket Mode connection is open"));
      eventCounter++;
      envelopeCounter++;
      const eventId = deliver.eventId ?? `Ev${String(eventCounter).padStart(8, "0")}`;
      const envelopeId = `env-${envelopeCounter}-${randomBytes(3).toString("hex")}`;
      envelopeEvents.set(envelopeId, eventId);
      const acked = new Promise<SocketAck>((resolve, reject) => {
        const timer = setTimeout(() => {
          pendingAcks.delete(envelopeId);
          reject(new Error(`fake-slack: envelope ${envelopeId} was not acknowledged`));
        }, deliver.ackTimeoutMs ?? 10_000);
        pendingAcks.set(envelopeId, (ack) => {
          clearTimeout(timer);
          resolve(ack);
        });
      });
      socket.send(
        JSON.stringify({
          envelope_id: envelopeId,
          type: "events_api",
          accepts_response_payload: false,
          retry_attempt: deliver.retryAttempt ?? 0,
          retry_reason: deliver.retryAttempt ? "timeout" : "",
          payload: {
            token: "verification-token-unused",
            team_id: teamId,
            api_app_id: appId,
            event,
            type: "event_callback",
            event_id: eventId,
            event_time: Math.floor(Date.now() / 1000),
          },
        }),
      );
      return acked;
    },
    waitForSocket: (timeoutMs = 10_000) =>
      sockets.some((socket) => !socket.closed)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(
              () => reject(new Error("fake-slack: no Socket Mode connection")),
              timeoutMs,
            );
            socketWaiters.push(() => {
              clearTimeout(timer);
              resolve();
            });
          }),
    disconnectSockets: (reason = "refresh_requested") => {
      for (const socket of [...sockets]) {
        socket.send(JSON.stringify({ type: "disconnect", reason }));
        socket.close();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of [...sockets]) socket.terminate();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function parseParams(contentType: string, body: string): SlackParams {
  if (body.length === 0) return {};
  if (contentType.includes("application/json")) {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("not an object");
    return parsed as SlackParams;
  }
  const params: SlackParams = Object.fromEntries(new URLSearchParams(body));
  // Slack reads these form fields as JSON (clients such as @slack/web-api JSON-encode every object argument);
  // a value that is not JSON stays a string and the method answers its invalid-format error
  for (const name of JSON_FORM_FIELDS) {
    const value = params[name];
    if (typeof value !== "string") continue;
    try {
      params[name] = JSON.parse(value);
    } catch {
      // left as the string: invalidJsonFields names the error
    }
  }
  return params;
}

/** The form fields Slack decodes as JSON. */
const JSON_FORM_FIELDS = ["blocks", "attachments", "metadata", "files"] as const;

/** Slack's error for a `blocks` / `attachments` that is not a JSON array (form-encoded or not), else undefined. */
function invalidJsonFields(params: SlackParams): string | undefined {
  if (params.blocks !== undefined && !Array.isArray(parseJsonParam(params.blocks)))
    return "invalid_blocks_format";
  if (params.attachments !== undefined && !Array.isArray(parseJsonParam(params.attachments)))
    return "invalid_attachments";
  if (typeof params.blocks === "string") params.blocks = parseJsonParam(params.blocks);
  if (typeof params.attachments === "string") params.attachments = parseJsonParam(params.attachments);
  return undefined;
}

/** The file bytes of an upload-URL POST: the one file part of a multipart body, else the raw body. */
async function uploadedBytes(contentType: string, body: Buffer): Promise<Uint8Array | undefined> {
  if (!contentType.toLowerCase().startsWith("multipart/form-data")) return new Uint8Array(body);
  let form: FormData;
  try {
    form = await new Request("http://fake.invalid/", {
      method: "POST",
      headers: { "content-type": contentType },
      body,
    }).formData();
  } catch {
    return undefined;
  }
  for (const [, value] of form) {
    if (typeof value !== "string") return new Uint8Array(await value.arrayBuffer());
  }
  return undefined;
}

function stringParam(params: SlackParams, name: string): string | undefined {
  const value = params[name];
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return undefined;
}

/** Form bodies carry arrays as JSON strings (Slack's convention for `files`, `blocks`). */
function parseJsonParam(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
