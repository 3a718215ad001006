// Provider error text, HTTP status, error code and API error type → one
// failover reason, with the precedence of OpenClaw 2026.9.6
// (`src/agents/failover/classify-core.ts`, `classification-rules.ts`,
// `context-overflow.ts`). Owns: the order in which the tables of
// error-patterns.ts are consulted, status and code rules, JSON envelope
// parsing. Does not own: what to do about a reason (recovery.ts). Provider
// plugin hooks do not exist here; OpenClaw without plugins loaded is the target.
import {
  ERROR_PATTERNS,
  isAuthMessage,
  isAuthPermanentMessage,
  isBillingMessage,
  isFormatMessage,
  isOverloadedMessage,
  isProviderFinishReasonErrorMessage,
  isProviderRequestSizeCeilingError,
  isRateLimitMessage,
  isServerErrorMessage,
  isTimeoutMessage,
  isTlsCertificateFailure,
  matchesAny,
  matchesOverflowScope,
  PERIODIC_USAGE_LIMIT,
  TRANSIENT_NETWORK_CODES,
} from "./error-patterns.ts";
import { isImageDimensionErrorMessage } from "./error-predicates.ts";

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
// HTTP status prefixes and JSON error envelopes.

const HTTP_STATUS_CODE_PREFIX = /^(?:http\s*)?(\d{3})(?:(?:\s*:\s*|\s+)([\s\S]+))?$/i;
const ERROR_PAYLOAD_PREFIX =
  /^(?:error|(?:[a-z][\w-]*\s+)?api\s*error|apierror|openai\s*error|anthropic\s*error|gateway\s*error|codex\s*error)(?:\s+\d{3})?[:\s-]+/i;

/** `429 ...`, `HTTP 402: ...`, a bare `500` → {code, rest}; null when the text does not start with a status. */
export function extractLeadingHttpStatus(raw: string): { code: number; rest: string } | null {
  const match = raw.match(HTTP_STATUS_CODE_PREFIX);
  if (!match) return null;
  const code = Number(match[1]);
  if (!Number.isInteger(code) || code < 100 || code > 599) return null;
  return { code, rest: (match[2] ?? "").trim() };
}

type JsonRecord = Record<string, unknown>;
const isRecord = (value: unknown): value is JsonRecord =>
  value !== null && typeof value === "object" && !Array.isArray(value);
const stringField = (record: JsonRecord | undefined, key: string): string | undefined => {
  const value = record?.[key];
  return typeof value === "string" ? value : undefined;
};

function isErrorPayload(payload: unknown): payload is JsonRecord {
  if (!isRecord(payload)) return false;
  if (payload.type === "error") return true;
  if (typeof payload.request_id === "string" || typeof payload.requestId === "string") return true;
  const error = isRecord(payload.error) ? payload.error : undefined;
  return (
    [error?.message, error?.type, error?.code].some((value) => typeof value === "string") ||
    (typeof payload.error === "string" && typeof payload.message === "string")
  );
}

export interface ApiErrorInfo {
  readonly httpCode: string | undefined;
  readonly type: string | undefined;
  readonly code?: string;
  readonly message: string | undefined;
}

/** Reads `{error:{type,code,message}}`-style bodies, optionally behind a status or `Error:` prefix. */
export function parseApiErrorInfo(raw: string | undefined): ApiErrorInfo | null {
  const trimmed = raw?.trim();
  if (!trimmed) return null;
  let httpCode: string | undefined;
  let candidate = trimmed;
  const prefix = extractLeadingHttpStatus(candidate);
  if (prefix) {
    httpCode = String(prefix.code);
    candidate = prefix.rest;
  }
  candidate = candidate.trim().replace(ERROR_PAYLOAD_PREFIX, "").trim();
  if (!candidate.startsWith("{") || !candidate.endsWith("}")) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(candidate);
  } catch {
    return null;
  }
  if (!isErrorPayload(payload)) return null;
  let body: JsonRecord = payload;
  for (let depth = 0; depth < 4; depth++) {
    const attempts = isRecord(body.error) ? body.error.attempts : undefined;
    const last = Array.isArray(attempts) ? attempts.at(-1) : undefined;
    const details = isRecord(last) ? last.details : undefined;
    if (!isErrorPayload(details)) break;
    body = details;
  }
  const error = isRecord(body.error) ? body.error : undefined;
  const errorCode = stringField(error, "code");
  const errorType = stringField(error, "type");
  const type = error
    ? errorCode !== undefined && !errorType
      ? errorCode
      : errorType
    : stringField(body, "error");
  const code = errorCode ?? stringField(body, "code");
  return {
    httpCode,
    type: type ?? stringField(body, "type"),
    ...(code === undefined ? {} : { code }),
    message: stringField(error, "message") ?? stringField(body, "message"),
  };
}

// ---------------------------------------------------------------------------
// Message predicates that are not plain tables.

const lower = (raw: string | undefined): string => (raw ?? "").trim().toLowerCase();

function isImageSizeError(raw: string): boolean {
  return /image exceeds[\s\S]*mb/i.test(raw);
}
function isUnsupportedImageInput(raw: string): boolean {
  const value = lower(raw);
  return (
    /\bdoes not support image inputs?\b/.test(value) ||
    /\bunsupported image input\b/.test(value) ||
    (/\bno endpoints found\b/.test(value) && /\bsupport image input\b/.test(value))
  );
}
function isClaudeCliAuthError(raw: string, provider: string | undefined): boolean {
  if (lower(provider) !== "claude-cli") return false;
  return /\bnot logged in\b\s*·\s*please run \/login\b|\bfailed to authenticate:\s*oauth session expired and could not be refreshed\b/i.test(
    raw,
  );
}
function isSessionExpiredMessage(raw: string): boolean {
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

const PROVIDER_SPECIFIC: readonly { test: RegExp; reason: FailoverReason }[] = [
  { test: /\bworkers_ai\b.*\bquota limit exceeded\b/i, reason: "rate_limit" },
  { test: /\bmodelnotreadyexception\b/i, reason: "overloaded" },
  { test: /model(?:_is)?_deactivated|model has been deactivated/i, reason: "model_not_found" },
];

const REPLAY_INVALID =
  /\bprevious_response_id\b.*\b(?:invalid|unknown|not found|does not exist|expired|mismatch)\b|\btool_(?:use|call)\.(?:input|arguments)\b.*\b(?:missing|required)\b|\bincorrect role information\b|\broles must alternate\b|\binput item id does not belong to this connection\b/i;
function isReplayInvalid(raw: string): boolean {
  return (
    REPLAY_INVALID.test(raw) ||
    (/\bthinking\b/i.test(raw) &&
      /\b(?:invalid|expired)\b.*\bsignature\b|\bsignature\b.*\b(?:invalid|expired)\b/i.test(raw))
  );
}

function isGenericProviderInternalError(raw: string): boolean {
  const trimmed = raw.trim();
  return (
    /an error occurred while processing your request/i.test(trimmed) &&
    (/help\.openai\.com/i.test(trimmed) ||
      /(?:request[\s_-]*id)\s*[:#]?\s*([a-z0-9][a-z0-9_-]{6,}[a-z0-9])/i.test(trimmed))
  );
}

function isOAuthRefreshFailure(raw: string): boolean {
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

function isStructuredServerError(raw: string): boolean {
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
function isJsonApiInternalServerError(raw: string): boolean {
  if (!lower(raw).includes('"type":"api_error"')) return false;
  if (isBillingMessage(raw) || isAuthMessage(raw) || isAuthPermanentMessage(raw)) return false;
  return API_ERROR_TRANSIENT.test(raw);
}

function reasonFromErrorType(raw: string | undefined): Classification {
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

function reasonFromCode(raw: string | undefined): Classification {
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

// ---------------------------------------------------------------------------
// Context overflow.

function hasTpmHint(raw: string): boolean {
  return matchesOverflowScope(raw, "tpm-rate-limit-hint");
}

/** "Reasoning is mandatory"-type constraints: never an overflow, a thinking-level problem. */
export function isReasoningConstraintMessage(raw: string | undefined): boolean {
  const value = lower(raw);
  return (
    value.includes("reasoning is mandatory") ||
    value.includes("reasoning is required") ||
    value.includes("requires reasoning") ||
    (value.includes("reasoning") && value.includes("cannot be disabled"))
  );
}

function looksLikeProviderOverflowCandidate(raw: string): boolean {
  return (
    !isRateLimitMessage(raw) &&
    /\b(?:context|window|prompt|token|tokens|input|request|model)\b/i.test(raw) &&
    /\b(?:too\s+(?:large|long|many)|exceed(?:s|ed|ing)?|overflow|limit|maximum|max)\b/i.test(raw)
  );
}

/** Explicit context-window overflow wording, not confused with TPM rate limits. */
export function isContextOverflowError(message: string | undefined): boolean {
  if (!message) return false;
  if (hasTpmHint(message) && !isProviderRequestSizeCeilingError(message)) return false;
  if (isReasoningConstraintMessage(message)) return false;
  return (
    matchesOverflowScope(message, "failover-explicit") ||
    (looksLikeProviderOverflowCandidate(message) && matchesOverflowScope(message, "provider-fallback"))
  );
}

/** The broader check that routes a run to compaction (adds looser hints, excludes quota and billing). */
export function isLikelyContextOverflowError(message: string | undefined): boolean {
  if (!message) return false;
  if (isProviderRequestSizeCeilingError(message)) return isContextOverflowError(message);
  if (hasTpmHint(message)) return false;
  if (isReasoningConstraintMessage(message)) return false;
  if (isBillingMessage(message)) return false;
  if (matchesOverflowScope(message, "context-window-too-small")) return false;
  if (isRateLimitMessage(message)) return false;
  if (isContextOverflowError(message)) return true;
  if (lower(message).includes("prompt template")) return false;
  if (matchesOverflowScope(message, "rate-limit-hint")) return false;
  return matchesOverflowScope(message, "failover-hint");
}

/** A compaction/summarisation failure caused by an overflow (the run cannot recover by compacting). */
export function isCompactionFailureError(message: string | undefined): boolean {
  if (!message) return false;
  const value = lower(message);
  if (!(value.includes("summarization failed") || value.includes("compaction"))) return false;
  return isLikelyContextOverflowError(message) || value.includes("context overflow");
}

// ---------------------------------------------------------------------------
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
function classify402Message(message: string): FailoverReason {
  const text = normalize402(message);
  if (!text) return "billing";
  if (hasQuotaRefreshWindow(text)) return "rate_limit";
  if (hasExplicit402Billing(text)) return "billing";
  if (isRateLimitMessage(text)) return "rate_limit";
  if (hasRetryable402(text)) return "rate_limit";
  return "billing";
}
function reasonFrom402Text(raw: string): Classification {
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
