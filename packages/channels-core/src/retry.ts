// Retrying a channel call on the channel's own rate limits and transient failures. Owns: honouring
// `ChannelError.retryAfterMs` (Telegram `retry_after`, Slack `Retry-After`), exponential backoff with full
// jitter for other retryable errors, no retry for non-retryable ones, attempt and delay caps, and abort.
// Does not own: classifying a channel's responses into `ChannelError` (adapters) or model retries (kernel).
import { ChannelError } from "./contract.ts";

/** How `withChannelRetry` retries: attempts, backoff bounds, abort signal, and hooks tests inject. */
export interface ChannelRetryOptions {
  /** Attempts in all, the first included (default 4). */
  readonly maxAttempts?: number;
  /** The first backoff step (default 500 ms); doubles per attempt. */
  readonly baseDelayMs?: number;
  /** No wait is longer than this, a server's `retryAfterMs` included (default 30 s). */
  readonly maxDelayMs?: number;
  /** Waits; resolves early or rejects when `signal` aborts (default: a timer). Tests inject one. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly signal?: AbortSignal;
  /** [0, 1) source for jitter (default Math.random). */
  readonly random?: () => number;
  /** Called before each wait, e.g. to log. */
  readonly onRetry?: (info: {
    readonly attempt: number;
    readonly delayMs: number;
    readonly error: ChannelError;
  }) => void;
}

/** `withChannelRetry`'s defaults: 4 attempts, backoff from 500 ms, no wait over 30 s. */
export const CHANNEL_RETRY_DEFAULTS = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000 } as const;

/** A timer that rejects with the signal's reason when it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The wait before attempt `attempt + 1`: the server's retry-after, else jittered exponential backoff. */
export function retryDelayMs(
  error: ChannelError,
  attempt: number,
  options: Pick<ChannelRetryOptions, "baseDelayMs" | "maxDelayMs" | "random"> = {},
): number {
  const base = options.baseDelayMs ?? CHANNEL_RETRY_DEFAULTS.baseDelayMs;
  const max = options.maxDelayMs ?? CHANNEL_RETRY_DEFAULTS.maxDelayMs;
  if (error.retryAfterMs !== undefined && error.retryAfterMs >= 0) return Math.min(error.retryAfterMs, max);
  const ceiling = Math.min(max, base * 2 ** (attempt - 1));
  // full jitter, at least half the step so retries do not bunch at zero
  return Math.round(ceiling / 2 + (options.random ?? Math.random)() * (ceiling / 2));
}

/**
 * Runs `fn` (given the attempt number, from 1) and retries it while it throws a retryable `ChannelError` or
 * one with `retryAfterMs`. Anything else, and the last attempt's error, propagates unchanged. An abort
 * stops at once with the signal's reason.
 */
export async function withChannelRetry<T>(
  fn: (attempt: number) => Promise<T>,
  options: ChannelRetryOptions = {},
): Promise<T> {
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? CHANNEL_RETRY_DEFAULTS.maxAttempts));
  const sleep = options.sleep ?? abortableSleep;
  const { signal } = options;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (error) {
      const retryable =
        error instanceof ChannelError && (error.retryable || error.retryAfterMs !== undefined);
      if (signal?.aborted === true) throw signal.reason;
      if (!retryable || attempt >= maxAttempts) throw error;
      const delayMs = retryDelayMs(error, attempt, options);
      options.onRetry?.({ attempt, delayMs, error });
      await sleep(delayMs, signal);
      signal?.throwIfAborted();
    }
  }
}
