// Provider error text, HTTP status, error code and API error type → one
// failover reason, with the precedence of OpenClaw 2026.9.6
// (`src/agents/failover/classify-core.ts`, `classification-rules.ts`,
// `context-overflow.ts`). Owns: the order in which the tables of
// error-patterns.ts and the rules of message-rules.ts, context-overflow.ts
// and billing-402.ts are consulted, and the status rules. Does not own: JSON
// envelope parsing (error-envelope.ts) or what to do about a reason
// (recovery.ts). Provider plugin hooks do not exist here; OpenClaw without
// plugins loaded is the target.
import { classify402Message, reasonFrom402Text } from "./billing-402.ts";
import { isContextOverflowError } from "./context-overflow.ts";
import { extractLeadingHttpStatus, parseApiErrorInfo } from "./error-envelope.ts";
import {
  ERROR_PATTERNS,
  isAuthMessage,
  isAuthPermanentMessage,
  isBillingMessage,
  isFormatMessage,
  isOverloadedMessage,
  isProviderFinishReasonErrorMessage,
  isRateLimitMessage,
  isServerErrorMessage,
  isTimeoutMessage,
  isTlsCertificateFailure,
  matchesAny,
  matchesOverflowScope,
  PERIODIC_USAGE_LIMIT,
} from "./error-patterns.ts";
import { isImageDimensionErrorMessage } from "./error-predicates.ts";
import {
  isClaudeCliAuthError,
  isGenericProviderInternalError,
  isImageSizeError,
  isJsonApiInternalServerError,
  isModelNotFoundMessage,
  isOAuthRefreshFailure,
  isReplayInvalid,
  isSessionExpiredMessage,
  isStructuredServerError,
  isUnsupportedImageInput,
  lower,
  PROVIDER_SPECIFIC,
  reasonFromCode,
  reasonFromErrorType,
} from "./message-rules.ts";

export {
  isCompactionFailureError,
  isContextOverflowError,
  isLikelyContextOverflowError,
  isReasoningConstraintMessage,
} from "./context-overflow.ts";
export { type ApiErrorInfo, extractLeadingHttpStatus, parseApiErrorInfo } from "./error-envelope.ts";
export { isModelNotFoundMessage } from "./message-rules.ts";

export const FAILOVER_REASONS = [
  "auth",
  "auth_permanent",
  "format",
  "rate_limit",
  "overloaded",
  "billing",
  "server_error",
  "timeout",
  "tls_certificate",
  "context_overflow",
  "model_not_found",
  "session_expired",
  "empty_response",
  "no_error_details",
  "unclassified",
  "unknown",
] as const;
export type FailoverReason = (typeof FAILOVER_REASONS)[number];

/** What a provider failure looks like from the outside; every field optional. */
export interface FailoverSignal {
  /** The error text (pi-ai's `errorMessage`, e.g. `429: {"message":...}`). */
  readonly message?: string | undefined;
  /** An explicit HTTP status; else a leading `NNN` in the message is used. */
  readonly status?: number | undefined;
  readonly provider?: string | undefined;
  /** A Node/undici error code or a provider code (`RESOURCE_EXHAUSTED`, `ECONNRESET`). */
  readonly code?: string | undefined;
  /** A provider API error type (`invalid_request_error`, `overloaded_error`). */
  readonly errorType?: string | undefined;
  /** Extra messages (nested causes), consulted after the main message. */
  readonly details?: readonly string[] | undefined;
}

type Classification = FailoverReason | null;

// ---------------------------------------------------------------------------
// ---------------------------------------------------------------------------
// ---------------------------------------------------------------------------
// ---------------------------------------------------------------------------
// Status rules.

const NO_BODY_WRAPPER = /^(?:no body(?: response)?|no response body|status code \(no body\))$/i;
const stripErrorPrefix = (raw: string) => raw.replace(/^error:\s*/i, "").trim();

function inferStatus(signal: FailoverSignal): number | undefined {
  if (typeof signal.status === "number" && Number.isFinite(signal.status)) return signal.status;
  return extractLeadingHttpStatus(stripErrorPrefix(signal.message?.trim() ?? ""))?.code;
}

function isNoBodyHttpMessage(raw: string | undefined, status: number | undefined): boolean {
  const trimmed = raw?.trim();
  if (!trimmed) return false;
  const candidate = extractLeadingHttpStatus(trimmed) ? trimmed : stripErrorPrefix(trimmed);
  const leading = extractLeadingHttpStatus(candidate);
  if (leading) {
    if (typeof status === "number" && leading.code !== status) return false;
    return NO_BODY_WRAPPER.test(leading.rest);
  }
  return NO_BODY_WRAPPER.test(candidate);
}

function isUnclassifiedNoBody(status: number | undefined, message: string | undefined): boolean {
  if (status !== 400 && status !== 422) return false;
  const trimmed = message?.trim();
  return !trimmed || isNoBodyHttpMessage(trimmed, status);
}

function hasBillingApiErrorType(raw: string): boolean {
  const type = lower(parseApiErrorInfo(raw)?.type);
  return type !== "" && (isBillingMessage(type) || isBillingMessage(type.replaceAll("_", " ")));
}
function isAmbiguous429Balance(raw: string): boolean {
  if (!/\binsufficient\s+account\s+balance\b/i.test(raw)) return false;
  if (hasBillingApiErrorType(raw)) return false;
  const leading = extractLeadingHttpStatus(raw.trim());
  return !(leading?.rest && hasBillingApiErrorType(leading.rest));
}
function isBilling429ForProvider(raw: string, provider: string | undefined): boolean {
  if (!isBillingMessage(raw)) return false;
  const p = lower(provider);
  const override = p !== "" && (p.includes("xai") || p.includes("moonshot") || p.includes("kimi"));
  return override || !isAmbiguous429Balance(raw);
}

function classifyByStatus(
  status: number | undefined,
  message: string | undefined,
  messageReason: Classification,
  explicitStatus: number | undefined,
  provider: string | undefined,
): Classification {
  if (typeof status !== "number" || !Number.isFinite(status)) return null;
  if (status === 402) {
    if (!message) return "billing";
    if (extractLeadingHttpStatus(message.trim())?.code === 402) {
      const from402 = reasonFrom402Text(message);
      if (from402) return from402;
      return typeof explicitStatus === "number" ? classify402Message(message) : messageReason;
    }
    return classify402Message(message);
  }
  if (status === 429) {
    if (messageReason === "billing" && !isAmbiguous429Balance(message ?? "")) return "billing";
    if (message && isBilling429ForProvider(message, provider)) return "billing";
    return "rate_limit";
  }
  if (status === 401 || status === 403) {
    if (message && isAuthPermanentMessage(message)) return "auth_permanent";
    if (messageReason === "billing") return "billing";
    return "auth";
  }
  if (status === 408) return "timeout";
  if (status === 410) {
    return messageReason === "session_expired" ||
      messageReason === "billing" ||
      messageReason === "auth_permanent" ||
      messageReason === "auth"
      ? messageReason
      : "timeout";
  }
  if (messageReason === "context_overflow") return messageReason;
  if (status === 404) {
    return messageReason === "session_expired" ||
      messageReason === "billing" ||
      messageReason === "auth_permanent" ||
      messageReason === "auth" ||
      messageReason === "format"
      ? messageReason
      : "model_not_found";
  }
  if (status === 529) return "overloaded";
  if (status === 499 || (status >= 500 && status < 600)) {
    if (
      messageReason === "overloaded" ||
      messageReason === "server_error" ||
      (status >= 500 && messageReason === "format")
    ) {
      return messageReason;
    }
    return status === 499 || status === 504 || status === 522 || status === 524 ? "timeout" : "server_error";
  }
  if (status === 400 || status === 422) {
    if (messageReason && messageReason !== "server_error") return messageReason;
    if (isUnclassifiedNoBody(status, message)) return null;
    return "format";
  }
  return null;
}

// ---------------------------------------------------------------------------
// The message path, then the signal (message + status + code + type).

function classifyMessage(
  raw: string,
  provider: string | undefined,
  errorType: string | undefined,
): Classification {
  if (isImageDimensionErrorMessage(raw) || isImageSizeError(raw)) return null;
  if (isUnsupportedImageInput(raw)) return "format";
  if (isClaudeCliAuthError(raw, provider)) return "auth";
  if (/\binvalid session transcript entry\b/i.test(raw)) return "format";
  if (isSessionExpiredMessage(raw)) return "session_expired";
  if (isModelNotFoundMessage(raw)) return "model_not_found";
  const specific = PROVIDER_SPECIFIC.find((row) => row.test.test(raw));
  if (specific) return specific.reason;
  if (isContextOverflowError(raw)) return "context_overflow";
  if (isReplayInvalid(raw)) return "format";
  const from402 = reasonFrom402Text(raw);
  if (from402) return from402;
  if (extractLeadingHttpStatus(raw.trim())?.code !== 429 && isBillingMessage(raw)) return "billing";
  if (PERIODIC_USAGE_LIMIT.test(raw)) return isBillingMessage(raw) ? "billing" : "rate_limit";
  if (isRateLimitMessage(raw)) return "rate_limit";
  if (isOverloadedMessage(raw)) return "overloaded";
  if (isProviderFinishReasonErrorMessage(raw)) return "server_error";
  if (
    isStructuredServerError(raw) &&
    !isBillingMessage(raw) &&
    !isAuthPermanentMessage(raw) &&
    !isAuthMessage(raw)
  ) {
    return "server_error";
  }
  if (isGenericProviderInternalError(raw)) return "timeout";
  if (isOAuthRefreshFailure(raw)) return "auth_permanent";
  if (isAuthPermanentMessage(raw)) return "auth_permanent";
  if (isAuthMessage(raw)) return "auth";
  if (/^\s*an unknown error occurred\.?\s*$/i.test(raw)) return "timeout";
  if (isServerErrorMessage(raw)) return "timeout";
  if (isJsonApiInternalServerError(raw)) return "timeout";
  if (!isImageDimensionErrorMessage(raw) && isFormatMessage(raw)) return "format";
  if (lower(raw) === "unknown error (no error details in response)") return "no_error_details";
  if (isTimeoutMessage(raw)) return "timeout";
  if (matchesOverflowScope(raw, "assistant-error")) return "context_overflow";
  const apiReason = reasonFromErrorType(parseApiErrorInfo(raw)?.type ?? errorType);
  if (apiReason) return apiReason;
  return classifyByStatus(inferStatus({ message: raw }), raw, null, undefined, provider);
}

function mergeWithDetail(message: Classification, detail: Classification): Classification {
  if (!message) return detail;
  if (!detail) return message;
  if (message === "context_overflow") return message;
  if (detail === "context_overflow") return detail;
  if (detail === "billing" && message === "rate_limit") return detail;
  return message === "format" ? detail : message;
}

const HTML_BODY = /^\s*(?:<!doctype\s+html\b|<html\b)/i;
function isHtmlErrorResponse(raw: string, status: number | undefined): boolean {
  const trimmed = raw.trim();
  if (!trimmed) return false;
  const candidate = extractLeadingHttpStatus(trimmed) ? trimmed : stripErrorPrefix(trimmed);
  const inferred =
    typeof status === "number" && Number.isFinite(status)
      ? status
      : extractLeadingHttpStatus(candidate)?.code;
  if (typeof inferred !== "number" || inferred < 400) return false;
  const rest = extractLeadingHttpStatus(candidate)?.rest ?? candidate;
  return HTML_BODY.test(rest) && /<\/html>/i.test(rest);
}

/**
 * The failover reason of a provider failure, or null when it is none of
 * them (the caller surfaces it as is). Matches OpenClaw 2026.9.6's
 * `classifyFailoverSignal` with no provider plugins loaded.
 */
export function classifyFailover(signal: FailoverSignal): FailoverReason | null {
  const inferredStatus = inferStatus(signal);
  const messageReason = signal.message
    ? classifyMessage(signal.message, signal.provider, signal.errorType)
    : null;
  let detailReason: Classification = null;
  for (const detail of signal.details ?? []) {
    detailReason = classifyMessage(detail, signal.provider, undefined);
    if (detailReason) break;
  }
  const messageOrDetail = mergeWithDetail(messageReason, detailReason);
  if (inferredStatus === undefined && isTlsCertificateFailure(signal.code, signal.message))
    return "tls_certificate";
  if (
    signal.message &&
    (inferredStatus === 408 ||
      inferredStatus === 499 ||
      (inferredStatus !== undefined && inferredStatus >= 500 && inferredStatus < 600)) &&
    isHtmlErrorResponse(signal.message, inferredStatus)
  ) {
    return classifyByStatus(inferredStatus, undefined, null, signal.status, signal.provider);
  }
  const codeReason = reasonFromCode(signal.code) ?? reasonFromCode(parseApiErrorInfo(signal.message)?.code);
  const effective =
    codeReason === "format"
      ? "format"
      : mergeWithDetail(messageOrDetail ?? reasonFromErrorType(signal.errorType), codeReason);
  if (codeReason === "auth_permanent") return codeReason;
  const byStatus = classifyByStatus(
    inferredStatus,
    signal.message,
    effective,
    signal.status,
    signal.provider,
  );
  if (byStatus) return byStatus;
  if (codeReason) return codeReason;
  return effective;
}

/** OpenClaw's reason → HTTP-like status (`resolveFailoverStatus`); undefined for reasons without one. */
export function failoverStatus(reason: FailoverReason): number | undefined {
  return FAILOVER_STATUS[reason];
}

const FAILOVER_STATUS: Partial<Record<FailoverReason, number>> = {
  billing: 402,
  server_error: 500,
  rate_limit: 429,
  overloaded: 503,
  auth: 401,
  auth_permanent: 403,
  timeout: 408,
  tls_certificate: 502,
  context_overflow: 413,
  format: 400,
  model_not_found: 404,
  session_expired: 410,
};

// Re-exported for tests and the benchmark baseline.
export { ERROR_PATTERNS, matchesAny };
