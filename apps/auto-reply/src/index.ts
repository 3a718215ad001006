// @agent-kernel/auto-reply: the gateway daemon — the configured channels' messages through access control and
// routing into kernel turns, replies streamed back to the conversation. IO and routing only; every turn goes
// through the kernel's prepareSession → executeTurn.

export { type ChannelsFromConfigOptions, channelsFromConfig } from "./channels.ts";
export {
  AUTO_REPLY_DELIVERY_POLICY,
  type DeliveryPolicy,
  finalPayloadsToSend,
  outboundFor,
  targetFor,
  userFacingError,
  userFacingErrorClasses,
} from "./delivery.ts";
export {
  type AutoReplyGateway,
  type AutoReplyGatewayOptions,
  type BusyMessage,
  createAutoReplyGateway,
  ENTRY_POINT,
  type HandledTurn,
  promptOf,
} from "./gateway.ts";
export { Inbox, type InboxEntry } from "./inbox.ts";
export {
  type AccessContext,
  type AccessHook,
  type AccessVerdict,
  defaultAccess,
  defaultRoute,
  peerSessionKey,
  type Route,
  type RouteHook,
  SESSION_KEY_BUILDERS,
} from "./routing.ts";
export {
  isRetryableStartError,
  STARTUP_EXIT,
  type StartWithRetryOptions,
  servedUrls,
  startupFailure,
  startWithRetry,
  turnLine,
} from "./startup.ts";
