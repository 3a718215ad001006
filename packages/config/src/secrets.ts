// What counts as a secret in a config. Owns: credential key names, where a
// connection string lives, HTTP header maps, and the secret-shaped values
// recognised whatever their key (Bearer/Basic credentials, provider keys,
// Telegram bot tokens, JWTs, private keys, passwords in URLs). Does not own:
// walking a config (redact.ts, literal-secrets.ts) or file permissions
// (file-exposure.ts).
import type { ConfigPath } from "./errors.ts";

export const REDACTED = "[redacted]";

// Keys in the schema that hold a credential: auth.profiles.*.apiKey/token,
// models.providers.*.apiKey, channels.telegram.botToken, channels.slack.botToken/
// appToken/signingSecret, channels.webchat.token. The rest of the list covers
// free-form maps (models params, provider headers) and keys other tools use.
// Compared lower-cased without "_" and "-", so api_key, api-key and apiKey match.
const CREDENTIAL_KEYS = new Set([
  "key",
  "apikey",
  "token",
  "accesstoken",
  "refreshtoken",
  "idtoken",
  "bottoken",
  "apptoken",
  "secret",
  "clientsecret",
  "signingsecret",
  "webhooksecret",
  "password",
  "passwd",
  "passphrase",
  "authorization",
  "proxyauthorization",
  "cookie",
  "setcookie",
  "credential",
  "credentials",
  "privatekey",
  "secretkey",
  "dsn",
]);
// Any key ending like this is a credential too (authToken, sslPassword), but not
// mainKey, maxTokens or contextTokens, which are not.
const CREDENTIAL_SUFFIX =
  /(token|secret|password|passwd|passphrase|apikey|privatekey|secretkey|credentials)$/;
// Record keys that are user data (profile ids like "openai:token", peer ids) are
// not key names, so only identifier-like keys are classified.
const KEY_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

const CONNECTION_STRING_KEYS = new Set(["connectionstring", "connstring", "databaseurl", "databaseuri"]);
// `url` names a connection string below one of these (store.postgres.url).
const DATABASE_SECTIONS = new Set(["store", "postgres", "postgresql", "database", "db", "mysql", "redis"]);

function normalise(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, "");
}

/** A key whose value is a credential: apiKey, botToken, signingSecret, authorization, … (not mainKey, maxTokens). */
export function isCredentialKey(key: string): boolean {
  if (!KEY_NAME.test(key)) return false;
  const name = normalise(key);
  return CREDENTIAL_KEYS.has(name) || CREDENTIAL_SUFFIX.test(name);
}

/**
 * How a value at `path` is secret by position:
 * - "header": below a `headers` map (every value there is hidden when shown);
 * - "credential": its key, or an ancestor's key, names a credential;
 * - "connection-string": a database URL (store.postgres.url, connectionString),
 *   whose password is the secret part;
 * - undefined: only its shape can make it secret.
 */
export type SecretPosition = "header" | "credential" | "connection-string";

export function secretPositionOf(path: ConfigPath): SecretPosition | undefined {
  const headersAt = path.findIndex(
    (segment) => typeof segment === "string" && normalise(segment) === "headers",
  );
  if (headersAt !== -1 && headersAt < path.length - 1) return "header";
  const keys = path.filter((segment): segment is string => typeof segment === "string");
  if (keys.some(isCredentialKey)) return "credential";
  const last = path[path.length - 1];
  if (typeof last !== "string") return undefined;
  const name = normalise(last);
  if (CONNECTION_STRING_KEYS.has(name)) return "connection-string";
  if (name === "url" && keys.slice(0, -1).some((key) => DATABASE_SECTIONS.has(normalise(key))))
    return "connection-string";
  return undefined;
}

/** The header name of a value below a `headers` map, e.g. "authorization"; undefined elsewhere. */
export function headerNameOf(path: ConfigPath): string | undefined {
  const at = path.findIndex((segment) => typeof segment === "string" && normalise(segment) === "headers");
  const name = at === -1 ? undefined : path[at + 1];
  return typeof name === "string" ? name : undefined;
}

/** A header whose value is a credential: Authorization, Cookie, X-Api-Key, X-Auth-Token, … */
export function isCredentialHeader(name: string): boolean {
  return isCredentialKey(name);
}

/** `scheme://…`: a URL, as opposed to a libpq "host=… password=…" string or plain text. */
export function looksLikeUrl(text: string): boolean {
  return /^\s*[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

/** The part of a string to hide, at [start, end) (a URL's password, not the whole URL). */
export interface SecretSpan {
  readonly start: number;
  readonly end: number;
  /** What it looks like, for messages: "a Bearer credential", "a password in a URL", … */
  readonly what: string;
}

interface Shape {
  readonly pattern: RegExp;
  readonly what: string;
  /** The capture group that is the secret; 0 (the whole match) when unset. */
  readonly group?: number;
  readonly accept?: (secret: string, match: RegExpExecArray) => boolean;
}

// Token characters exclude NUL, which literal-secrets.ts puts where an ${ENV}
// reference was, so a span never covers a reference.
const SHAPES: readonly Shape[] = [
  {
    pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
    what: "a private key",
  },
  {
    // Basic credentials are base64 (no digit needed); "Bearer information" is prose.
    pattern: /\b(?:Bearer|Basic)\s+([A-Za-z0-9._~+/-]{8,}=*)/gi,
    what: "a Bearer/Basic credential",
    group: 1,
    accept: (secret) => !/^[a-z]+$/.test(secret),
  },
  { pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g, what: "an API key (sk-…)" },
  { pattern: /(?<![A-Za-z0-9_-])[rs]k_(?:live|test)_[A-Za-z0-9]{10,}/g, what: "a Stripe key" },
  { pattern: /(?<![A-Za-z0-9_-])xox[a-z]-[A-Za-z0-9-]{10,}/g, what: "a Slack token (xox…)" },
  { pattern: /(?<![A-Za-z0-9_-])xapp-[A-Za-z0-9-]{10,}/g, what: "a Slack app token (xapp-…)" },
  {
    pattern: /(?<![A-Za-z0-9_-])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
    what: "a GitHub token",
  },
  { pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/g, what: "a GitLab token" },
  { pattern: /(?<![A-Za-z0-9_-])hf_[A-Za-z0-9]{30,}/g, what: "a Hugging Face token" },
  { pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{30,}/g, what: "a Google API key (AIza…)" },
  { pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])/g, what: "an AWS access key id" },
  {
    // "123456789:AA…", alone or in a Bot API URL ("/bot123456789:AA…"); not "qwen3:30b-…".
    pattern: /(?:(?<=\bbot)|(?<![A-Za-z0-9_.-]))\d{5,}:[A-Za-z0-9_-]{30,}/gi,
    what: "a Telegram bot token",
  },
  {
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
    what: "a JWT",
  },
  {
    // scheme://user:password@host — the password only; the last "@" of the authority ends it.
    pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:([^\s/?#]+)@/gi,
    what: "a password in a URL",
    group: 1,
  },
  {
    // ?api_key=…, &token=…, &password=…, &sig=… in a URL.
    pattern: /[?&]([A-Za-z0-9_.-]+)=([^&#\s]+)/g,
    what: "a credential in a URL query",
    group: 2,
    accept: (_secret, match) => {
      const name = match[1] ?? "";
      return isCredentialKey(name) || /^(sig|signature)$/i.test(name);
    },
  },
  {
    // libpq keyword strings: "host=db user=app password=…".
    pattern: /(?:^|\s)(?:ssl)?password\s*=\s*('[^']*'|[^\s']+)/gi,
    what: "a password in a connection string",
    group: 1,
  },
];

/** Every secret-shaped piece of `text`, in order, not overlapping. */
export function secretSpans(text: string): SecretSpan[] {
  const spans: SecretSpan[] = [];
  for (const shape of SHAPES) {
    const pattern = new RegExp(shape.pattern.source, `${shape.pattern.flags}d`);
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      if (match[0] === "") {
        pattern.lastIndex++;
        continue;
      }
      const group = shape.group ?? 0;
      const secret = match[group];
      if (secret === undefined || secret === "") continue;
      if (shape.accept && !shape.accept(secret, match)) continue;
      const [start, end] = match.indices?.[group] ?? [match.index, match.index + match[0].length];
      spans.push({ start, end, what: shape.what });
    }
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: SecretSpan[] = [];
  for (const span of spans) {
    const previous = merged[merged.length - 1];
    if (previous !== undefined && span.start < previous.end) {
      if (span.end > previous.end) merged[merged.length - 1] = { ...previous, end: span.end };
    } else merged.push(span);
  }
  return merged;
}

/** `text` with every secret-shaped piece replaced by "[redacted]"; the rest stays readable. */
export function redactSecretText(text: string): string {
  let out = "";
  let at = 0;
  for (const span of secretSpans(text)) {
    out += `${text.slice(at, span.start)}${REDACTED}`;
    at = span.end;
  }
  return out + text.slice(at);
}
