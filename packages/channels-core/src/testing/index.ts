// @agent-kernel/channels-core/testing: an in-memory channel adapter for tests, apps and the parity harness.
export {
  type CapturedMessage,
  type InboundDraft,
  TestChannel,
  type TestChannelOptions,
} from "./test-channel.ts";
