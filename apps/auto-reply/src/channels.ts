// The adapters the daemon starts: one per configured, enabled channel of the config (`channels.telegram`,
// `channels.slack`, `channels.webchat`), each built by its package's own `*OptionsFromConfig`, Telegram's
// polling offset and Slack's handled events kept in the store's channel state. Owns only that mapping; the
// adapters own their transport and their config errors (a missing token names the key).
import type { ChannelAdapter } from "@agent-kernel/channels-core";
import {
  createSlackChannel,
  type SlackChannelStateLike,
  slackOptionsFromConfig,
} from "@agent-kernel/channels-slack";
import {
  type ChannelStateLike,
  channelStateOffsetStore,
  createTelegramChannel,
  telegramOptionsFromConfig,
} from "@agent-kernel/channels-telegram";
import { createWebchatChannel, webchatOptionsFromConfig } from "@agent-kernel/channels-webchat";
import type { KernelConfig } from "@agent-kernel/config";

/** Where the adapters keep their state, and where they report errors. */
export interface ChannelsFromConfigOptions {
  /** Where Telegram keeps its polling offset and Slack its handled events (the kernel store's `channelState`). */
  readonly channelState: ChannelStateLike & SlackChannelStateLike;
  readonly log?: (line: string) => void;
}

/** Adapters for every enabled channel the config sets up; other channel ids are reported and skipped. */
export function channelsFromConfig(
  config: KernelConfig,
  options: ChannelsFromConfigOptions,
): ChannelAdapter[] {
  const channels: ChannelAdapter[] = [];
  const { telegram, slack, webchat, ...others } = config.channels;
  if (telegram?.enabled) {
    channels.push(
      createTelegramChannel(
        telegramOptionsFromConfig(telegram, {
          offsetStore: channelStateOffsetStore(options.channelState, { accountId: "default" }),
          ...(options.log === undefined
            ? {}
            : { onError: (error: Error) => options.log?.(`telegram: ${error.message}`) }),
        }),
      ),
    );
  }
  if (slack?.enabled) {
    channels.push(
      createSlackChannel(
        slackOptionsFromConfig(slack, {
          channelState: options.channelState,
          // Events mode's endpoint: Slack must be told its URL, so the port is the config's when it sets one.
          ...(slack.host === undefined ? {} : { host: slack.host }),
          ...(slack.port === undefined ? {} : { port: slack.port }),
          ...(options.log === undefined
            ? {}
            : { onError: (error: Error) => options.log?.(`slack: ${error.message}`) }),
        }),
      ),
    );
  }
  if (webchat?.enabled) channels.push(createWebchatChannel(webchatOptionsFromConfig(webchat)));
  for (const id of Object.keys(others))
    options.log?.(`channels.${id}: no adapter ships for this channel id; it is not started`);
  return channels;
}
