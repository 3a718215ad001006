// Readable config errors. Owns: turning zod issues, JSON5 syntax errors,
// missing files and missing environment variables into one list of
// `path: expected ..., found ...` lines, and the ConfigError that carries
// them. Does not own: deciding what is valid (the schema does).
import type { z } from "zod";
import { closestMatch } from "./suggest.ts";

export type ConfigPath = readonly (string | number)[];

export type ConfigIssueKind = "invalid" | "unknown-key" | "env" | "syntax" | "file";

export interface ConfigIssue {
  /** Where in the config, as keys and array indexes; empty for the whole file. */
  readonly path: ConfigPath;
  /** What is wrong: "expected ..., found ...", or "unknown key; did you mean ...". */
  readonly message: string;
  readonly kind: ConfigIssueKind;
}

/** A config that cannot be used. `message` is the full text a user should read; no stack trace needed. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly issues: readonly ConfigIssue[];
  readonly source: string;

  constructor(source: string, issues: readonly ConfigIssue[]) {
    super(formatConfigIssues(source, issues));
    this.source = source;
    this.issues = issues;
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

/** `agents.list[0].model`, `agents.defaults.models["openai/gpt-5"].alias`; "(root)" for the file itself. */
export function formatPath(path: ConfigPath): string {
  if (path.length === 0) return "(root)";
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

export function formatConfigIssues(source: string, issues: readonly ConfigIssue[]): string {
  const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
  const lines = issues.map((issue) =>
    issue.kind === "syntax" || issue.kind === "file"
      ? `  - ${issue.message}`
      : `  - ${formatPath(issue.path)}: ${issue.message}`,
  );
  return [`Invalid config ${source} (${count}):`, ...lines].join("\n");
}

// `apiKey`, `botToken`, `signingSecret`, … but not `sessionKey` or `mainKey`, which are not secrets.
const SECRET_KEY = /(apikey|api_key|token|secret|password)$/i;

/** How a found value is shown: short, and never the value of a secret-looking key. */
export function describeFound(value: unknown, path: ConfigPath): string {
  const last = path[path.length - 1];
  if (value === undefined) return "nothing";
  if (typeof last === "string" && SECRET_KEY.test(last) && value !== null)
    return `a hidden ${typeof value} value`;
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : `an array of ${value.length}`;
  if (typeof value === "object") return "an object";
  if (typeof value === "string") {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return JSON.stringify(shown);
  }
  return String(value);
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  record: "an object",
  null: "null",
};

const FORMAT_NAMES: Record<string, string> = {
  url: 'a URL like "https://example.com"',
  datetime: 'an ISO 8601 date-time with offset, like "2026-12-01T09:00:00Z"',
  email: "an email address",
};

type ZodIssue = z.core.$ZodIssue;

/** Known keys of the object schema a path leads to, for "did you mean". */
export type KnownKeysAt = (path: ConfigPath) => readonly string[];

export function issuesFromZod(
  issues: readonly ZodIssue[],
  knownKeysAt: KnownKeysAt,
  prefix: ConfigPath = [],
): ConfigIssue[] {
  return issues.flatMap((issue) => fromZodIssue(issue, knownKeysAt, prefix));
}

function withFound(expected: string, input: unknown, path: ConfigPath): string {
  return `${expected}, found ${describeFound(input, path)}`;
}

function fromZodIssue(issue: ZodIssue, knownKeysAt: KnownKeysAt, prefix: ConfigPath): ConfigIssue[] {
  const path: ConfigPath = [...prefix, ...(issue.path as (string | number)[])];
  const input = (issue as { input?: unknown }).input;
  const invalid = (message: string): ConfigIssue[] => [{ path, message, kind: "invalid" }];
  // Messages written in the schema already say what is expected.
  const own = issue.message.startsWith("expected ") ? issue.message : undefined;

  switch (issue.code) {
    case "unrecognized_keys": {
      const known = knownKeysAt(path).filter((key) => key !== "$schema");
      return issue.keys.map((key) => {
        const suggestion = closestMatch(key, known);
        const hint = suggestion
          ? `; did you mean "${suggestion}"?`
          : known.length > 0 && known.length <= 12
            ? ` (expected one of: ${known.join(", ")})`
            : "";
        return { path: [...path, key], message: `unknown key${hint}`, kind: "unknown-key" as const };
      });
    }
    case "invalid_union": {
      const discriminated = issue as { discriminator?: string; options?: readonly unknown[] };
      if (discriminated.discriminator !== undefined && discriminated.options) {
        const found = (input as Record<string, unknown> | undefined)?.[discriminated.discriminator];
        const options = discriminated.options.map((option) => JSON.stringify(option)).join(", ");
        return invalid(withFound(`expected one of ${options}`, found, path));
      }
      // When the value has the right shape for exactly one branch, its inner
      // problems are more useful than "expected A or B".
      const shapeMatches = issue.errors.filter(
        (branch) => !branch.some((inner) => inner.code === "invalid_type" && inner.path.length === 0),
      );
      const [only] = shapeMatches;
      if (shapeMatches.length === 1 && only) return issuesFromZod(only, knownKeysAt, path);
      return invalid(withFound(own ?? "expected a different value", input, path));
    }
    case "invalid_key":
      return issuesFromZod(issue.issues, knownKeysAt, path).map((inner) => ({
        ...inner,
        message: `invalid key: ${inner.message}`,
      }));
    case "invalid_element":
      return issuesFromZod(issue.issues, knownKeysAt, path);
    case "invalid_type": {
      const expected = own ?? `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
      if (input === undefined) return invalid(`${expected}, found nothing (required)`);
      return invalid(withFound(expected, input, path));
    }
    case "invalid_value": {
      const options = issue.values.map((value) => JSON.stringify(value)).join(", ");
      const expected =
        own ?? (issue.values.length === 1 ? `expected ${options}` : `expected one of ${options}`);
      const candidates = issue.values.filter((value): value is string => typeof value === "string");
      const suggestion = typeof input === "string" ? closestMatch(input, candidates) : undefined;
      return invalid(
        withFound(expected, input, path) + (suggestion ? `; did you mean "${suggestion}"?` : ""),
      );
    }
    case "too_small":
    case "too_big": {
      if (own) return invalid(withFound(own, input, path));
      const bound = Number(issue.code === "too_small" ? issue.minimum : issue.maximum);
      const relation =
        issue.code === "too_small" ? (issue.inclusive ? ">=" : ">") : issue.inclusive ? "<=" : "<";
      if (issue.origin === "string") {
        const expected =
          issue.code === "too_small" && bound === 1
            ? "expected a non-empty string"
            : `expected a string of ${relation} ${bound} characters`;
        return invalid(withFound(expected, input, path));
      }
      if (issue.origin === "array") {
        const plural = bound === 1 ? "item" : "items";
        return invalid(withFound(`expected ${relation} ${bound} ${plural}`, input, path));
      }
      return invalid(withFound(`expected a number ${relation} ${bound}`, input, path));
    }
    case "invalid_format": {
      const expected = own ?? `expected ${FORMAT_NAMES[issue.format] ?? `a ${issue.format}`}`;
      return invalid(withFound(expected, input, path));
    }
    case "not_multiple_of":
      return invalid(withFound(`expected a multiple of ${issue.divisor}`, input, path));
    default:
      // Refinements name what they found themselves: their `input` is the refined value, not the one at `path`.
      return invalid(issue.message);
  }
}

// --- schema walking for "did you mean" ---------------------------------------

interface SchemaDef {
  readonly type: string;
  readonly shape?: Record<string, { _zod: { def: SchemaDef } }>;
  readonly catchall?: { _zod: { def: SchemaDef } };
  readonly innerType?: { _zod: { def: SchemaDef } };
  readonly in?: { _zod: { def: SchemaDef } };
  readonly element?: { _zod: { def: SchemaDef } };
  readonly valueType?: { _zod: { def: SchemaDef } };
  readonly options?: readonly { _zod: { def: SchemaDef } }[];
}

const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);

/** The object schemas a config path may lead to (several when it passes through a union). */
function defsAt(def: SchemaDef, path: ConfigPath): SchemaDef[] {
  if (WRAPPERS.has(def.type) && def.innerType) return defsAt(def.innerType._zod.def, path);
  if (def.type === "pipe" && def.in) return defsAt(def.in._zod.def, path);
  if (def.type === "union" && def.options)
    return def.options.flatMap((option) => defsAt(option._zod.def, path));
  const [head, ...rest] = path;
  if (head === undefined) return [def];
  if (def.type === "object") {
    const next = (typeof head === "string" && def.shape?.[head]) || def.catchall;
    return next ? defsAt(next._zod.def, rest) : [];
  }
  if (def.type === "array" && def.element) return defsAt(def.element._zod.def, rest);
  if (def.type === "record" && def.valueType) return defsAt(def.valueType._zod.def, rest);
  return [];
}

/** "Did you mean" for any zod schema: the keys of the object schema(s) a path leads to. */
export function knownKeysOf(schema: z.ZodType): KnownKeysAt {
  const root = (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
  return (path) => {
    const keys = defsAt(root, path).flatMap((def) =>
      def.type === "object" ? Object.keys(def.shape ?? {}) : [],
    );
    return [...new Set(keys)];
  };
}
