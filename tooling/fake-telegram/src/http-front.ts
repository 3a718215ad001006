// The HTTP front of the fake Bot API: the server on 127.0.0.1, `GET|POST /bot<token>/<method>` routing (method
// names in any letter case, 404 for unknown paths and methods, 401 for a wrong token), fault injection before
// the method runs, errors turned into Telegram's JSON envelope, and the sockets `close` destroys. Owns routing
// and the method table (getMe answered here); does not own what the methods do (message-methods.ts,
// file-methods.ts, update-queue.ts) or the control API (server.ts).
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { ApiError } from "./api-error.ts";
import type { CallLog, RecordedCall } from "./call-log.ts";
import type { ChatStore } from "./chat-store.ts";
import { type FaultQueue, serveFault } from "./faults.ts";
import { getFile, sendMedia } from "./file-methods.ts";
import type { FileStore } from "./file-store.ts";
import { editMessageText, sendChatAction, sendMessage } from "./message-methods.ts";
import { BadParamError, type CallParams, readCallParams } from "./request-body.ts";
import type { TgUser } from "./types.ts";
import type { UpdateQueue } from "./update-queue.ts";

const METHODS = [
  "getMe",
  "getUpdates",
  "sendMessage",
  "sendPhoto",
  "sendDocument",
  "sendAudio",
  "sendVoice",
  "sendVideo",
  "sendSticker",
  "sendChatAction",
  "editMessageText",
  "deleteWebhook",
  "setWebhook",
  "getWebhookInfo",
  "getFile",
] as const;
type MethodName = (typeof METHODS)[number];
const METHOD_BY_LOWER = new Map<string, MethodName>(METHODS.map((name) => [name.toLowerCase(), name]));

/** Everything a call can touch. */
export interface BotApiState {
  readonly token: string;
  readonly bot: TgUser;
  readonly log: CallLog;
  readonly faults: FaultQueue;
  readonly chats: ChatStore;
  readonly files: FileStore;
  readonly updates: UpdateQueue;
}

export interface BotApiFront {
  readonly port: number;
  /** Stops listening and destroys every connection (waiting long polls included). Idempotent. */
  close(): Promise<void>;
}

/** Starts the HTTP server on 127.0.0.1 (`port` 0: a free one). */
export async function listenBotApi(state: BotApiState, port: number): Promise<BotApiFront> {
  const sockets = new Set<Socket>();
  let closed = false;
  const server = http.createServer((req, res) => {
    handle(state, req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            ok: false,
            error_code: 500,
            description: `Internal Server Error: ${String(error)}`,
          }),
        );
      }
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function handle(
  state: BotApiState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const { log } = state;
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
  if (download !== null) return serveFileDownload(state, req, res, download[1] ?? "", download[2] ?? "");
  const match = /^\/bot([^/]+)\/([A-Za-z]+)\/?$/.exec(url.pathname);
  let params: CallParams;
  try {
    params = await readCallParams(req, url.searchParams);
  } catch (error) {
    params = { values: {}, files: [], contentType: req.headers["content-type"] ?? "" };
    if (match === null || !(error instanceof BadParamError)) throw error;
    const call = log.record(match[2] ?? "", req, params);
    log.answer(res, call, { ok: false, error_code: 400, description: error.message });
    return;
  }
  if (match === null) {
    const call = log.record("", req, params);
    log.answer(res, call, { ok: false, error_code: 404, description: "Not Found" });
    return;
  }
  const [, requestToken = "", rawMethod = ""] = match;
  const method = METHOD_BY_LOWER.get(rawMethod.toLowerCase());
  const call = log.record(method ?? rawMethod, req, params);
  const fault = state.faults.take(call.method);
  if (fault !== undefined) return serveFault(fault, res, call, log);
  if (requestToken !== state.token) {
    log.answer(res, call, { ok: false, error_code: 401, description: "Unauthorized" });
    return;
  }
  try {
    const result = run(state, method, params, res, call);
    if (result !== undefined) log.answer(res, call, { ok: true, result: result.value });
  } catch (error) {
    if (error instanceof ApiError) {
      log.answer(res, call, {
        ok: false,
        error_code: error.code,
        description: error.message,
        ...(error.retryAfter === undefined ? {} : { parameters: { retry_after: error.retryAfter } }),
      });
      return;
    }
    if (error instanceof BadParamError) {
      log.answer(res, call, { ok: false, error_code: 400, description: error.message });
      return;
    }
    throw error;
  }
}

/**
 * `GET /file/bot<token>/<file_path>`: a file's bytes, as Telegram serves a getFile path (plain bytes, not the
 * JSON envelope; 401 for a wrong token, 404 for a path the fake has no bytes for). Recorded as `downloadFile`.
 */
function serveFileDownload(
  state: BotApiState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  token: string,
  filePath: string,
): void {
  const call = state.log.record("downloadFile", req, {
    values: { file_path: filePath },
    files: [],
    contentType: "",
  });
  if (token !== state.token) {
    call.served = "error:401";
    res.writeHead(401, { "content-type": "text/plain" }).end("Unauthorized");
    return;
  }
  const fileId = /^files\/(.+)$/.exec(filePath)?.[1];
  const bytes = fileId === undefined ? undefined : state.files.bytesOf(fileId);
  if (bytes === undefined) {
    call.served = "error:404";
    res.writeHead(404, { "content-type": "text/plain" }).end("Not Found");
    return;
  }
  call.served = "ok";
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length });
  res.end(Buffer.from(bytes));
}

/** Runs a method; undefined when the method answers by itself later (a waiting long poll). */
function run(
  state: BotApiState,
  method: MethodName | undefined,
  params: CallParams,
  res: http.ServerResponse,
  call: RecordedCall,
): { value: unknown } | undefined {
  const { values } = params;
  switch (method) {
    case "getMe":
      // every field of today's UserFromGetMe (@grammyjs/types 5); the optional supports_guest_queries is
      // left out, as Telegram leaves out optional booleans that are false
      return {
        value: {
          ...state.bot,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
          can_connect_to_business: false,
          has_main_web_app: false,
          has_topics_enabled: false,
          allows_users_to_create_topics: false,
          can_manage_bots: false,
          supports_join_request_queries: false,
        },
      };
    case "getUpdates":
      state.updates.getUpdates(values, res, call);
      return undefined;
    case "sendMessage":
      return { value: sendMessage(values, state) };
    case "sendPhoto":
    case "sendDocument":
    case "sendAudio":
    case "sendVoice":
    case "sendVideo":
    case "sendSticker":
      return { value: sendMedia(method, params, state) };
    case "sendChatAction":
      return { value: sendChatAction(values, state) };
    case "editMessageText":
      return { value: editMessageText(values, state) };
    case "deleteWebhook":
      return { value: state.updates.deleteWebhookMethod(values) };
    case "setWebhook":
      return { value: state.updates.setWebhookMethod(values) };
    case "getWebhookInfo":
      return { value: state.updates.webhookInfo() };
    case "getFile":
      return { value: getFile(values, state.files) };
    default:
      throw new ApiError(404, "Not Found");
  }
}
