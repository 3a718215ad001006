// The record of every call the fake received (`calls`, and `sent`: what the bot sent) and the one way a call is
// answered with Telegram's JSON envelope, so the record always holds what the client got and `waitForCall`
// resolves only once the answer is written. Owns recording, answering and call waiters; does not own routing
// (http-front.ts) or what a method answers.
import type http from "node:http";
import type { CallParams, UploadedFile } from "./request-body.ts";
import type { TgResponse } from "./types.ts";

/** One received call, in arrival order. */
export interface RecordedCall {
  readonly index: number;
  /** The method as Telegram resolves it (lower-cased name mapped to its canonical spelling). */
  readonly method: string;
  readonly httpMethod: string;
  readonly contentType: string;
  /** The decoded parameters (files excluded). */
  readonly params: Record<string, unknown>;
  readonly files: readonly UploadedFile[];
  /** `ok`, `error:<code>` or `reset`. */
  served: string;
  /** The JSON answer, when one was written. */
  response?: TgResponse;
  readonly receivedAt: number;
}

/** The methods that are not the bot sending something: left out of `sent`. */
const NOT_SENT = new Set<string>([
  "getUpdates",
  "getMe",
  "deleteWebhook",
  "setWebhook",
  "getWebhookInfo",
  "getFile",
  "downloadFile",
]);

export class CallLog {
  /** Every call received (getUpdates included), arrival order; a live array. */
  readonly calls: RecordedCall[] = [];
  /** Every call except getUpdates, getMe, getFile, file downloads and the webhook methods. */
  readonly sent: RecordedCall[] = [];
  readonly #listeners = new Set<(call: RecordedCall) => void>();

  record(method: string, req: http.IncomingMessage, params: CallParams): RecordedCall {
    const call: RecordedCall = {
      index: this.calls.length,
      method,
      httpMethod: req.method ?? "GET",
      contentType: params.contentType,
      params: params.values,
      files: params.files,
      served: "pending",
      receivedAt: Date.now(),
    };
    this.calls.push(call);
    if (!NOT_SENT.has(method)) this.sent.push(call);
    return call;
  }

  /** Writes `body` as the call's answer (unless the client is gone), records it and wakes the waiters. */
  answer(res: http.ServerResponse, call: RecordedCall, body: TgResponse): void {
    call.served = body.ok ? "ok" : `error:${body.error_code}`;
    call.response = body;
    if (!res.headersSent && !res.destroyed) {
      const text = JSON.stringify(body);
      res.writeHead(body.ok ? 200 : body.error_code, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    }
    this.notify(call);
  }

  /** Wakes the waiters for a call answered some other way (a fault's HTML page or reset). */
  notify(call: RecordedCall): void {
    for (const listener of [...this.#listeners]) listener(call);
  }

  /** Resolves with the next call of `method` that is answered after this call. */
  waitForCall(method: string, predicate?: (call: RecordedCall) => boolean): Promise<RecordedCall> {
    return new Promise((resolve) => {
      const listener = (call: RecordedCall): void => {
        if (call.method.toLowerCase() !== method.toLowerCase()) return;
        if (predicate !== undefined && !predicate(call)) return;
        this.#listeners.delete(listener);
        resolve(call);
      };
      this.#listeners.add(listener);
    });
  }

  clear(): void {
    this.calls.length = 0;
    this.sent.length = 0;
  }
}
