// @agent-kernel/channels-core: the channel contract and what every channel shares — inbound normalisation,
// access control, routing, text limits, formatting and retry. Adapters live in channels-* packages.
export type {
  ChannelAdapter,
  ChannelCapabilities,
  ChannelStartOptions,
  ChatType,
  Conversation,
  InboundHandler,
  InboundMessage,
  MediaItem,
  MediaKind,
  Mention,
  OutboundMessage,
  OutboundTarget,
  ReplyPayload,
  Sender,
  SendResult,
  SentMessage,
} from "./contract.ts";
export { ChannelError } from "./contract.ts";
