// A config file other users can read that holds literal secrets. Owns: the
// permission check and its warning text. Does not own: finding the secrets
// (literal-secrets.ts) or which file is the config (load.ts).
import { readFileSync, statSync } from "node:fs";
import JSON5 from "json5";
import { formatPath } from "./errors.ts";
import { findLiteralSecrets, type LiteralSecret } from "./literal-secrets.ts";

/** Group (0o040) and other (0o004) read bits. */
const READABLE_BY_OTHERS = 0o044;

export interface ConfigFileExposure {
  /** The config file, as given. */
  readonly file: string;
  /** Its permission bits, e.g. 0o644. */
  readonly mode: number;
  /** The literal secrets it holds (paths only, never values). */
  readonly secrets: readonly LiteralSecret[];
  /** One line a user can act on: the file, its mode, the paths and the fix. */
  readonly message: string;
}

/**
 * Warnings (zero or one) for a config file whose mode lets its group or other
 * users read it while it holds literal secrets. A file that cannot be read or
 * parsed gives none (loading the config reports that), and neither does a
 * platform without POSIX permission bits.
 */
export function checkConfigFileExposure(file: string): ConfigFileExposure[] {
  if (process.platform === "win32") return [];
  let mode: number;
  let raw: unknown;
  try {
    mode = statSync(file).mode & 0o777;
    if ((mode & READABLE_BY_OTHERS) === 0) return [];
    const text = readFileSync(file, "utf8");
    raw = text.trim() === "" ? {} : JSON5.parse(text);
  } catch {
    return [];
  }
  const secrets = findLiteralSecrets(raw);
  if (secrets.length === 0) return [];
  return [{ file, mode, secrets, message: exposureMessage(file, mode, secrets) }];
}

function exposureMessage(file: string, mode: number, secrets: readonly LiteralSecret[]): string {
  const readers = [mode & 0o040 ? "its group" : "", mode & 0o004 ? "all users" : ""]
    .filter(Boolean)
    .join(" and ");
  const octal = `0${mode.toString(8).padStart(3, "0")}`;
  const paths = secrets.map((secret) => formatPath(secret.path)).join(", ");
  const noun = secrets.length === 1 ? "a literal secret" : `${secrets.length} literal secrets`;
  return (
    `config file ${file} is readable by ${readers} (mode ${octal}) and holds ${noun} at ${paths}; ` +
    `run \`chmod 600 ${shellQuote(file)}\`, or move each value to an environment variable referenced as \${NAME}`
  );
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./~-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
