// Hiding secrets when a config is shown (`agent-kernel-config print`). Owns:
// the walk that hides them. Does not own: what counts as a secret (secrets.ts).
//   - every value under a `headers` map, at any depth;
//   - every value under a credential key (apiKey, botToken, signingSecret, …);
//   - the password of a connection string (store.postgres.url), or the whole
//     string when it is not a URL;
//   - anywhere else, only the secret-shaped pieces of a string (a Bearer
//     credential, an sk-… key, a URL's password), so model names, paths and
//     ports stay readable.
import type { ConfigPath } from "./errors.ts";
import { looksLikeUrl, REDACTED, redactSecretText, secretPositionOf } from "./secrets.ts";

/** A deep copy with every secret value, or secret-shaped piece of a string, replaced by "[redacted]". */
export function redactSecrets<T>(value: T): T {
  const visit = (node: unknown, path: ConfigPath): unknown => {
    if (Array.isArray(node)) return node.map((item, index) => visit(item, [...path, index]));
    if (node !== null && typeof node === "object") {
      return Object.fromEntries(
        Object.entries(node).map(([key, item]) => [key, visit(item, [...path, key])]),
      );
    }
    if (typeof node !== "string" && typeof node !== "number" && typeof node !== "bigint") return node;
    const position = secretPositionOf(path);
    if (position === "header" || position === "credential") return REDACTED;
    if (typeof node !== "string") return node;
    if (position === "connection-string" && !looksLikeUrl(node)) return REDACTED;
    return redactSecretText(node);
  };
  return visit(value, []) as T;
}
