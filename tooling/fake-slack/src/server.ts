// The fake Slack's face: `startFakeSlack` wires the parts together and returns the control API tests drive it
// through. The parts: a real HTTP server on 127.0.0.1 speaking the Slack Web API wire format with fault
// injection and a record of every call (http-front.ts, faults.ts, request-params.ts), the methods the adapter
// uses (web-api-methods.ts: auth.test, chat.postMessage, chat.update, reactions.add; file-uploads.ts: the
// files.uploadV2 flow and files.upload), Socket Mode (socket-mode.ts over websocket.ts) and the Events API
// sender with real signatures (events-sender.ts, signing.ts). Owns the options and the control API; does not
// own any adapter logic.
import { type DeliverOptions, type DeliveryResult, EventsSender } from "./events-sender.ts";
import { FaultQueue, type SlackFault } from "./faults.ts";
import { FileUploads, type UploadedFile } from "./file-uploads.ts";
import { type FileDownload, type HostedFileInput, HostedFiles } from "./hosted-files.ts";
import { listenSlackApi, type RecordedCall } from "./http-front.ts";
import { type FakeSlackOptions, resolveIdentity } from "./identity.ts";
import type { SlackParams } from "./request-params.ts";
import { type SocketAck, type SocketDeliverOptions, SocketMode } from "./socket-mode.ts";
import { type PostedMessage, WebApiMethods } from "./web-api-methods.ts";

export type { DeliverOptions, DeliveryResult } from "./events-sender.ts";
export type { SlackFault } from "./faults.ts";
export type { UploadedFile } from "./file-uploads.ts";
export type { FileDownload, HostedFileInput } from "./hosted-files.ts";
export type { RecordedCall } from "./http-front.ts";
export type { FakeSlackOptions } from "./identity.ts";
export type { SlackParams } from "./request-params.ts";
export type { SocketAck, SocketDeliverOptions } from "./socket-mode.ts";
export { type PostedMessage, SLACK_MAX_TEXT } from "./web-api-methods.ts";

export interface FakeSlack {
  /** Base URL of the Web API, ending in `/api/`: `${apiBaseUrl}chat.postMessage`. */
  readonly apiBaseUrl: string;
  readonly origin: string;
  readonly botToken: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly teamId: string;
  readonly signingSecret: string;
  readonly appToken: string;
  readonly calls: readonly RecordedCall[];
  /** Socket Mode connections opened so far (reconnects count). */
  readonly socketConnections: number;
  /** Socket Mode connections open now. */
  readonly openSockets: number;
  readonly messages: readonly PostedMessage[];
  readonly files: readonly UploadedFile[];
  /** Downloads of hosted files (`hostFile`), in order, with the token each bore. */
  readonly fileDownloads: readonly FileDownload[];
  /**
   * Hosts a file someone shared: returns its Slack file object (`url_private`, `mimetype`, `size`, …) to put in a
   * `message` event's `files`. Its URL serves the bytes to the bot token only (Slack's sign-in page otherwise).
   */
  hostFile(file: HostedFileInput): SlackParams;
  /** Calls of one method. */
  callsTo(method: string): RecordedCall[];
  /** Fails the next `times` (default 1) calls of `method` (or of any method with `*`). */
  failNext(method: string, fault: SlackFault, times?: number): void;
  /** POSTs a signed `event_callback` wrapping `event` to `url`. */
  deliverEvent(url: string, event: SlackParams, options?: DeliverOptions): Promise<DeliveryResult>;
  /** POSTs a signed `url_verification` challenge. */
  sendUrlVerification(url: string, challenge: string, options?: DeliverOptions): Promise<DeliveryResult>;
  /** Sends an `events_api` envelope over the newest Socket Mode connection; resolves with the client's ack. */
  deliverSocketEvent(event: SlackParams, options?: SocketDeliverOptions): Promise<SocketAck>;
  /** Waits until a Socket Mode connection is open (default 10 s). */
  waitForSocket(timeoutMs?: number): Promise<void>;
  /** Sends `disconnect` (Slack's refresh) on every open connection and closes them. */
  disconnectSockets(reason?: string): void;
  /** Re-sends a request exactly as it was (a replay attack). */
  replay(url: string, request: DeliveryResult["request"]): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const identity = resolveIdentity(options);
  let origin = "";
  // one count for HTTP and Socket Mode deliveries, so generated event ids never repeat across the two
  let eventCounter = 0;
  const nextEventNumber = (): number => ++eventCounter;
  const calls: RecordedCall[] = [];
  const faults = new FaultQueue();
  const uploads = new FileUploads(() => origin);
  const hostedFiles = new HostedFiles(() => origin, identity.teamId, identity.botToken);
  const socketMode = new SocketMode(identity, () => origin, nextEventNumber);
  const methods = new WebApiMethods(identity, uploads, socketMode);
  const sender = new EventsSender(identity, nextEventNumber);
  const front = await listenSlackApi({ calls, faults, methods, uploads, hostedFiles, socketMode });
  origin = front.origin;

  return {
    apiBaseUrl: `${origin}/api/`,
    origin,
    botToken: identity.botToken,
    botUserId: identity.botUserId,
    botId: identity.botId,
    teamId: identity.teamId,
    signingSecret: identity.signingSecret,
    appToken: identity.appToken,
    calls,
    messages: methods.messages,
    files: uploads.files,
    fileDownloads: hostedFiles.downloads,
    hostFile: (file) => hostedFiles.host(file),
    callsTo: (method) => calls.filter((c) => c.method === method),
    failNext: (method, fault, times = 1) => faults.add(method, fault, times),
    deliverEvent: (url, event, deliver) => sender.deliverEvent(url, event, deliver),
    sendUrlVerification: (url, challenge, deliver) => sender.sendUrlVerification(url, challenge, deliver),
    replay: (url, request) => sender.replay(url, request),
    get socketConnections() {
      return socketMode.connections;
    },
    get openSockets() {
      return socketMode.openCount;
    },
    deliverSocketEvent: (event, deliver) => socketMode.deliver(event, deliver),
    waitForSocket: (timeoutMs) => socketMode.waitForSocket(timeoutMs),
    disconnectSockets: (reason) => socketMode.disconnectAll(reason),
    close: () => front.close(),
  };
}
