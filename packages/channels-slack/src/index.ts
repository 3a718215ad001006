// @agent-kernel/channels-slack: the Slack channel adapter — inbound Events API over HTTP with request signature
// verification, replay refusal and retry dedupe (kept across restarts in the session store's channel state);
// outbound Web API chat.postMessage with mrkdwn, chunking that never breaks a code fence, threads, uploads,
// edits and rate-limit handling.
export {
  createSlackChannel,
  DEFAULT_SLACK_EVENTS_PATH,
  SLACK_MAX_TEXT_LENGTH,
  type SlackChannel,
} from "./channel.ts";
export {
  type SlackChannelConfig,
  type SlackChannelOptions,
  slackOptionsFromConfig,
} from "./channel-options.ts";
export {
  SLACK_DEDUPE_KEY_PREFIX,
  SLACK_DEDUPE_TTL_MS,
  type SlackChannelStateLike,
} from "./handled-log.ts";
export { escapeSlackText, formatSlackChunks, markdownToSlackMrkdwn } from "./mrkdwn.ts";
export {
  chatTypeOf,
  decodeSlackText,
  normalizeSlackEvent,
  parseMentions,
  type SlackIdentity,
} from "./normalize.ts";
export {
  computeSlackSignature,
  type SignatureCheck,
  type SignatureInput,
  SLACK_SIGNATURE_MAX_AGE_SECONDS,
  verifySlackSignature,
} from "./signature.ts";
export {
  DEFAULT_SLACK_API_BASE_URL,
  parseRetryAfter,
  SLACK_CHANNEL_ID,
  type SlackApiParams,
  type SlackApiResponse,
  SlackWebApi,
  type SlackWebApiOptions,
} from "./web-api.ts";
