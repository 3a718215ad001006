// The public one-table error predicates under OpenClaw 2026.9.6's names
// (`src/agents/failover/message-patterns.ts`, `classify-core.ts`). Owns: the
// exported face of those predicates and the image-dimension check the format
// predicate excludes. Does not own: the wording tables (error-patterns.ts) or
// the order in which classification consults them (classify-error.ts).
import {
  isAuthMessage,
  isAuthPermanentMessage,
  isBillingMessage,
  isFormatMessage,
  isOverloadedMessage,
  isRateLimitMessage,
  isTimeoutMessage,
} from "./error-patterns.ts";

/** True when a provider error message reads as a rate limit (429, quota, throttling, TPM wording). */
export function isRateLimitErrorMessage(raw: string | undefined): boolean {
  return isRateLimitMessage(raw);
}

/** True when a provider error message reads as a timeout or a dropped connection or stream. */
export function isTimeoutErrorMessage(raw: string | undefined): boolean {
  return isTimeoutMessage(raw);
}

/** True when a provider error message reads as a billing problem (402, credits, balance, plan); a document with several `## ` headings never counts. */
export function isBillingErrorMessage(raw: string | undefined): boolean {
  return isBillingMessage(raw);
}

/** True when a provider error message reads as an authentication or permission failure (invalid key, 401/403, expired token). */
export function isAuthErrorMessage(raw: string | undefined): boolean {
  return isAuthMessage(raw);
}

/** True when a provider error message says the credential is gone for good (revoked, deactivated, disabled key or account). */
export function isAuthPermanentErrorMessage(raw: string | undefined): boolean {
  return isAuthPermanentMessage(raw);
}

/** True when a provider error message reads as overload or lack of capacity (overloaded, service unavailable, high demand). */
export function isOverloadedErrorMessage(raw: string | undefined): boolean {
  return isOverloadedMessage(raw);
}

/** True for Anthropic's many-image "image dimensions exceed max allowed size" rejection. */
export function isImageDimensionErrorMessage(raw: string | undefined): boolean {
  return raw ? /image dimensions exceed max allowed size/i.test(raw) : false;
}

/**
 * True when a provider error message reads as a malformed request (tool_use id
 * mismatches, invalid request format, prefill refused), the shape Cloud Code
 * Assist and Anthropic return; an image-dimension rejection never counts.
 */
export function isCloudCodeAssistFormatError(raw: string | undefined): boolean {
  return !isImageDimensionErrorMessage(raw) && isFormatMessage(raw);
}
