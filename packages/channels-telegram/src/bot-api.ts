// The Bot API client: one `POST <apiBaseUrl>/bot<token>/<method>` per call, JSON bodies or multipart when a
// file is uploaded, Telegram's `{ok,result}` / `{ok:false,error_code,description,parameters}` envelope turned
// into a result or a `ChannelError` (status, `retry_after` → `retryAfterMs`, retryable for 429 / 5xx /
// network failures, not for other 4xx), and the retry loop: `retry_after` honoured exactly, 5xx and resets
// retried with exponential backoff, every wait abortable. Owns HTTP; the token never appears in an error.
// Does not own what is called (channel.ts, polling.ts).
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { abortableSleep, ChannelError } from "@agent-kernel/channels-core";

export const CHANNEL_ID = "telegram";
export const DEFAULT_API_BASE_URL = "https://api.telegram.org";

/** A file to upload in a multipart request. Exactly one of `path` or `data`. */
export interface UploadFile {
  readonly path?: string;
  readonly data?: Uint8Array;
  readonly fileName?: string;
  readonly mimeType?: string;
}

export interface RetryPolicy {
  /** Attempts per call, the first included (default 4). */
  readonly maxAttempts?: number;
  /** The first backoff for 5xx / network failures (default 500 ms), doubled per attempt. */
  readonly baseDelayMs?: number;
  /** The backoff cap (default 10 s). */
  readonly maxDelayMs?: number;
  /** A 429 asking to wait longer than this fails at once instead of waiting (default 60 s). */
  readonly maxRetryAfterMs?: number;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  readonly files?: Readonly<Record<string, UploadFile>>;
  /** Default true; getUpdates does its own (it must notice `stop()` between attempts). */
  readonly retry?: boolean;
}

interface Envelope {
  ok?: unknown;
  result?: unknown;
  error_code?: unknown;
  description?: unknown;
  parameters?: { retry_after?: unknown };
}

/** Telegram's "can't parse entities" answer: the formatted text was refused (retry another way). */
export function isParseEntitiesError(error: unknown): boolean {
  return (
    error instanceof ChannelError &&
    error.status === 400 &&
    /can't parse entities|parse entities|find end of the entity/i.test(error.message)
  );
}

export class TelegramBotApi {
  readonly #base: string;
  readonly #token: string;
  readonly #retry: Required<RetryPolicy>;

  constructor(options: { token: string; apiBaseUrl?: string; retry?: RetryPolicy }) {
    if (typeof options.token !== "string" || !/^\S+$/.test(options.token)) {
      throw new ChannelError(
        CHANNEL_ID,
        "the bot token is empty or contains whitespace (channels.telegram.botToken)",
        {
          retryable: false,
        },
      );
    }
    this.#token = options.token;
    this.#base = (options.apiBaseUrl ?? DEFAULT_API_BASE_URL).replace(/\/+$/, "");
    this.#retry = {
      maxAttempts: Math.max(1, options.retry?.maxAttempts ?? 4),
      baseDelayMs: Math.max(0, options.retry?.baseDelayMs ?? 500),
      maxDelayMs: Math.max(0, options.retry?.maxDelayMs ?? 10_000),
      maxRetryAfterMs: Math.max(0, options.retry?.maxRetryAfterMs ?? 60_000),
    };
  }

  /** Calls a method, retrying what is worth retrying; throws `ChannelError` (or the abort reason). */
  async call<T>(
    method: string,
    params: Readonly<Record<string, unknown>>,
    options: CallOptions = {},
  ): Promise<T> {
    const attempts = options.retry === false ? 1 : this.#retry.maxAttempts;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.callOnce<T>(method, params, options);
      } catch (error) {
        if (!(error instanceof ChannelError) || !error.retryable || attempt >= attempts) throw error;
        await abortableSleep(this.retryDelay(error, attempt), options.signal);
      }
    }
  }

  /** How long to wait before the next attempt; throws the error back when `retry_after` is beyond the cap. */
  retryDelay(error: ChannelError, attempt: number): number {
    if (error.retryAfterMs !== undefined) {
      if (error.retryAfterMs > this.#retry.maxRetryAfterMs) throw error;
      return error.retryAfterMs;
    }
    return Math.min(this.#retry.maxDelayMs, this.#retry.baseDelayMs * 2 ** (attempt - 1));
  }

  async callOnce<T>(
    method: string,
    params: Readonly<Record<string, unknown>>,
    options: CallOptions = {},
  ): Promise<T> {
    const init = await this.#request(params, options.files);
    let response: Response;
    try {
      response = await fetch(`${this.#base}/bot${this.#token}/${method}`, {
        method: "POST",
        ...init,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
      throw new ChannelError(
        CHANNEL_ID,
        `${method}: network error (${String(error instanceof Error ? error.message : error)}${cause})`,
        {
          retryable: true,
          cause: error,
        },
      );
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new ChannelError(CHANNEL_ID, `${method}: the connection broke while reading the answer`, {
        status: response.status,
        retryable: true,
        cause: error,
      });
    }
    let envelope: Envelope | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === "object") envelope = parsed as Envelope;
    } catch {
      envelope = undefined;
    }
    if (envelope?.ok === true) return envelope.result as T;
    const status = typeof envelope?.error_code === "number" ? envelope.error_code : response.status;
    const retryAfter = envelope?.parameters?.retry_after;
    const retryAfterMs = typeof retryAfter === "number" && retryAfter >= 0 ? retryAfter * 1000 : undefined;
    const description =
      typeof envelope?.description === "string"
        ? envelope.description
        : `HTTP ${response.status} without a Bot API answer`;
    const hint = status === 401 ? " — the bot token was rejected; check channels.telegram.botToken" : "";
    throw new ChannelError(CHANNEL_ID, `${method}: ${description} (${status})${hint}`, {
      status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      retryable: status === 429 || status >= 500,
    });
  }

  /**
   * The bytes of a file getFile described (`GET <apiBaseUrl>/file/bot<token>/<file_path>`), refused past
   * `maxBytes` (by the announced length and while reading, so a lying server cannot make it buffer more).
   * Errors name the file path, never the token.
   */
  async downloadFile(
    filePath: string,
    options: { readonly maxBytes: number; readonly signal?: AbortSignal },
  ): Promise<Uint8Array> {
    const path = filePath.split("/").map(encodeURIComponent).join("/");
    let response: Response;
    try {
      response = await fetch(`${this.#base}/file/bot${this.#token}/${path}`, {
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new ChannelError(CHANNEL_ID, `download ${filePath}: network error (${String(error)})`, {
        retryable: true,
        cause: error,
      });
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ChannelError(CHANNEL_ID, `download ${filePath}: HTTP ${response.status}`, {
        status: response.status,
        retryable: response.status === 429 || response.status >= 500,
      });
    }
    const tooLarge = (size: string) =>
      new ChannelError(
        CHANNEL_ID,
        `download ${filePath}: ${size} is over the ${options.maxBytes}-byte limit`,
        {
          retryable: false,
        },
      );
    const announced = Number(response.headers.get("content-length") ?? Number.NaN);
    if (Number.isFinite(announced) && announced > options.maxBytes) {
      await response.body?.cancel();
      throw tooLarge(`${announced} bytes`);
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of (response.body ?? []) as AsyncIterable<Uint8Array>) {
      total += chunk.length;
      if (total > options.maxBytes) throw tooLarge("the file");
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, total);
  }

  async #request(
    params: Readonly<Record<string, unknown>>,
    files: Readonly<Record<string, UploadFile>> | undefined,
  ): Promise<RequestInit> {
    const entries = Object.entries(params).filter(([, value]) => value !== undefined);
    if (files === undefined || Object.keys(files).length === 0) {
      return {
        headers: { "content-type": "application/json" },
        body: JSON.stringify(Object.fromEntries(entries)),
      };
    }
    const form = new FormData();
    for (const [key, value] of entries) {
      form.set(key, typeof value === "string" ? value : JSON.stringify(value));
    }
    for (const [field, file] of Object.entries(files)) {
      const bytes = file.data ?? (file.path === undefined ? undefined : await readUpload(file.path));
      if (bytes === undefined) {
        throw new ChannelError(CHANNEL_ID, `upload "${field}" has neither a path nor data`, {
          retryable: false,
        });
      }
      const name = file.fileName ?? (file.path === undefined ? field : basename(file.path));
      const blob = new Blob([new Uint8Array(bytes)], { type: file.mimeType ?? "application/octet-stream" });
      form.set(field, blob, name);
    }
    return { body: form };
  }
}

async function readUpload(path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new ChannelError(CHANNEL_ID, `cannot read the file to upload ${path}: ${String(error)}`, {
      retryable: false,
      cause: error,
    });
  }
}
