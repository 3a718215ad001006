// The HTTP front of the fake Slack: the server on 127.0.0.1, routing (`POST /api/<method>`, the upload URLs, the private URLs of hosted files,
// WebSocket upgrades for Socket Mode), the caller's token (Bearer header, else the `token` parameter),
// injected faults served before a method runs (HTTP 429 + `Retry-After`, 5xx, `{ok:false,error}`), and the
// record of every call with what it was answered. Owns routing, answering and the record; does not own what a
// method does (web-api-methods.ts, file-uploads.ts, socket-mode.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { FaultQueue } from "./faults.ts";
import { type FileUploads, UPLOAD_PATH } from "./file-uploads.ts";
import { HOSTED_FILES_PATH, type HostedFiles } from "./hosted-files.ts";
import { parseParams, readBody, type SlackParams, stringParam } from "./request-params.ts";
import type { SocketMode } from "./socket-mode.ts";
import type { WebApiMethods } from "./web-api-methods.ts";

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

/** What the front routes to. */
export interface SlackApiParts {
  /** Every Web API call, appended as it is answered. */
  readonly calls: RecordedCall[];
  readonly faults: FaultQueue;
  readonly methods: WebApiMethods;
  readonly uploads: FileUploads;
  readonly hostedFiles: HostedFiles;
  readonly socketMode: SocketMode;
}

export interface SlackFront {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Drops every Socket Mode connection and HTTP connection, then stops listening. */
  close(): Promise<void>;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function listenSlackApi(parts: SlackApiParts): Promise<SlackFront> {
  let origin = "";
  const server: Server = createServer((req, res) => {
    readBody(req)
      .then((body) => route(parts, origin, req, res, body))
      .catch(() => {
        if (!res.headersSent) res.writeHead(400);
        res.end();
      });
  });
  server.on("upgrade", (req, socket) => parts.socketMode.accept(req, socket));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        parts.socketMode.terminateAll();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function route(
  parts: SlackApiParts,
  origin: string,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
): Promise<void> {
  const url = new URL(req.url ?? "/", origin);
  if (url.pathname.startsWith(UPLOAD_PATH) && req.method === "POST") {
    const fileId = url.pathname.slice(UPLOAD_PATH.length);
    await parts.uploads.receiveUpload(fileId, req.headers["content-type"] ?? "", body, res);
    return;
  }
  if (url.pathname.startsWith(HOSTED_FILES_PATH) && req.method === "GET") {
    parts.hostedFiles.serve(url.pathname, req.headers.authorization, res);
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
  const respond = (
    params: SlackParams,
    token: string | undefined,
    status: number,
    response: SlackParams,
    headers: Record<string, string> = {},
  ): void => {
    parts.calls.push({ method, params, token, contentType, status, response });
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(response));
  };
  let params: SlackParams;
  try {
    params = parseParams(contentType, body.toString("utf8"));
  } catch {
    respond({}, undefined, 200, { ok: false, error: "invalid_json" });
    return;
  }
  const authHeader = req.headers.authorization;
  const token = authHeader?.startsWith("Bearer ")
    ? authHeader.slice("Bearer ".length)
    : stringParam(params, "token");
  const fault = parts.faults.take(method);
  if (fault?.kind === "rate-limited") {
    const seconds = fault.retryAfterSeconds ?? 1;
    respond(params, token, 429, { ok: false, error: "ratelimited" }, { "retry-after": String(seconds) });
    return;
  }
  if (fault?.kind === "server-error") {
    respond(params, token, fault.status ?? 500, { ok: false, error: "internal_error" });
    return;
  }
  if (fault?.kind === "error") {
    respond(params, token, 200, { ok: false, error: fault.error });
    return;
  }
  respond(params, token, 200, parts.methods.handle(method, params, token));
}
