// Verifying that an Events API request comes from Slack (https://api.slack.com/authentication/verifying-requests-from-slack):
// `X-Slack-Signature` must equal `v0=` + hex HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}` keyed with
// the signing secret, compared in constant time, and the timestamp must be a canonical decimal (no leading zero)
// within five minutes of now, in the past or the future. Stricter than Bolt on purpose: Bolt accepts a timestamp
// ten minutes ahead and a signature with trailing junk (`v0=<hash>=junk`); this check refuses both. Owns the check
// only; remembering signatures already accepted (replays inside the window) is the endpoint's.
import { createHmac, timingSafeEqual } from "node:crypto";

/** Slack's advice: reject requests whose timestamp is more than five minutes away from now. */
export const SLACK_SIGNATURE_MAX_AGE_SECONDS = 300;

export type SignatureCheck =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: "missing-headers" | "bad-timestamp" | "stale-timestamp" | "bad-signature";
    };

export interface SignatureInput {
  readonly signingSecret: string;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
  readonly rawBody: Buffer | string;
  /** Seconds since the epoch (default now). */
  readonly nowSeconds?: number;
  readonly maxAgeSeconds?: number;
}

export function computeSlackSignature(
  signingSecret: string,
  timestamp: string,
  rawBody: Buffer | string,
): string {
  const hmac = createHmac("sha256", signingSecret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(rawBody);
  return `v0=${hmac.digest("hex")}`;
}

export function verifySlackSignature(input: SignatureInput): SignatureCheck {
  const { timestamp, signature } = input;
  if (!timestamp || !signature) return { ok: false, reason: "missing-headers" };
  // only the canonical decimal Slack writes: no sign, no leading zero ("0123" names the same second as "123"
  // but signs a different base string, and Bolt refuses it too), no exponent or fraction
  if (!/^(?:0|[1-9]\d{0,11})$/.test(timestamp)) return { ok: false, reason: "bad-timestamp" };
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (input.maxAgeSeconds ?? SLACK_SIGNATURE_MAX_AGE_SECONDS))
    return { ok: false, reason: "stale-timestamp" };
  const expected = Buffer.from(computeSlackSignature(input.signingSecret, timestamp, input.rawBody), "utf8");
  const given = Buffer.from(signature, "utf8");
  // timingSafeEqual needs equal lengths; a length mismatch reveals nothing about the secret
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: "bad-signature" };
  return { ok: true };
}
