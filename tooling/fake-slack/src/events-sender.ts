// The Events API sender: POSTs `event_callback` and `url_verification` requests to an app's endpoint signed as
// Slack signs them (`X-Slack-Signature`, `X-Slack-Request-Timestamp`, retry headers), with the knobs a test
// needs to forge, age or replay a request. Owns building, signing and sending; the HMAC itself is signing.ts's,
// Socket Mode delivery socket-mode.ts's.
import { randomBytes } from "node:crypto";
import type { SlackIdentity } from "./identity.ts";
import type { SlackParams } from "./request-params.ts";
import { signSlackRequest } from "./signing.ts";

export interface DeliverOptions {
  readonly eventId?: string;
  /** Request timestamp in seconds (default now): an old one makes a stale request. */
  readonly timestampSeconds?: number;
  /** Sign with this secret instead of the app's (a forged request). */
  readonly forgeWithSecret?: string;
  /** Send exactly this signature header. */
  readonly signature?: string;
  /** `X-Slack-Retry-Num` (and `X-Slack-Retry-Reason: http_timeout`). */
  readonly retryNum?: number;
  /** Send this raw body instead of the envelope built from the event. */
  readonly rawBody?: string;
}

export interface DeliveryResult {
  readonly status: number;
  readonly body: string;
  readonly eventId: string;
  /** The exact request sent, so a test can replay it byte for byte. */
  readonly request: { readonly body: string; readonly headers: Readonly<Record<string, string>> };
}

export class EventsSender {
  readonly #identity: SlackIdentity;
  readonly #nextEventNumber: () => number;

  /** `nextEventNumber` is shared with Socket Mode, so event ids count across both. */
  constructor(identity: SlackIdentity, nextEventNumber: () => number) {
    this.#identity = identity;
    this.#nextEventNumber = nextEventNumber;
  }

  /** POSTs a signed `event_callback` wrapping `event` to `url`. */
  deliverEvent(url: string, event: SlackParams, deliver: DeliverOptions = {}): Promise<DeliveryResult> {
    const eventNumber = this.#nextEventNumber();
    const { teamId, appId, botUserId } = this.#identity;
    const eventId =
      deliver.eventId ??
      `Ev${String(eventNumber).padStart(8, "0")}${randomBytes(2).toString("hex").toUpperCase()}`;
    const body =
      deliver.rawBody ??
      JSON.stringify({
        token: "verification-token-unused",
        team_id: teamId,
        api_app_id: appId,
        event,
        type: "event_callback",
        event_id: eventId,
        event_time: Math.floor(Date.now() / 1000),
        authorizations: [{ team_id: teamId, user_id: botUserId, is_bot: true }],
      });
    return this.#sendSigned(url, body, eventId, deliver);
  }

  /** POSTs a signed `url_verification` challenge. */
  sendUrlVerification(url: string, challenge: string, deliver: DeliverOptions = {}): Promise<DeliveryResult> {
    const body = JSON.stringify({
      token: "verification-token-unused",
      challenge,
      type: "url_verification",
    });
    return this.#sendSigned(url, body, "", deliver);
  }

  /** Re-sends a request exactly as it was (a replay attack). */
  replay(url: string, request: DeliveryResult["request"]): Promise<{ status: number; body: string }> {
    return post(url, request.body, { ...request.headers });
  }

  async #sendSigned(
    url: string,
    body: string,
    eventId: string,
    deliver: DeliverOptions,
  ): Promise<DeliveryResult> {
    const headers = this.#signedHeaders(body, "application/json", deliver);
    const result = await post(url, body, headers);
    return { ...result, eventId, request: { body, headers } };
  }

  #signedHeaders(body: string, contentType: string, deliver: DeliverOptions): Record<string, string> {
    const timestamp = deliver.timestampSeconds ?? Math.floor(Date.now() / 1000);
    const signature =
      deliver.signature ??
      signSlackRequest(deliver.forgeWithSecret ?? this.#identity.signingSecret, timestamp, body);
    const headers: Record<string, string> = {
      "content-type": contentType,
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": signature,
      "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    };
    if (deliver.retryNum !== undefined) {
      headers["x-slack-retry-num"] = String(deliver.retryNum);
      headers["x-slack-retry-reason"] = "http_timeout";
    }
    return headers;
  }
}

async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { method: "POST", headers, body });
  return { status: response.status, body: await response.text() };
}
