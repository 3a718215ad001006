// HTTP status prefixes and JSON error envelopes in provider error text: a leading `NNN` (or `HTTP NNN:`),
// and the `{ "error": { "type", "code", "message" } }` payload providers wrap their errors in. Owns: that
// parsing. Does not own: what a status or envelope means for failover (classify-error.ts).
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
