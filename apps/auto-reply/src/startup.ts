// What a daemon that runs channels says and does around them: the URLs the started channels serve (the web
// chat page with its token, the Slack Events endpoint with its port), one line per handled turn, start-up
// with retries for retryable channel errors (backoff), and one clear line plus an exit code for fatal ones
// (a port in use, Slack's invalid_auth, a token Telegram refused) instead of a stack trace. Shared by the
// `auto-reply` command and the gateway daemon. Does not own the channels (adapters) or turns (gateway.ts).
import { type ChannelAdapter, ChannelError } from "@agent-kernel/channels-core";
import type { HandledTurn } from "./gateway.ts";

/** Exit codes of a daemon that could not start its channels. */
export const STARTUP_EXIT = {
  /** A channel refused to start for good (bad token, port in use, refused by the API). */
  channelFailed: 3,
  /** A channel kept failing with retryable errors until the retries ran out. */
  retriesExhausted: 4,
} as const;

/** One "what this serves" line per started channel that serves something a person opens or configures. */
export function servedUrls(channels: readonly ChannelAdapter[]): string[] {
  const lines: string[] = [];
  for (const channel of channels) {
    const served = channel as { pageUrl?: unknown; endpointUrl?: unknown };
    if (typeof served.pageUrl === "string") lines.push(`web chat: ${served.pageUrl}`);
    if (typeof served.endpointUrl === "string") {
      const port = new URL(served.endpointUrl).port;
      lines.push(`slack events endpoint: ${served.endpointUrl} (port ${port})`);
    }
  }
  return lines;
}

/** One line for a handled turn: channel and chat, session, run, status, time taken and messages sent. */
export function turnLine(turn: HandledTurn, elapsedMs?: number): string {
  const where = `${turn.inbound.channel}:${turn.inbound.conversation.chatId}`;
  const status = turn.interrupted
    ? "interrupted"
    : turn.outcome === undefined
      ? "not run"
      : turn.outcome.status;
  const run = turn.outcome === undefined ? "" : ` run ${turn.outcome.runId}`;
  const took = elapsedMs === undefined ? "" : ` in ${(elapsedMs / 1000).toFixed(1)}s`;
  const error = turn.error === undefined ? "" : ` (${turn.error.split("\n")[0]?.slice(0, 200)})`;
  return `turn ${where} session ${turn.route.sessionKey}${run}: ${status}${took}, ${turn.sent.length} message(s) sent${error}`;
}

/** A start-up failure as the one line the operator reads, and the exit code; undefined for unknown errors. */
export function startupFailure(error: unknown): { readonly line: string; readonly exitCode: number } {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "EADDRINUSE") {
    const { address, port } = error as { address?: string; port?: number };
    return {
      line: `cannot listen on ${address ?? "the address"}:${port ?? "?"}: the port is already in use (another gateway running? change channels.<id>.port)`,
      exitCode: STARTUP_EXIT.channelFailed,
    };
  }
  if (code === "EACCES" || code === "EADDRNOTAVAIL") {
    return { line: `cannot listen: ${message}`, exitCode: STARTUP_EXIT.channelFailed };
  }
  if (error instanceof ChannelError) {
    const hint =
      error.channel === "slack" && /invalid_auth|not_authed|account_inactive|token_revoked/.test(message)
        ? " — Slack refused the bot token: check channels.slack.botToken"
        : error.channel === "telegram" && (error.status === 401 || error.status === 404)
          ? " — Telegram refused the bot token: check channels.telegram.botToken"
          : "";
    return {
      line: `${message}${hint}`,
      exitCode: error.retryable ? STARTUP_EXIT.retriesExhausted : STARTUP_EXIT.channelFailed,
    };
  }
  return { line: `channels failed to start: ${message}`, exitCode: STARTUP_EXIT.channelFailed };
}

/** Worth starting again: a channel error the adapter marks retryable (429, 5xx, a reset connection). */
export function isRetryableStartError(error: unknown): boolean {
  return error instanceof ChannelError && error.retryable;
}

/** How `startWithRetry` backs off, how often it retries, where it reports, and what stops it. */
export interface StartWithRetryOptions {
  /** Waits before each retry (ms); the last repeats. Default 1 s, 2 s, 4 s, 8 s, 16 s, 30 s. */
  readonly delaysMs?: readonly number[];
  /** Retries before giving up. Default 8. */
  readonly maxRetries?: number;
  readonly log: (line: string) => void;
  /** A shutdown while waiting: stop retrying (the last error is thrown). */
  readonly signal?: AbortSignal;
}

const DEFAULT_DELAYS_MS = [1000, 2000, 4000, 8000, 16_000, 30_000] as const;

/**
 * Calls `attempt` (which builds fresh channels and starts them: a failed adapter cannot be started twice)
 * until it succeeds, retrying retryable channel errors with backoff (a `retryAfterMs` the API gave is waited
 * at least); anything else, or the last retryable error, is thrown.
 */
export async function startWithRetry<T>(
  attempt: () => Promise<T>,
  options: StartWithRetryOptions,
): Promise<T> {
  const delays = options.delaysMs ?? DEFAULT_DELAYS_MS;
  const maxRetries = options.maxRetries ?? 8;
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isRetryableStartError(error) || retry >= maxRetries || options.signal?.aborted) throw error;
      const base = delays[Math.min(retry, delays.length - 1)] ?? 1000;
      const wait = Math.max(base, (error as ChannelError).retryAfterMs ?? 0);
      options.log(
        `${(error as Error).message}; retrying in ${(wait / 1000).toFixed(1)}s (retry ${retry + 1} of ${maxRetries})`,
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        options.signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
      if (options.signal?.aborted) throw error;
    }
  }
}
