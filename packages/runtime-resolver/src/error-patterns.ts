// The wording tables behind error classification, as data (OpenClaw 2026.9.6
// `src/agents/failover/message-patterns.ts`, `packages/ai/src/utils/overflow.ts`,
// the 402 rules and provider-specific rows). Owns: the patterns and the small
// predicates that only test a message against one table. Does not own: the
// order in which tables are consulted (classify-error.ts).

export type Pattern = string | RegExp;

/** Case-insensitive: strings are substrings of the lower-cased message, regexes run on it. */
export function matchesAny(raw: string | undefined, patterns: readonly Pattern[]): boolean {
  if (!raw) return false;
  const value = raw.trim().toLowerCase();
  return patterns.some((pattern) =>
    typeof pattern === "string" ? value.includes(pattern) : pattern.test(value),
  );
}

const STATED_TOKEN_SIZES =
  /(?:\btpm\b|tokens per minute)[^.\n]*?\blimit\s+([\d,]+)[^.\n]*?\brequested\s+([\d,]+)/i;

function statedTokens(digits: string | undefined): number | undefined {
  const parsed = Number(digits?.replaceAll(",", ""));
  return Number.isFinite(parsed) && parsed > 0 ? parsed : undefined;
}

/** A TPM message whose stated request is larger than the stated limit: a real size ceiling. */
export function isProviderRequestSizeCeilingError(message: string | undefined): boolean {
  if (!message) return false;
  const stated = STATED_TOKEN_SIZES.exec(message);
  const limit = statedTokens(stated?.[1]);
  const requested = statedTokens(stated?.[2]);
  return limit !== undefined && requested !== undefined && requested > limit;
}

export const INCOMPLETE_ASSISTANT_STREAM =
  /^(?:[\w -]*stream ended (?:before (?:message_?stop|(?:a )?terminal (?:finish reason|response event|event))|without (?:a terminal )?finish[_ ]reason)|Responses stream ended with unresolved tool calls)[.!]?$/i;

export const PERIODIC_USAGE_LIMIT =
  /\b(?:daily|weekly|monthly)(?:\/(?:daily|weekly|monthly))* (?:usage )?limit(?:s)?(?: (?:exhausted|reached|exceeded))?\b/i;

const ZAI_BILLING_CODE_1311 = /"code"\s*:\s*1311\b/;
const ZAI_AUTH_CODE_1113 = /"code"\s*:\s*1113\b/;
const VOLCENGINE_INVALID_SUBSCRIPTION = /"code"\s*:\s*"InvalidSubscription"/i;

export const ERROR_PATTERNS = {
  rateLimit: [
    /rate[_ ]limit|too many requests/i,
    /^\s*429\b|\b(?:https?|status(?:[ _-]?code)?|response(?:[ _-]?code)?|http(?:[ _-]?status)?)\b[\s:=#"'(]{0,6}429\b|["'](?:status|code)["']\s*:\s*429\b|\b429\b[\s:)\].,-]*(?:rate[_ -]?limit(?:ed|ing)?|too many requests|resource has been exhausted|quota(?:\s+(?:exceeded|exhausted|depleted|reached))?)\b/i,
    /too many (?:concurrent )?requests/i,
    /\bthrottl(?:ing[_]?exception|ing|ed)\b/i,
    /\bconcurrency limit\b.*\b(?:breached|reached)\b/i,
    "model_cooldown",
    "exceeded your current quota",
    /\bresource[_ -]?exhausted\b/i,
    /\bquota[_ -]?exceeded\b/i,
    "usage limit",
    /\btpm\b/i,
    "tokens per minute",
    "tokens per day",
    "请求过于频繁",
    "调用频率",
    "频率限制",
    "配额不足",
    "配额已用尽",
    "额度不足",
    "额度已用尽",
  ],
  overloaded: [
    "overloaded",
    /\b(?:selected\s+)?model\s+(?:is\s+)?at capacity\b/i,
    /\bservice(?:[_ ]temporarily)?[_ ]unavailable\b/i,
    "high demand",
    "high load",
    "服务过载",
    "当前负载过高",
    "访问量过大",
  ],
  serverError: [
    "an error occurred while processing",
    "internal server error",
    "internal_error",
    "server_error",
    "bad gateway",
    "gateway timeout",
    "upstream error",
    "upstream connect error",
    "connection reset",
    "内部错误",
    "服务器错误",
    "系统错误",
    "系统繁忙",
    "系统异常",
  ],
  timeout: [
    "timeout",
    "timed out",
    "deadline exceeded",
    /^(?=[\s\S]*\bgot status:\s*internal\b)(?=[\s\S]*\bcode["']?\s*[:=]\s*500\b)/i,
    /^(?=[\s\S]*["']status["']\s*:\s*["']internal["'])(?=[\s\S]*["']code["']\s*:\s*500\b)/i,
    "connection error",
    "network error",
    "network request failed",
    "fetch failed",
    "socket hang up",
    /^stream disconnected before completion(?::[\s\S]*)?$/i,
    /^premature close of server response while trying to fetch\b/i,
    INCOMPLETE_ASSISTANT_STREAM,
    "网络错误",
    "网络异常",
    "服务暂时不可用",
    "服务繁忙",
    "请求超时",
    "连接超时",
    "连接错误",
    /\b(?:econn(?:refused|reset|aborted)|enet(?:unreach|reset)|ehost(?:unreach|down)|e(?:socket)?timedout|epipe|enotfound|eai_again)\b/i,
    /without sending (?:any )?chunks?/i,
    /\breason:\s*(?:abort|malformed_response|network_error)\b/i,
    /\bfinish_reason:\s*(?:abort|malformed_response|network_error)\b/i,
    /\boperation was aborted\b/i,
    /\bstream (?:was )?(?:closed|aborted)\b/i,
    /^terminated$/i,
    /^stream_read_error$/i,
    /\bund_err_(?:socket|connect|headers?|body|req_content_length_mismatch|aborted|closed)\b/i,
    /^request failed$/i,
    /\brequest failed after repeated internal retries\b/i,
    /^llm request failed\.$/i,
  ],
  billing: [
    /["']?(?:status|code)["']?\s*[:=]\s*402\b|\bhttp\s*402\b|\berror(?:\s+code)?\s*[:=]?\s*402\b|^\s*402\s+payment/i,
    /\b(?:got|returned|received)\s+(?:a\s+)?402\b(?!\s+records\b)/i,
    "payment required",
    "insufficient credits",
    /used\s+all\s+available\s+credits/i,
    /(?:monthly\s+)?spend(?:ing)?\s+limit/i,
    /insufficient[_ ]quota/i,
    /\b(?:go|free)usagelimiterror\b/i,
    "available balance",
    "out of budget",
    "credit balance",
    "plans & billing",
    /insufficient[_ ]balance/i,
    /\binsufficient\s+\w+\s+balance\b/i,
    "insufficient usd or diem balance",
    /requires?\s+more\s+credits/i,
    /out of extra usage/i,
    /draw from your extra usage/i,
    /extra usage is required(?: for long context requests)?/i,
    "余额不足",
    "欠费",
    VOLCENGINE_INVALID_SUBSCRIPTION,
    /\bdoes not have a valid coding\s*plan subscription\b/i,
    ZAI_BILLING_CODE_1311,
    /\bcurrent\s+subscription\s+plan\b.*\b(?:does\s+not|doesn't|not)\b.*\binclude\s+access\b/i,
    /\bmodel\b.*\bnot\s+available\b.*\bcurrent\s+plan\b/i,
  ],
  authPermanent: [
    /api[_ ]?key[_ ]?(?:revoked|deactivated|deleted)/i,
    /deactivated[_ ]workspace/i,
    "key has been disabled",
    "key has been revoked",
    "account has been deactivated",
    "not allowed for this organization",
  ],
  auth: [
    /(?:invalid[_ ]?api[_ ]?key(?![a-z0-9])|api[_ ]?key(?:[_ ]?(?:is[_ ]?)?(?:invalid(?![a-z0-9])|not[_ ]?valid(?![a-z0-9]))))/i,
    /could not (?:authenticate|validate).*(?:api[_ ]?key|credentials)/i,
    "permission_error",
    "incorrect api key",
    "invalid token",
    "authentication",
    "re-authenticate",
    "oauth token refresh failed",
    "unauthorized",
    "forbidden",
    "access denied",
    "insufficient permissions",
    "insufficient permission",
    /missing scopes?:/i,
    "expired",
    /\b401\b/,
    /\b403\b/,
    "no credentials found",
    "no api key found",
    /\bfailed to (?:extract|parse|validate|decode)\b.*\btoken\b/,
    ZAI_AUTH_CODE_1113,
    "无权访问",
    "认证失败",
    "鉴权失败",
    "密钥无效",
    "apikey 无效",
    /(?:当前\s*ak|ce-011).*?(?:违规请求|禁止访问)|(?:违规请求|禁止访问).*?(?:当前\s*ak|ce-011)/i,
    /\bce-011\b/i,
  ],
  format: [
    "string should match pattern",
    "tool_use.id",
    "tool_use_id",
    "invalid request format",
    /tool call id was.*must be/i,
    "does not support assistant message prefill",
    "conversation must end with a user message",
    /agent harness .* does not support .*provider is not one of/i,
  ],
} as const satisfies Record<string, readonly Pattern[]>;

const BILLING_HEAD =
  /^(?:error[:\s-]+)?billing(?:\s+error)?(?:[:\s-]+|$)|^(?:error[:\s-]+)?(?:credit balance|insufficient credits?|payment required|http\s*402\b)/i;

export function isRateLimitMessage(raw: string | undefined): boolean {
  return matchesAny(raw, ERROR_PATTERNS.rateLimit);
}
export function isTimeoutMessage(raw: string | undefined): boolean {
  return matchesAny(raw, ERROR_PATTERNS.timeout);
}
export function isOverloadedMessage(raw: string | undefined): boolean {
  return matchesAny(raw, ERROR_PATTERNS.overloaded);
}
export function isAuthPermanentMessage(raw: string | undefined): boolean {
  return matchesAny(raw, ERROR_PATTERNS.authPermanent);
}
export function isAuthMessage(raw: string | undefined): boolean {
  return matchesAny(raw, ERROR_PATTERNS.auth);
}
export function isFormatMessage(raw: string | undefined): boolean {
  return matchesAny(raw, ERROR_PATTERNS.format);
}
export function isProviderFinishReasonErrorMessage(raw: string | undefined): boolean {
  return matchesAny(raw, [/\bfinish_reason:\s*error\b/i, /\breason:\s*error\b/i]);
}

/** Billing wording; a document with more than one `## ` heading never counts. */
export function isBillingMessage(raw: string | undefined): boolean {
  const value = (raw ?? "").trim().toLowerCase();
  if (!raw || !value) return false;
  if ([...raw.matchAll(/(?:^|\n)##\s+\S/g)].length > 1) return false;
  if (matchesAny(value, ERROR_PATTERNS.billing)) return true;
  if (!BILLING_HEAD.test(raw)) return false;
  return ["upgrade", "credits", "payment", "purchase", "subscription", "plan"].some((word) =>
    value.includes(word),
  );
}

const STATUS_INTERNAL_SERVER_ERROR = /\bstatus:\s*internal server error\b/i;
const STATUS_INTERNAL_SERVER_ERROR_WITH_500 =
  /^(?=[\s\S]*\bstatus:\s*internal server error\b)(?=[\s\S]*\bcode["']?\s*[:=]\s*500\b)/i;

export function isServerErrorMessage(raw: string | undefined): boolean {
  const value = (raw ?? "").trim().toLowerCase();
  if (!value) return false;
  if (STATUS_INTERNAL_SERVER_ERROR_WITH_500.test(value) || /\bHTTP\s+5\d\d\b/i.test(value)) return true;
  const scrubbed = value.replace(STATUS_INTERNAL_SERVER_ERROR, "").trim();
  if (scrubbed === "") return true;
  return matchesAny(scrubbed, ERROR_PATTERNS.serverError);
}

// ---------------------------------------------------------------------------
// Context overflow wording (pi-ai/OpenClaw `utils/overflow.ts`), by scope.

const CONFIGURED_CONTEXT_SIZE_OVERFLOW =
  /prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?/i;

export const CONTEXT_OVERFLOW_PATTERNS = {
  "assistant-error": [
    /prompt is too long/i,
    /request_too_large/i,
    /input length and `?max_tokens`? exceed context limit: [\d,]+ \+ [\d,]+ > [\d,]+/i,
    /input is too long for requested model/i,
    /exceeds the context window/i,
    /exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))/i,
    /input token count.*exceeds the maximum/i,
    /maximum prompt length is \d+/i,
    /reduce the length of the messages/i,
    /maximum context length is \d+ tokens/i,
    /exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?/i,
    /input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)/i,
    /exceeds the limit of \d+/i,
    /(?:exceeds the available context size|context size has been exceeded)/i,
    /greater than the context length/i,
    /context window exceeds limit/i,
    /exceeded model token limit/i,
    /tokens? in request more than max tokens? allowed/i,
    /prompt exceeds max(?:imum)? length/i,
    /too large for model with \d+ maximum context length/i,
    CONFIGURED_CONTEXT_SIZE_OVERFLOW,
    /model_context_window_exceeded/i,
    /prompt too long; exceeded (?:max )?context length/i,
    /context[_ ]length[_ ]exceeded/i,
    /too many tokens/i,
    /token limit exceeded/i,
    /^413\s*(?:status code)?\s*\(no body\)/i,
  ],
  "failover-explicit": [
    /request_too_large/i,
    /context_overflow/i,
    CONFIGURED_CONTEXT_SIZE_OVERFLOW,
    /invalid_argument[\s\S]*maximum number of tokens/i,
    /request exceeds the maximum size/i,
    /context length exceeded/i,
    /maximum context length/i,
    /prompt is too long/i,
    /prompt too long/i,
    /exceeds model context window/i,
    /model token limit/i,
    /input exceeds[\s\S]*maximum number of tokens/i,
    /^(?=[\s\S]*context window)(?=[\s\S]*ran out of (?:room|space))/i,
    /request size exceeds[\s\S]*context window/i,
    /context overflow:/i,
    /exceed context limit/i,
    /exceeds the model'?s maximum context/i,
    /max_tokens[\s\S]*exceed[\s\S]*context/i,
    /input(?: length[\s\S]*exceed[\s\S]*context| \([\d,]+\s*tokens?\) is longer than (?:the )?model'?s context length)/i,
    /413[\s\S]*too large/i,
    /context_window_exceeded/i,
    /input length [\d,]+\s+tokens? exceeds the model limit/i,
    /上下文过长|上下文超出|上下文长度超|超出最大上下文|请压缩上下文/,
  ],
  "provider-fallback": [
    /\binput token count exceeds the maximum number of input tokens\b/i,
    /\binput is too long for this model\b/i,
    /\binput exceeds the maximum number of tokens\b/i,
    /\bollama error:\s*context length exceeded(?:,\s*too many tokens)?\b/i,
    /\btotal tokens?.*exceeds? (?:the )?(?:model(?:'s)? )?(?:max|maximum|limit)/i,
    /\b(?:(?:request|prompt) \(\d[\d,]*\s*tokens?\) exceeds (?:the )?available context size|context size has been exceeded)\b/i,
    /\binput (?:is )?too long for (?:the )?model\b/i,
  ],
  "failover-hint": [
    /context.*overflow|context window.*(too (?:large|long)|exceed|over|limit|max(?:imum)?|requested|sent|tokens)|prompt.*(too (?:large|long)|exceed|over|limit|max(?:imum)?)|(?:request|input).*(?:context|window|length|token).*(too (?:large|long)|exceed|over|limit|max(?:imum)?)/i,
  ],
  "context-window-too-small": [/context window.*(too small|minimum is)/i],
  "tpm-rate-limit-hint": [/\btpm\b|tokens per minute/i],
  "rate-limit-hint": [
    /rate limit|too many requests|requests per (?:minute|hour|day)|quota|throttl|429\b|tokens per day/i,
  ],
} as const satisfies Record<string, readonly RegExp[]>;

export type OverflowScope = keyof typeof CONTEXT_OVERFLOW_PATTERNS;

export function matchesOverflowScope(message: string, scope: OverflowScope): boolean {
  return CONTEXT_OVERFLOW_PATTERNS[scope].some((pattern) => pattern.test(message));
}

// ---------------------------------------------------------------------------
// Transport and TLS codes.

/** Node/undici error codes that mean a transient network failure (pi-ai's list). */
export const TRANSIENT_NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ENOTFOUND",
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
  "ECONNABORTED",
  "EPIPE",
  "ENETDOWN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_DNS_RESOLVE_FAILED",
  "UND_ERR_CONNECT",
  "UND_ERR_SOCKET",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ERR_HTTP2_INVALID_SESSION",
  "EPROTO",
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_SSL_PROTOCOL_RETURNED_AN_ERROR",
  "ERR_WEBSOCKET_TRANSPORT",
  "EHOSTDOWN",
  "ENETRESET",
  "ERR_STREAM_PREMATURE_CLOSE",
]);

const TLS_CODES: ReadonlySet<string> = new Set([
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "HOSTNAME_MISMATCH",
  "CERT_CHAIN_TOO_LONG",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REJECTED",
  "CERT_REVOKED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CRL_HAS_EXPIRED",
  "CRL_NOT_YET_VALID",
  "CRL_SIGNATURE_FAILURE",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
  "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CRL_LAST_UPDATE_FIELD",
  "ERROR_IN_CRL_NEXT_UPDATE_FIELD",
  "INVALID_CA",
  "INVALID_PURPOSE",
  "PATH_LENGTH_EXCEEDED",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECRYPT_CRL_SIGNATURE",
  "UNABLE_TO_GET_CRL",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

const TLS_MESSAGES = [
  /hostname\/ip does not match certificate(?:'s)? altnames/i,
  /hostname mismatch/i,
  /host: .+ is not in the cert(?:ificate)?(?:'s)? altnames/i,
  /certificate has expired/i,
  /certificate is not yet valid/i,
  /self[- ]signed certificate/i,
  /unable to get local issuer certificate/i,
  /unable to verify the first certificate/i,
];

/** A deterministic certificate-validation failure, by code or wording. */
export function isTlsCertificateFailure(code: string | undefined, message: string | undefined): boolean {
  const normalized = code?.trim().toUpperCase();
  if (normalized && TLS_CODES.has(normalized)) return true;
  return (
    message !== undefined && message.trim() !== "" && TLS_MESSAGES.some((pattern) => pattern.test(message))
  );
}
