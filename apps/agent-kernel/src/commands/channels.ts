// `agent-kernel channels list|status [--probe]`: the configured channels, and with `--probe` whether each
// one's API answers with the configured credentials — Telegram's getMe and Slack's auth.test through the
// channel packages' own API clients (no retries: a probe reports, it does not wait), and the web chat's page
// on its host and port (it answers only while the gateway runs). Owns the command's output and exit codes;
// not the channels (channels-*).
import type { KernelConfig } from "@agent-kernel/config";
import { COMMON_FLAGS_HELP, expectArgs, parseCommand, subcommand } from "../args.ts";
import { loadOperationContext } from "../context.ts";
import { EXIT } from "../errors.ts";
import { type CliIo, line, paint, printJson } from "../io.ts";

const USAGE = `Usage:
  agent-kernel channels list [--json]
  agent-kernel channels status [--probe] [--json]

list: every channel in the config (channels.*), enabled or not, with its access policy.
status: each enabled channel's credentials; --probe also asks its API (Telegram getMe, Slack auth.test, the
web chat's page) and exits 1 when one does not answer.

Examples:
  agent-kernel channels list
  agent-kernel channels status --probe --json

${COMMON_FLAGS_HELP}`;

/** What `channels list` says about one channel. */
export interface ChannelSummary {
  readonly id: string;
  readonly enabled: boolean;
  readonly dmPolicy: string;
  readonly groupPolicy: string;
  /** What the channel needs to start, and whether the config has it. */
  readonly credentials: Readonly<Record<string, boolean>>;
  readonly detail?: string;
}

/** A probe's answer. */
export interface ChannelProbe {
  readonly ok: boolean;
  /** Who answered (the bot's name), or what went wrong. */
  readonly detail: string;
}

type ChannelConfigs = KernelConfig["channels"];

/** Every configured channel, by id. */
export function summarizeChannels(channels: ChannelConfigs): ChannelSummary[] {
  return Object.entries(channels)
    .filter((entry): entry is [string, NonNullable<(typeof entry)[1]>] => entry[1] !== undefined)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, channel]) => {
      const common = {
        id,
        enabled: channel.enabled,
        dmPolicy: channel.dmPolicy,
        groupPolicy: channel.groupPolicy,
      };
      if (id === "telegram") {
        const telegram = channels.telegram;
        return { ...common, credentials: { botToken: telegram?.botToken !== undefined } };
      }
      if (id === "slack") {
        const slack = channels.slack;
        const socket = slack?.mode === "socket";
        return {
          ...common,
          credentials: {
            botToken: slack?.botToken !== undefined,
            ...(socket
              ? { appToken: slack?.appToken !== undefined }
              : { signingSecret: slack?.signingSecret !== undefined }),
          },
          detail: `mode ${slack?.mode ?? "events"}`,
        };
      }
      if (id === "webchat") {
        const webchat = channels.webchat;
        return { ...common, credentials: {}, detail: `http://${webchat?.host}:${webchat?.port}/` };
      }
      return { ...common, credentials: {}, detail: "no adapter ships for this channel id" };
    });
}

/** Asks the channel's API whether the configured credentials work; never throws. */
export async function probeChannel(id: string, channels: ChannelConfigs): Promise<ChannelProbe> {
  const timeout = () => AbortSignal.timeout(10_000);
  try {
    if (id === "telegram") {
      const telegram = channels.telegram;
      if (telegram?.botToken === undefined)
        return { ok: false, detail: "channels.telegram.botToken is not set" };
      const { TelegramBotApi } = await import("@agent-kernel/channels-telegram");
      const api = new TelegramBotApi({
        token: telegram.botToken,
        ...(telegram.apiBaseUrl === undefined ? {} : { apiBaseUrl: telegram.apiBaseUrl }),
      });
      const bot = await api.callOnce<{ username?: string; id: number }>("getMe", {}, { signal: timeout() });
      return { ok: true, detail: `bot @${bot.username ?? bot.id}` };
    }
    if (id === "slack") {
      const slack = channels.slack;
      if (slack?.botToken === undefined) return { ok: false, detail: "channels.slack.botToken is not set" };
      const { SlackWebApi } = await import("@agent-kernel/channels-slack");
      const api = new SlackWebApi({
        botToken: slack.botToken,
        maxRateLimitRetries: 0,
        signal: timeout(),
        ...(slack.apiBaseUrl === undefined ? {} : { apiBaseUrl: slack.apiBaseUrl }),
      });
      const answer = (await api.call("auth.test")) as {
        ok?: boolean;
        error?: string;
        user?: string;
        team?: string;
      };
      return answer.ok === true
        ? { ok: true, detail: `bot ${answer.user ?? "?"} in ${answer.team ?? "?"}` }
        : { ok: false, detail: `auth.test: ${answer.error ?? "not ok"}` };
    }
    if (id === "webchat") {
      const webchat = channels.webchat;
      const url = `http://${webchat?.host}:${webchat?.port}/`;
      const response = await fetch(url, { signal: timeout() });
      await response.body?.cancel();
      return { ok: true, detail: `${url} answers (HTTP ${response.status})` };
    }
    return { ok: false, detail: "no adapter ships for this channel id: nothing to probe" };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return {
      ok: false,
      detail:
        id === "webchat"
          ? `does not answer (${message}${cause}); is the gateway running?`
          : `${message}${cause}`,
    };
  }
}

/** `channels …`; resolves to the exit code. */
export async function runChannels(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(argv, { probe: { type: "boolean" } }, USAGE, io);
  if (parsed === undefined) return EXIT.ok;
  const { name, rest } = subcommand(parsed, "channels", ["list", "status"], USAGE);
  expectArgs(rest, [], `channels ${name}`);
  const context = loadOperationContext(parsed.values, io);
  const all = summarizeChannels(context.config.channels);
  if (name === "list") {
    if (parsed.values.json === true) printJson(io, { channels: all });
    else if (all.length === 0) line(io.stdout, "No channels are configured (channels.* in the config).");
    else {
      for (const channel of all) {
        line(
          io.stdout,
          `${paint(io, io.stdout, "bold", channel.id.padEnd(10))} ${channel.enabled ? "enabled " : "disabled"}  dm ${channel.dmPolicy}, groups ${channel.groupPolicy}${channel.detail ? `  ${channel.detail}` : ""}`,
        );
      }
    }
    return EXIT.ok;
  }
  const enabled = all.filter((channel) => channel.enabled);
  const statuses: (ChannelSummary & { missing: string[]; probe?: ChannelProbe })[] = [];
  for (const channel of enabled) {
    const missing = Object.entries(channel.credentials)
      .filter(([, set]) => !set)
      .map(([key]) => `channels.${channel.id}.${key}`);
    const probe =
      parsed.values.probe === true ? await probeChannel(channel.id, context.config.channels) : undefined;
    statuses.push({ ...channel, missing, ...(probe === undefined ? {} : { probe }) });
  }
  const failed = statuses.some((status) => status.missing.length > 0 || status.probe?.ok === false);
  if (parsed.values.json === true) {
    printJson(io, { channels: statuses, ok: !failed });
  } else {
    if (statuses.length === 0)
      line(io.stdout, "No channel is enabled (channels.<id>.enabled in the config).");
    for (const status of statuses) {
      const problems = [
        ...status.missing.map((key) => `${key} is not set`),
        ...(status.probe?.ok === false ? [status.probe.detail] : []),
      ];
      const verdict =
        problems.length > 0
          ? paint(io, io.stdout, "red", `problem: ${problems.join("; ")}`)
          : paint(
              io,
              io.stdout,
              "green",
              status.probe === undefined ? "configured" : `ok, ${status.probe.detail}`,
            );
      line(io.stdout, `${paint(io, io.stdout, "bold", status.id.padEnd(10))} ${verdict}`);
    }
    if (parsed.values.probe !== true && statuses.length > 0) {
      line(io.stdout, paint(io, io.stdout, "dim", "(--probe asks each channel's API too)"));
    }
  }
  return failed ? EXIT.failed : EXIT.ok;
}
