// Hiding secrets when a config is shown. Owns: which keys count as secret.

const SECRET_KEY = /(apikey|token|secret|password|^url)$/i;

/** A deep copy with every secret-looking string value replaced by "[redacted]". */
export function redactSecrets<T>(value: T): T {
  const visit = (node: unknown, key: string | undefined): unknown => {
    if (typeof node === "string") return key !== undefined && SECRET_KEY.test(key) ? "[redacted]" : node;
    if (Array.isArray(node)) return node.map((item) => visit(item, undefined));
    if (node !== null && typeof node === "object") {
      return Object.fromEntries(Object.entries(node).map(([k, item]) => [k, visit(item, k)]));
    }
    return node;
  };
  return visit(value, undefined) as T;
}
