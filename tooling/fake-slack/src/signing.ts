// Slack request signing as Slack does it (https://api.slack.com/authentication/verifying-requests-from-slack):
// `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}` keyed with the app's signing secret. Owns only the
// sender side the fake needs; the adapter owns verification.
import { createHmac } from "node:crypto";

export function signSlackRequest(signingSecret: string, timestampSeconds: number, body: string): string {
  const digest = createHmac("sha256", signingSecret).update(`v0:${timestampSeconds}:${body}`).digest("hex");
  return `v0=${digest}`;
}
