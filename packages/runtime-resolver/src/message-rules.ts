// Message predicates of failover classification that are not plain tables: image size and input, CLI auth,
// session expiry, model not found, provider-specific wordings, invalid replays, generic internal errors,
// OAuth refresh failures, structured server errors, and reasons from an API error type or code. Owns those
// predicates. Does not own: the wording tables (error-patterns.ts) or the order in which classification
// consults them (classify-error.ts).

import type { FailoverReason } from "./classify-error.ts";
import { parseApiErrorInfo } from "./error-envelope.ts";
import {
  isAuthMessage,
  isAuthPermanentMessage,
  isBillingMessage,
  TRANSIENT_NETWORK_CODES,
} from "./error-patterns.ts";

type Classification = FailoverReason | null;

// Message predicates that are not plain tables.

export const lower = (raw: string | undefined): string => (raw ?? "").trim().toLowerCase();

export function isImageSizeError(raw: string): boolean {
  return /image exceeds[\s\S]*mb/i.test(raw);
}
export function isUnsupportedImageInput(raw: string): boolean {
  const value = lower(raw);
  return (
    /\bdoes not support image inputs?\b/.test(value) ||
    /\bunsupported image input\b/.test(value) ||
    (/\bno endpoints found\b/.test(value) && /\bsupport image input\b/.test(value))
  );
}
export function isClaudeCliAuthError(raw: string, provider: string | undefined): boolean {
  if (lower(provider) !== "claude-cli") return false;
  return /\bnot logged in\b\s*·\s*please run \/login\b|\bfailed to authenticate:\s*oauth session expired and could not be refreshed\b/i.test(
    raw,
  );
}
export function isSessionExpiredMessage(raw: string): boolean {
  return /\b(?:session (?:not found|does not exist|expired|invalid)|conversation (?:not found|does not exist|expired|invalid)|no conversation found|no such session|invalid session|(?:session|conversation) id not found)\b/.test(
    lower(raw),
  );
}

/** A missing, retired or unknown model id. */
export function isModelNotFoundMessage(raw: string): boolean {
  const msg = raw.trim();
  if (!msg) return false;
  const notFound = /not(?:[_\-\s])?found/i;
  return (
    /no endpoints found for/i.test(msg) ||
    /\brouter not found\b/i.test(msg) ||
    /unknown model/i.test(msg) ||
    /model(?:[_\-\s])?not(?:[_\-\s])?found|\bmodel\b.{0,60}?\bnot found\b/i.test(msg) ||
    (/\b404\b/.test(msg) && notFound.test(msg)) ||
    /not_found_error/i.test(msg) ||
    /\bnot supported model\b/i.test(msg) ||
    /\bmodel\b[^.]{0,120}?\bis not supported when using\b[^.]{0,80}?\bwith a ChatGPT account\b/i.test(msg) ||
    (/model:\s*[a-z0-9._/-]+/i.test(msg) && notFound.test(msg)) ||
    /models\/[^\s]+ is not found/i.test(msg) ||
    (/model/i.test(msg) && /does not exist/i.test(msg)) ||
    (/selected model/i.test(msg) && notFound.test(msg)) ||
    (/model/i.test(msg) && /deprecated/i.test(msg) && /(upgrade|transition) to/i.test(msg)) ||
    (/stealth model/i.test(msg) && /find it here/i.test(msg)) ||
    /is not a valid model id/i.test(msg) ||
    (/invalid model/i.test(msg) && !/invalid model reference/i.test(msg))
  );
}

export const PROVIDER_SPECIFIC: readonly { test: RegExp; reason: FailoverReason }[] = [
  { test: /\bworkers_ai\b.*\bquota limit exceeded\b/i, reason: "rate_limit" },
  { test: /\bmodelnotreadyexception\b/i, reason: "overloaded" },
  { test: /model(?:_is)?_deactivated|model has been deactivated/i, reason: "model_not_found" },
];

const REPLAY_INVALID =
  /\bprevious_response_id\b.*\b(?:invalid|unknown|not found|does not exist|expired|mismatch)\b|\btool_(?:use|call)\.(?:input|arguments)\b.*\b(?:missing|required)\b|\bincorrect role information\b|\broles must alternate\b|\binput item id does not belong to this connection\b/i;
export function isReplayInvalid(raw: string): boolean {
  return (
    REPLAY_INVALID.test(raw) ||
    (/\bthinking\b/i.test(raw) &&
      /\b(?:invalid|expired)\b.*\bsignature\b|\bsignature\b.*\b(?:invalid|expired)\b/i.test(raw))
  );
}

export function isGenericProviderInternalError(raw: string): boolean {
  const trimmed = raw.trim();
  return (
    /an error occurred while processing your request/i.test(trimmed) &&
    (/help\.openai\.com/i.test(trimmed) ||
      /(?:request[\s_-]*id)\s*[:#]?\s*([a-z0-9][a-z0-9_-]{6,}[a-z0-9])/i.test(trimmed))
  );
}

export function isOAuthRefreshFailure(raw: string): boolean {
  const value = raw.toLowerCase();
  const isFailure =
    value.includes("oauth token refresh failed") ||
    value.includes("access token could not be refreshed") ||
    value.includes("authentication session could not be refreshed automatically") ||
    /\bclaude-cli\b.+?\b(failed to authenticate|401\s+invalid authentication credentials)\b/is.test(raw);
  if (!isFailure) return false;
  return (
    [
      "refresh_token_reused",
      "refresh_token_expired",
      "invalid_grant",
      "token_invalidated",
      "sign_in_again",
      "signing in again",
      "sign in again",
      "log in again",
      "invalid_refresh_token",
      "invalid refresh token",
      "revoked",
    ].some((marker) => value.includes(marker)) ||
    /\bclaude-cli\b.+?\b(failed to authenticate|401\s+invalid authentication credentials)\b/is.test(raw)
  );
}

export function isStructuredServerError(raw: string): boolean {
  const parsedType = lower(parseApiErrorInfo(raw)?.type);
  if (parsedType === "server_error" || parsedType === "upstream_error") return true;
  const value = lower(raw);
  return [
    '"type":"server_error"',
    '"code":"server_error"',
    '"type":"upstream_error"',
    '"code":"upstream_error"',
  ].some((marker) => value.includes(marker));
}

const API_ERROR_TRANSIENT =
  /internal server error|overload|temporarily unavailable|service unavailable|unknown error|server error|bad gateway|gateway timeout|upstream error|backend error|try again later|temporarily.+unable|unexpected error/i;
export function isJsonApiInternalServerError(raw: string): boolean {
  if (!lower(raw).includes('"type":"api_error"')) return false;
  if (isBillingMessage(raw) || isAuthMessage(raw) || isAuthPermanentMessage(raw)) return false;
  return API_ERROR_TRANSIENT.test(raw);
}

export function reasonFromErrorType(raw: string | undefined): Classification {
  switch (lower(raw)) {
    case "invalid_request_error":
      return "format";
    case "server_error":
    case "upstream_error":
      return "server_error";
    case "overloaded_error":
      return "overloaded";
    default:
      return null;
  }
}

export function reasonFromCode(raw: string | undefined): Classification {
  const code = raw?.trim().toUpperCase();
  if (!code) return null;
  switch (code) {
    case "UNKNOWN_PARAMETER":
      return "format";
    case "RESOURCE_EXHAUSTED":
    case "RATE_LIMIT":
    case "RATE_LIMITED":
    case "RATE_LIMIT_EXCEEDED":
    case "TOO_MANY_REQUESTS":
    case "THROTTLED":
    case "THROTTLING":
    case "THROTTLINGEXCEPTION":
    case "THROTTLING_EXCEPTION":
      return "rate_limit";
    case "DEACTIVATED_WORKSPACE":
      return "auth_permanent";
    case "SELECTED_AUTH_PROFILE_UNAVAILABLE":
      return "auth";
    case "OVERLOADED":
    case "OVERLOADED_ERROR":
      return "overloaded";
    default:
      return TRANSIENT_NETWORK_CODES.has(code) ? "timeout" : null;
  }
}
