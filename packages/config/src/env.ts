// `${ENV}` substitution in config string values. Owns: the reference syntax
// and reporting each unset variable with the config path that used it.
//   ${NAME}            the variable's value; an error when unset or empty
//   ${NAME:-fallback}  the variable's value, or `fallback` when unset or empty
//   $${NAME}           the literal text ${NAME}
// Names are upper-case letters, digits and "_" (as OpenClaw), so a `${x}` in
// ordinary text is left alone. Substitution runs after JSON5 parsing, on
// string values only, so a value can never inject config structure.
import type { ConfigIssue, ConfigPath } from "./errors.ts";

const REFERENCE = /\$(\$?)\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}/g;

export type Environment = Readonly<Record<string, string | undefined>>;

export interface SubstitutionResult {
  readonly value: unknown;
  readonly issues: ConfigIssue[];
}

export function substituteEnv(value: unknown, env: Environment): SubstitutionResult {
  const issues: ConfigIssue[] = [];
  const visit = (node: unknown, path: ConfigPath): unknown => {
    if (typeof node === "string") return substituteString(node, env, path, issues);
    if (Array.isArray(node)) return node.map((item, index) => visit(item, [...path, index]));
    if (node !== null && typeof node === "object") {
      return Object.fromEntries(
        Object.entries(node).map(([key, item]) => [key, visit(item, [...path, key])]),
      );
    }
    return node;
  };
  return { value: visit(value, []), issues };
}

function substituteString(text: string, env: Environment, path: ConfigPath, issues: ConfigIssue[]): string {
  return text.replace(REFERENCE, (whole, escaped: string, name: string, fallback: string | undefined) => {
    if (escaped) return whole.slice(1);
    const found = env[name];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback;
    issues.push({
      path,
      kind: "env",
      message: `environment variable ${name} is not set (referenced as \${${name}}; use \${${name}:-default} for a fallback)`,
    });
    return whole;
  });
}
