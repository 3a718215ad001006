// HTTP 402 rules: when a 402 (or its wording without a status) is billing, a retryable quota window or a rate
// limit (OpenClaw 2026.9.6's 402 rules). Owns: that decision. Does not own: the other status rules or the
// order of classification (classify-error.ts).

import type { FailoverReason } from "./classify-error.ts";
import { isRateLimitMessage } from "./error-patterns.ts";
import { lower } from "./message-rules.ts";

type Classification = FailoverReason | null;

// 402 rules.

const includesAny = (text: string, hints: readonly string[]) => hints.some((hint) => text.includes(hint));
const BILLING_402_HINTS = [
  "insufficient credits",
  "insufficient quota",
  "credit balance",
  "insufficient balance",
  "plans & billing",
  "add more credits",
  "top up",
];
const RAW_402_MARKER =
  /["']?(?:status|code)["']?\s*[:=]\s*402\b|\bhttp\s*402\b|\berror(?:\s+code)?\s*[:=]?\s*402\b|\b(?:got|returned|received)\s+(?:a\s+)?402\b|^\s*402\s+(?:payment required\b|.*used up your points\b|no available asset for api access\b)/i;
const LEADING_402_WRAPPER =
  /^(?:error[:\s-]+)?(?:(?:http\s*)?402(?:\s+payment required)?|payment required)(?:[:\s-]+|$)/i;

function hasExplicit402Billing(text: string): boolean {
  return (
    includesAny(text, BILLING_402_HINTS) ||
    (includesAny(text, ["upgrade your plan", "upgrade plan", "current plan", "subscription"]) &&
      text.includes("limit")) ||
    text.includes("billing hard limit") ||
    text.includes("hard limit reached") ||
    (text.includes("maximum allowed") && text.includes("limit"))
  );
}
function hasQuotaRefreshWindow(text: string): boolean {
  return (
    text.includes("subscription quota limit") &&
    (text.includes("automatic quota refresh") || text.includes("rolling time window"))
  );
}
function hasRetryable402(text: string): boolean {
  const periodic = includesAny(text, ["daily", "weekly", "monthly"]);
  const spend = text.includes("spend limit") || text.includes("spending limit");
  const scoped = includesAny(text, ["organization", "workspace"]);
  return (
    (includesAny(text, ["try again", "retry", "temporary", "cooldown"]) &&
      includesAny(text, ["usage limit", "rate limit", "organization usage"])) ||
    (periodic && (text.includes("usage limit") || spend)) ||
    (periodic && text.includes("limit") && text.includes("reset")) ||
    (scoped &&
      text.includes("limit") &&
      (spend || includesAny(text, ["billing period", "exceeded", "reached", "exhausted"])))
  );
}
function normalize402(raw: string): string {
  return lower(raw)
    .replace(LEADING_402_WRAPPER, "")
    .replace(/\bhttps?:\/\/[^\s<>"']+/g, " ")
    .trim();
}
export function classify402Message(message: string): FailoverReason {
  const text = normalize402(message);
  if (!text) return "billing";
  if (hasQuotaRefreshWindow(text)) return "rate_limit";
  if (hasExplicit402Billing(text)) return "billing";
  if (isRateLimitMessage(text)) return "rate_limit";
  if (hasRetryable402(text)) return "rate_limit";
  return "billing";
}
export function reasonFrom402Text(raw: string): Classification {
  if (RAW_402_MARKER.test(raw)) return classify402Message(raw);
  if (!/^\s*402\b/i.test(raw)) return null;
  const text = normalize402(raw);
  const known =
    hasQuotaRefreshWindow(text) ||
    hasExplicit402Billing(text) ||
    isRateLimitMessage(text) ||
    hasRetryable402(text);
  return text && known ? classify402Message(raw) : null;
}
