// Reading an HTTP request's body with a size cap, for the channels' webhook and API endpoints (Slack's Events API,
// the web chat's POST). Owns the cap and what happens to an oversized body: it is refused without reading it on,
// and the connection is closed after the refusal. Does not own the response itself (the caller answers 413 in its
// own format) nor what the body means.

import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The request's body, or `undefined` when it is larger than `limit` bytes. An oversized body is not read on: a
 * `Content-Length` above the cap is refused before any of the body is read, a longer (e.g. chunked) body stops
 * being read at the byte that crosses the cap. Either way `res` is marked `Connection: close`, so the caller's
 * refusal (413) is the last thing on that connection and Node closes it instead of draining the rest — a
 * stranger cannot make the endpoint read an endless upload, only be told no.
 */
export function readBoundedBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<Buffer | undefined> {
  const refuse = (): undefined => {
    // Stop the socket's flow and say the connection ends with the answer; Node then destroys the socket once the
    // answer is written rather than dumping the unread body to keep the connection alive.
    req.pause();
    if (!res.headersSent) res.setHeader("connection", "close");
    return undefined;
  };
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(refuse());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        detach();
        resolve(refuse());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      detach();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error): void => {
      detach();
      reject(error);
    };
    const detach = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/**
 * Marks the answer to a request that carries a body as the connection's last (`Connection: close`). Call it first
 * in a handler: whatever answers the request — a refusal sent before the body is read (401, 404, 405, 415) as
 * much as a normal reply — Node then closes the connection after the answer instead of reading the rest of an
 * unread body to keep the connection alive, which would let anyone make the endpoint read an endless upload.
 */
export function closeAfterBodyfulRequest(req: IncomingMessage, res: ServerResponse): void {
  const length = req.headers["content-length"];
  const hasBody = req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
  if (hasBody && !res.headersSent) res.setHeader("connection", "close");
}
