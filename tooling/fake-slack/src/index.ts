// @agent-kernel/fake-slack: a local fake of the Slack Web API and the Events API sender (same HTTP wire format,
// real request signatures) for adapter tests.
// Usage: `const slack = await startFakeSlack()`, point the adapter's `apiBaseUrl` at `slack.apiBaseUrl`, deliver
// events with `slack.deliverEvent(endpointUrl, event)`, assert on `slack.calls` / `slack.messages`, then
// `await slack.close()`.
export {
  type DeliverOptions,
  type DeliveryResult,
  type FakeSlack,
  type FakeSlackOptions,
  type PostedMessage,
  type RecordedCall,
  SLACK_MAX_TEXT,
  type SlackFault,
  type SlackParams,
  type SocketAck,
  type SocketDeliverOptions,
  startFakeSlack,
  type UploadedFile,
} from "./server.ts";
export { signSlackRequest } from "./signing.ts";
