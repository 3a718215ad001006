// `channels.<id>` and `bindings`. Owns: access-control settings, limits and
// the adapter-specific keys of the channels this project ships (telegram,
// slack, webchat), and OpenClaw's rule that `dmPolicy: "open"` needs `"*"` in
// the effective `allowFrom` (the channel's, and each account's own or
// inherited). Other channel ids get the common settings only. Does not own:
// enforcing any of it (channels-core).
import { z } from "zod";
import { CHANNEL_DEFAULTS, WEBCHAT_DEFAULTS } from "./defaults.ts";
import { KNOWN_CHANNELS } from "./schema-constants.ts";
import { agentId, nonEmptyString, nonNegativeInt, onOff, peerId, positiveInt } from "./schema-primitives.ts";
import { toolListPolicy } from "./schema-tools.ts";

export { KNOWN_CHANNELS };

const groupSettings = z.strictObject({
  enabled: z.boolean().optional(),
  requireMention: z.boolean().optional().describe("Reply only when mentioned (default true in groups)."),
  allowFrom: z.array(peerId).optional().describe("Senders allowed in this group."),
  tools: toolListPolicy.optional().describe("The group/channel tool-policy layer."),
  historyLimit: nonNegativeInt.optional(),
});

/** Per account (a second bot on the same channel): overrides of the channel's access and history settings. */
const accountSettings = z.strictObject({
  enabled: z.boolean().optional(),
  name: nonEmptyString.optional(),
  dmPolicy: z.enum(["pairing", "allowlist", "open", "disabled"]).optional(),
  allowFrom: z.array(peerId).optional(),
  groupPolicy: z.enum(["open", "allowlist", "disabled"]).optional(),
  groupAllowFrom: z.array(peerId).optional(),
  historyLimit: nonNegativeInt.optional(),
  dmHistoryLimit: nonNegativeInt.optional(),
  dms: z.record(nonEmptyString, z.strictObject({ historyLimit: nonNegativeInt.optional() })).optional(),
});

const commonChannelFields = {
  enabled: z.boolean().default(CHANNEL_DEFAULTS.enabled),
  dmPolicy: z
    .enum(["pairing", "allowlist", "open", "disabled"])
    .default(CHANNEL_DEFAULTS.dmPolicy)
    .describe('"pairing": unknown senders get a code the owner approves.'),
  allowFrom: z.array(peerId).optional().describe('DM senders always allowed ("*" = everyone).'),
  groupPolicy: z.enum(["open", "allowlist", "disabled"]).default(CHANNEL_DEFAULTS.groupPolicy),
  groupAllowFrom: z.array(peerId).optional(),
  groups: z
    .record(nonEmptyString, groupSettings)
    .optional()
    .describe('Per group id, or "*" for every group.'),
  textChunkLimit: positiveInt.default(CHANNEL_DEFAULTS.textChunkLimit),
  chunkMode: z.enum(["length", "newline"]).optional(),
  maxMessagesPerReply: z
    .number({ error: "expected a whole number of messages from 1 to 100" })
    .int({ error: "expected a whole number of messages from 1 to 100" })
    .min(1, { error: "expected a whole number of messages from 1 to 100" })
    .max(100, { error: "expected a whole number of messages from 1 to 100" })
    .default(CHANNEL_DEFAULTS.maxMessagesPerReply)
    .describe(
      "Messages one reply may become when split at textChunkLimit; past it the whole reply goes as a file (reply.md) where the channel can upload, else the last message says how much was left out.",
    ),
  historyLimit: nonNegativeInt.optional(),
  dmHistoryLimit: nonNegativeInt.optional(),
  dms: z.record(nonEmptyString, z.strictObject({ historyLimit: nonNegativeInt.optional() })).optional(),
  blockStreaming: onOff.optional(),
  blockStreamingCoalesce: z
    .strictObject({ idleMs: nonNegativeInt.optional(), minChars: positiveInt.optional() })
    .optional(),
  accounts: z
    .record(nonEmptyString, accountSettings)
    .optional()
    .describe("Per account id (several bots on one channel): overrides of this channel's settings."),
};

type DmPolicyValue = z.output<typeof commonChannelFields.dmPolicy>;

interface OpenDmFields {
  readonly dmPolicy?: DmPolicyValue | undefined;
  readonly allowFrom?: readonly string[] | undefined;
  readonly accounts?:
    | Readonly<Record<string, { dmPolicy?: DmPolicyValue | undefined; allowFrom?: string[] | undefined }>>
    | undefined;
}

const hasWildcard = (list: readonly string[] | undefined) =>
  list?.some((entry) => entry.trim() === "*") === true;

function openDmMessage(policyFrom: string, list: readonly string[] | undefined, listFrom: string): string {
  const found = list === undefined || list.length === 0 ? "found nothing" : `found ${JSON.stringify(list)}`;
  const fix =
    list === undefined || list.length === 0
      ? 'add allowFrom: ["*"] to let anyone send direct messages, or use dmPolicy "pairing"'
      : 'add "*" to allowFrom to let anyone send direct messages, or use dmPolicy "allowlist" to admit only the listed senders';
  return `dmPolicy "open"${policyFrom} requires allowFrom${listFrom} to include "*", ${found}; ${fix}`;
}

/**
 * OpenClaw's `requireOpenAllowFrom`: `dmPolicy: "open"` must say `"*"` in
 * `allowFrom`, for the channel and for every account (its own policy and list,
 * else the channel's). `policyDefaulted`: the channel's policy was not written
 * (the web chat's default "open"), which the message says.
 */
function requireOpenAllowFrom(value: OpenDmFields, ctx: z.RefinementCtx, policyDefaulted = false): void {
  if (value.dmPolicy === "open" && !hasWildcard(value.allowFrom)) {
    ctx.addIssue({
      code: "custom",
      path: ["allowFrom"],
      message: openDmMessage(policyDefaulted ? " (the default here)" : "", value.allowFrom, ""),
    });
  }
  for (const [id, account] of Object.entries(value.accounts ?? {})) {
    const policy = account.dmPolicy ?? value.dmPolicy;
    const list = account.allowFrom ?? value.allowFrom;
    // The channel-level issue already covers an account that changes neither.
    if (policy !== "open" || hasWildcard(list)) continue;
    if (account.dmPolicy === undefined && account.allowFrom === undefined) continue;
    ctx.addIssue({
      code: "custom",
      path: ["accounts", id, "allowFrom"],
      message: openDmMessage(
        account.dmPolicy === undefined ? " (the channel's)" : "",
        list,
        account.allowFrom === undefined ? " (the channel's, as this account sets none)" : "",
      ),
    });
  }
}

export const genericChannel = z.strictObject(commonChannelFields).superRefine((value, ctx) => {
  requireOpenAllowFrom(value, ctx);
});

export const telegramChannel = z
  .strictObject({
    ...commonChannelFields,
    botToken: nonEmptyString.optional().describe("From @BotFather; use ${TELEGRAM_BOT_TOKEN}."),
    apiBaseUrl: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe("Bot API base URL (tests point it at a local server)."),
    pollTimeoutSeconds: positiveInt.optional(),
  })
  .superRefine((value, ctx) => {
    requireOpenAllowFrom(value, ctx);
  });

export const slackChannel = z
  .strictObject({
    ...commonChannelFields,
    mode: z.enum(["events", "socket"]).default("events"),
    botToken: nonEmptyString.optional(),
    appToken: nonEmptyString.optional().describe("xapp- token, Socket Mode only."),
    signingSecret: nonEmptyString.optional().describe("Verifies Events API request signatures."),
    host: nonEmptyString
      .optional()
      .describe("Events mode: the address the events endpoint binds (default 127.0.0.1)."),
    port: z
      .number()
      .int()
      .min(0)
      .max(65_535)
      .optional()
      .describe("Events mode: the events endpoint's port (default 0: a free one, printed at start)."),
    apiBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
  })
  .superRefine((value, ctx) => {
    requireOpenAllowFrom(value, ctx);
  });

/**
 * The local web chat. Its gate is the bearer token on a loopback port, so
 * when neither `dmPolicy` nor `allowFrom` is written it is `open` with
 * `allowFrom: ["*"]` (the pair OpenClaw's rule asks for); whatever is written
 * follows the rule like any channel. Its senders are not owners, so its
 * sessions get no unsandboxed host tools unless `nonOwnerHostTools` says so.
 */
export const webchatChannel = z
  .strictObject({
    ...commonChannelFields,
    // The default is applied below (it decides allowFrom's default too); `meta` shows it in the JSON Schema.
    dmPolicy: z.enum(["pairing", "allowlist", "open", "disabled"]).optional().meta({ default: "open" }),
    host: nonEmptyString.default(WEBCHAT_DEFAULTS.host).describe("Bind address; loopback by default."),
    port: z.number().int().min(0).max(65_535).default(WEBCHAT_DEFAULTS.port),
    token: nonEmptyString.optional().describe("Bearer token a browser must present; generated when unset."),
  })
  .transform((value, ctx) => {
    const defaulted = value.dmPolicy === undefined;
    const allowFrom = value.allowFrom ?? (defaulted ? ["*"] : undefined);
    const channel = {
      ...value,
      dmPolicy: value.dmPolicy ?? "open",
      ...(allowFrom === undefined ? {} : { allowFrom }),
    };
    requireOpenAllowFrom(channel, ctx, defaulted);
    return channel;
  });

export const channelsConfig = z
  .strictObject({
    telegram: telegramChannel.optional(),
    slack: slackChannel.optional(),
    webchat: webchatChannel.optional(),
  })
  .catchall(genericChannel)
  .describe("Chat channels by id.");

export const binding = z.strictObject({
  agentId,
  match: z.strictObject({
    channel: nonEmptyString,
    accountId: nonEmptyString.optional(),
    peer: z.strictObject({ kind: z.enum(["direct", "group", "channel"]), id: peerId }).optional(),
    guildId: nonEmptyString.optional(),
    teamId: nonEmptyString.optional(),
  }),
});

export type ChannelConfig = z.output<typeof genericChannel>;
export type Binding = z.output<typeof binding>;
