// The Slack adapter's options: what `createSlackChannel` accepts and how `channels.slack` in the config becomes
// those options (the tokens and secret each mode requires). Does not own the adapter itself (channel.ts).
import type { ChunkMode } from "@agent-kernel/channels-core";
import type { KernelConfig } from "@agent-kernel/config";
import type { SlackChannelStateLike } from "./handled-log.ts";

/** `channels.slack` of the config, as validated. */
export type SlackChannelConfig = NonNullable<KernelConfig["channels"]["slack"]>;

/** What `createSlackChannel` accepts (`slackOptionsFromConfig` makes it from the config). */
export interface SlackChannelOptions {
  /** The bot token (`xoxb-…`). */
  readonly botToken: string;
  /** `events` (default): Slack POSTs to our endpoint; `socket`: we hold a Socket Mode WebSocket. */
  readonly mode?: "events" | "socket";
  /** The app's signing secret: every Events API request is verified with it (events mode). */
  readonly signingSecret?: string;
  /** The app-level token (`xapp-…`, scope `connections:write`), Socket Mode only. */
  readonly appToken?: string;
  /** Web API base URL (default `https://slack.com/api/`; tests point it at the fake). */
  readonly apiBaseUrl?: string;
  readonly accountId?: string;
  /** Bind address of the events endpoint (default 127.0.0.1: put a TLS reverse proxy in front of it). */
  readonly host?: string;
  /** Port of the events endpoint (default 0: any free port, see `endpointUrl`). */
  readonly port?: number;
  /** Request URL path Slack posts events to (default `/slack/events`). */
  readonly path?: string;
  /** Characters per outbound message (default the config's `textChunkLimit`, 4000; at most 40000). */
  readonly textChunkLimit?: number;
  /** `length` (default): break at the last newline or space before the limit; `newline`: prefer paragraphs. */
  readonly chunkMode?: ChunkMode;
  /**
   * Messages one reply may become (`channels.slack.maxMessagesPerReply`, default 10); past it the whole reply
   * is uploaded as `reply.md` after the first limit - 1 messages (channels-core `planReplyMessages`).
   */
  readonly maxMessagesPerReply?: number;
  /** Accept messages posted by other bots (default false). */
  readonly allowBots?: boolean;
  /** Rate-limit retries per Web API call (default 2). */
  readonly maxRateLimitRetries?: number;
  /** Longest `Retry-After` waited out before failing the call (default 60 s). */
  readonly maxRetryAfterMs?: number;
  /** Socket Mode: first reconnect delay after a dropped connection (default 1 s, doubling to 30 s). */
  readonly reconnectDelayMs?: number;
  /**
   * Where handled event ids and message keys survive a restart (the session store's `store.channelState`),
   * so an event Slack redelivers after a restart is acknowledged, not handled again. Unset = memory only.
   */
  readonly channelState?: SlackChannelStateLike;
  /** How long a handled event stays marked in `channelState` (default 2 h; Slack retries for about 1 h). */
  readonly dedupeTtlMs?: number;
  /** Reports channel-state failures (a failed lookup answers the delivery as failed, so Slack retries it). */
  readonly onError?: (error: Error) => void;
  /** The clock of the handled-event dedupe (tests inject one; request timestamps are checked against real time). */
  readonly now?: () => number;
  /**
   * Shared pictures (files with an image mimetype) are downloaded with the bot token (scope `files:read`) into
   * `InboundMessage.images`, each up to this many bytes (default 6 MiB, the kernel's cap; 0: none downloaded).
   * A picture that cannot be fetched is left out and reported to `onError`.
   */
  readonly maxImageBytes?: number;
}

/** Reads the adapter options from `channels.slack` (its `textChunkLimit`, tokens, secret and API URL). */
export function slackOptionsFromConfig(
  config: SlackChannelConfig,
  extra: Omit<
    SlackChannelOptions,
    | "mode"
    | "botToken"
    | "signingSecret"
    | "appToken"
    | "apiBaseUrl"
    | "textChunkLimit"
    | "chunkMode"
    | "maxMessagesPerReply"
  > = {},
): SlackChannelOptions {
  if (!config.botToken) throw new Error("channels.slack.botToken is required (the xoxb- bot token)");
  if (config.mode === "socket" && !config.appToken)
    throw new Error("channels.slack.appToken is required in socket mode (the xapp- app-level token)");
  if (config.mode === "events" && !config.signingSecret)
    throw new Error("channels.slack.signingSecret is required in events mode (it verifies Slack's requests)");
  return {
    ...extra,
    mode: config.mode,
    botToken: config.botToken,
    ...(config.signingSecret !== undefined ? { signingSecret: config.signingSecret } : {}),
    ...(config.appToken !== undefined ? { appToken: config.appToken } : {}),
    textChunkLimit: config.textChunkLimit,
    maxMessagesPerReply: config.maxMessagesPerReply,
    ...(config.chunkMode !== undefined ? { chunkMode: config.chunkMode } : {}),
    ...(config.apiBaseUrl !== undefined ? { apiBaseUrl: config.apiBaseUrl } : {}),
  };
}
