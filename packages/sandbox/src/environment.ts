// The environment a command gets. Owns: the allowlist rule (a name or `PREFIX_*` pattern must be listed to
// pass), the names that never pass through a pattern (credential-shaped names), and dropping any variable
// whose value is a secret the caller knows (e.g. every string the config holds). Does not own: which extra
// names a deployment allows (config) or the variables a sandbox sets itself (the engines).

/** Passed on by default: what programs need to run, nothing that identifies or authenticates anyone. */
export const DEFAULT_ENV_ALLOW: readonly string[] = [
  "PATH",
  "HOME",
  "LANG",
  "LANGUAGE",
  "LC_*",
  "TERM",
  "TZ",
  "USER",
  "LOGNAME",
  "SHELL",
  "TMPDIR",
  "COLORTERM",
  "NO_COLOR",
];

/** Names that look like credentials: a pattern never lets them through, only their exact name does. */
const CREDENTIAL_WORD =
  /^(KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PASSPHRASE|CREDENTIALS?|AUTH|COOKIE|SESSION|PRIVATE|DSN)S?$/i;
const isCredentialName = (name: string) => name.split(/[_.-]/).some((word) => CREDENTIAL_WORD.test(word));

/** What `scrubEnvironment` keeps (allowed names), must drop (secret values) and sets afterwards. */
export interface ScrubOptions {
  /** Names or `PREFIX_*` patterns; default `DEFAULT_ENV_ALLOW`. */
  readonly allow?: readonly string[] | undefined;
  /** Values that must never reach a command (a variable holding one is dropped whatever its name). */
  readonly secretValues?: ReadonlySet<string> | undefined;
  /** Variables set after scrubbing (they win over the source). */
  readonly set?: Readonly<Record<string, string>> | undefined;
}

function matches(name: string, pattern: string): "exact" | "pattern" | false {
  if (pattern === name) return "exact";
  if (pattern.endsWith("*") && name.startsWith(pattern.slice(0, -1))) return "pattern";
  return false;
}

/** The environment to give a command: only allowlisted variables of `source`, minus known secrets. */
export function scrubEnvironment(
  source: Readonly<Record<string, string | undefined>>,
  options: ScrubOptions = {},
): Record<string, string> {
  const allow = options.allow ?? DEFAULT_ENV_ALLOW;
  const secrets = options.secretValues;
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    let allowed = false;
    for (const pattern of allow) {
      const match = matches(name, pattern);
      if (match === "exact" || (match === "pattern" && !isCredentialName(name))) {
        allowed = true;
        break;
      }
    }
    if (!allowed) continue;
    if (secrets !== undefined && value.length > 0 && secrets.has(value)) continue;
    result[name] = value;
  }
  for (const [name, value] of Object.entries(options.set ?? {})) result[name] = value;
  return result;
}

/**
 * Values of a config-like tree that may be secrets: every string of 8 characters or more that is not a path
 * (a path such as the workspace may well equal `HOME`, and is no secret).
 */
export function collectSecretValues(tree: unknown, into: Set<string> = new Set()): Set<string> {
  const visit = (node: unknown): void => {
    if (typeof node === "string") {
      if (node.length >= 8 && !/^[/~.]/.test(node)) into.add(node);
      return;
    }
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node !== null && typeof node === "object") for (const item of Object.values(node)) visit(item);
  };
  visit(tree);
  return into;
}
