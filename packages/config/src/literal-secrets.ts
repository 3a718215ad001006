// Secrets written into the config file itself instead of an `${ENV}`
// reference. Owns: finding them in the file as parsed, before substitution.
// Does not own: what counts as a secret (secrets.ts), the reference syntax
// (env.ts; mirrored below) or file permissions (file-exposure.ts).
import type { ConfigPath } from "./errors.ts";
import {
  headerNameOf,
  isCredentialHeader,
  looksLikeUrl,
  type SecretPosition,
  secretPositionOf,
  secretSpans,
} from "./secrets.ts";

/** A config path whose value, as written in the file, holds a secret. */
export interface LiteralSecret {
  readonly path: ConfigPath;
  /** What was found, never the value: "a credential key", "an API key (sk-…)", … */
  readonly what: string;
}

// The reference syntax of env.ts: ${NAME}, ${NAME:-fallback}, $${NAME} (escaped).
const REFERENCE = /\$(\$?)\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}/g;
// Stands where a reference was; no secret shape contains it.
const MARK = "\u0000";
const AUTH_SCHEME = /^\s*(?:Bearer|Basic|Token|Bot|Digest)\s+/i;
// A fallback under a credential key counts when it looks like a real value,
// not a placeholder such as "unset" or "your-api-key-here".
const RANDOM_LOOKING = /^(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9._~+/=-]{16,}$/;

/**
 * The paths of `raw` (the config file as parsed, before `${ENV}` substitution)
 * whose value is a literal secret: a non-empty value under a credential key or
 * credential header, or a secret-shaped value anywhere (including the fallback
 * of `${NAME:-fallback}`). A value that is an `${ENV}` reference, or a Bearer
 * scheme in front of one, is not.
 */
export function findLiteralSecrets(raw: unknown): LiteralSecret[] {
  const found: LiteralSecret[] = [];
  const visit = (node: unknown, path: ConfigPath): void => {
    if (Array.isArray(node)) {
      node.forEach((item, index) => {
        visit(item, [...path, index]);
      });
      return;
    }
    if (node !== null && typeof node === "object") {
      for (const [key, item] of Object.entries(node)) visit(item, [...path, key]);
      return;
    }
    const what = literalSecretIn(node, path);
    if (what !== undefined) found.push({ path, what });
  };
  visit(raw, []);
  return found;
}

function literalSecretIn(value: unknown, path: ConfigPath): string | undefined {
  const position = credentialPosition(path);
  if (typeof value === "number" || typeof value === "bigint")
    return position === "credential" ? "a credential key" : undefined;
  if (typeof value !== "string") return undefined;

  const fallbacks: string[] = [];
  const literal = value.replace(REFERENCE, (whole, escaped: string, _name, fallback: string | undefined) => {
    if (escaped) return whole.slice(1);
    if (fallback !== undefined) fallbacks.push(fallback);
    return MARK;
  });
  const written = literal.replaceAll(MARK, "");

  if (position === "credential" && written.replace(AUTH_SCHEME, "").trim() !== "") return "a credential key";
  if (position === "connection-string" && !looksLikeUrl(literal) && written.trim() !== "")
    return "a connection string";
  for (const span of secretSpans(literal)) {
    if (literal.slice(span.start, span.end).replaceAll(MARK, "") !== "") return span.what;
  }
  for (const fallback of fallbacks) {
    const span = secretSpans(fallback)[0];
    if (span !== undefined) return `${span.what} as a \${NAME:-fallback}`;
    if (position === "credential" && RANDOM_LOOKING.test(fallback.trim()))
      return "a credential key with a ${NAME:-fallback}";
  }
  return undefined;
}

/** Like secretPositionOf, but a header counts as a credential only when its name says so (X-Title does not). */
function credentialPosition(path: ConfigPath): SecretPosition | undefined {
  const position = secretPositionOf(path);
  if (position !== "header") return position;
  const name = headerNameOf(path);
  return name !== undefined && isCredentialHeader(name) ? "credential" : undefined;
}
