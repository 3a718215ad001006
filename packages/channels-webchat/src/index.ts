// @agent-kernel/channels-webchat: a local web chat channel — an HTTP + SSE server on loopback with token auth
// and a small page that streams block replies as they arrive.
export {
  createWebchatChannel,
  isLoopbackHost,
  WEBCHAT_CHANNEL_ID,
  WEBCHAT_MAX_TEXT_LENGTH,
  type WebchatChannel,
  type WebchatChannelConfig,
  type WebchatChannelOptions,
  webchatOptionsFromConfig,
} from "./channel.ts";
export {
  ConversationHub,
  type ConversationHubOptions,
  type Subscriber,
  sseFrame,
  type WebchatEvent,
  type WebchatEventType,
} from "./conversation-hub.ts";
export { CONTENT_SECURITY_POLICY } from "./page.ts";
