// A minimal Slack Web API client: `POST {apiBaseUrl}{method}` with a Bearer bot token, JSON or form bodies,
// Slack's `{ok:false,error}` answers turned into ChannelErrors, and rate limits (HTTP 429 + `Retry-After`, or
// `error: "ratelimited"`) waited out a bounded number of times. Owns the wire; does not own what is sent.
// Server errors and lost responses are not replayed: a repeated chat.postMessage would post twice.
import { abortableSleep, ChannelError } from "@agent-kernel/channels-core";

export const SLACK_CHANNEL_ID = "slack";
export const DEFAULT_SLACK_API_BASE_URL = "https://slack.com/api/";

export type SlackApiParams = Record<string, unknown>;
export type SlackApiResponse = Record<string, unknown> & { readonly ok: boolean };

export interface SlackWebApiOptions {
  readonly botToken: string;
  readonly apiBaseUrl?: string;
  /** Rate-limit retries per call (OpenClaw retries an explicit 429 twice). */
  readonly maxRateLimitRetries?: number;
  /** A `Retry-After` longer than this is not waited out: the call fails with `retryAfterMs` set. */
  readonly maxRetryAfterMs?: number;
  /** Aborts waits and requests (the adapter's stop). */
  readonly signal?: AbortSignal;
}

/** Errors that mean the token or app is unusable: never worth retrying. */
const FATAL_ERRORS = new Set([
  "not_authed",
  "invalid_auth",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "no_permission",
  "missing_scope",
  "not_allowed_token_type",
]);

export class SlackWebApi {
  readonly #token: string;
  readonly #baseUrl: string;
  readonly #maxRetries: number;
  readonly #maxRetryAfterMs: number;
  readonly #signal: AbortSignal | undefined;

  constructor(options: SlackWebApiOptions) {
    this.#token = options.botToken;
    const base = options.apiBaseUrl ?? DEFAULT_SLACK_API_BASE_URL;
    this.#baseUrl = base.endsWith("/") ? base : `${base}/`;
    this.#maxRetries = options.maxRateLimitRetries ?? 2;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.#signal = options.signal;
  }

  /** Calls a method; `form` encodes the body as `application/x-www-form-urlencoded` (the files.* methods). */
  async call(
    method: string,
    params: SlackApiParams = {},
    encoding: "json" | "form" = "json",
  ): Promise<SlackApiResponse> {
    for (let attempt = 0; ; attempt++) {
      const { status, body, retryAfterHeader } = await this.#post(method, params, encoding);
      const rateLimited = status === 429 || body?.error === "ratelimited";
      if (rateLimited) {
        const retryAfterMs = parseRetryAfter(retryAfterHeader);
        if (attempt >= this.#maxRetries || retryAfterMs > this.#maxRetryAfterMs) {
          throw new ChannelError(
            SLACK_CHANNEL_ID,
            `${method}: rate limited (retry after ${retryAfterMs} ms)`,
            {
              status,
              retryAfterMs,
              retryable: true,
            },
          );
        }
        await sleep(retryAfterMs, this.#signal);
        continue;
      }
      if (status >= 500) {
        throw new ChannelError(SLACK_CHANNEL_ID, `${method}: HTTP ${status}`, { status, retryable: true });
      }
      if (!body) {
        throw new ChannelError(
          SLACK_CHANNEL_ID,
          `${method}: HTTP ${status} with a body that is not Slack JSON`,
          {
            status,
            retryable: false,
          },
        );
      }
      if (!body.ok) {
        const error = typeof body.error === "string" ? body.error : "unknown_error";
        throw new ChannelError(
          SLACK_CHANNEL_ID,
          `${method}: ${error}${FATAL_ERRORS.has(error) ? " (check the bot token and scopes)" : ""}`,
          {
            status,
            retryable: false,
          },
        );
      }
      return body;
    }
  }

  /** POSTs raw bytes to an upload URL from files.getUploadURLExternal. */
  async upload(uploadUrl: string, bytes: Uint8Array, mimeType: string | undefined): Promise<void> {
    let response: Response;
    try {
      response = await fetch(uploadUrl, {
        method: "POST",
        headers: { "content-type": mimeType ?? "application/octet-stream" },
        body: bytes,
        ...(this.#signal ? { signal: this.#signal } : {}),
      });
    } catch (cause) {
      throw new ChannelError(SLACK_CHANNEL_ID, "file upload: network error", { retryable: true, cause });
    }
    await response.arrayBuffer();
    if (!response.ok) {
      throw new ChannelError(SLACK_CHANNEL_ID, `file upload: HTTP ${response.status}`, {
        status: response.status,
        retryable: response.status >= 500 || response.status === 429,
      });
    }
  }

  async #post(
    method: string,
    params: SlackApiParams,
    encoding: "json" | "form",
  ): Promise<{ status: number; body: SlackApiResponse | undefined; retryAfterHeader: string | null }> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}` };
    let body: string;
    if (encoding === "json") {
      headers["content-type"] = "application/json; charset=utf-8";
      body = JSON.stringify(params);
    } else {
      headers["content-type"] = "application/x-www-form-urlencoded";
      const form = new URLSearchParams();
      for (const [key, value] of Object.entries(params)) {
        if (value === undefined) continue;
        form.set(key, typeof value === "string" ? value : JSON.stringify(value));
      }
      body = form.toString();
    }
    let response: Response;
    try {
      response = await fetch(`${this.#baseUrl}${method}`, {
        method: "POST",
        headers,
        body,
        ...(this.#signal ? { signal: this.#signal } : {}),
      });
    } catch (cause) {
      throw new ChannelError(SLACK_CHANNEL_ID, `${method}: network error`, { retryable: true, cause });
    }
    const text = await response.text();
    return {
      status: response.status,
      body: parseSlackJson(text),
      retryAfterHeader: response.headers.get("retry-after"),
    };
  }
}

function parseSlackJson(text: string): SlackApiResponse | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as { ok?: unknown }).ok === "boolean")
      return parsed as SlackApiResponse;
  } catch {
    // not JSON: the caller reports the status
  }
  return undefined;
}

/** Slack sends `Retry-After` in whole seconds; a missing or unreadable header means one second. */
export function parseRetryAfter(header: string | null): number {
  if (header === null) return 1000;
  const seconds = Number(header.trim());
  return Number.isFinite(seconds) && seconds >= 0 ? Math.round(seconds * 1000) : 1000;
}

async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await abortableSleep(ms, signal);
  } catch (cause) {
    throw new ChannelError(SLACK_CHANNEL_ID, "stopped while waiting out a rate limit", {
      retryable: true,
      cause,
    });
  }
}
