// Parsing and loading. Owns: JSON5 parsing, `${ENV}` substitution, validation
// with every default filled, and the ConfigError a user sees. Does not own:
// the schema itself (schema.ts) or finding and reading the file (config-file.ts).
import JSON5 from "json5";
import {
  CONFIG_ENV_VAR,
  type LoadConfigOptions,
  type LoadedConfig,
  readConfigFile,
  resolvePath,
} from "./config-file.ts";
import { type Environment, substituteEnv } from "./env.ts";
import { ConfigError, type ConfigIssue, issuesFromZod, type KnownKeysAt, knownKeysOf } from "./errors.ts";
import { fillMachineDefaults } from "./machine-defaults.ts";
import type { KernelConfig } from "./schema.ts";
import { configSchemaNow } from "./schema-loader.ts";

export { CONFIG_ENV_VAR, type LoadConfigOptions, type LoadedConfig, resolvePath };

export interface ParseConfigOptions {
  /** Variables for `${NAME}` references; default `process.env`. */
  readonly env?: Environment;
  /** Names the config in error messages, e.g. its file path. */
  readonly sourceName?: string;
  /** Fills `agents.defaults.maxConcurrent` when unset (max(8, 4 × CPUs)); default this machine's. */
  readonly cpuCount?: number;
}

export type ParseConfigResult =
  | { readonly ok: true; readonly config: KernelConfig }
  | { readonly ok: false; readonly error: ConfigError };

/** Validates an already-parsed value (e.g. from JSON5); never throws. */
export function safeParseConfig(input: unknown, options: ParseConfigOptions = {}): ParseConfigResult {
  const result = validateConfig(input, options);
  if (result.ok) fillMachineDefaults(result.config, options.cpuCount);
  return result;
}

/**
 * The schema's verdict on `input` with its defaults, but before the defaults that depend on the machine
 * (`fillMachineDefaults`): what the validation cache (load-cached.ts) keeps, since it holds on any machine.
 */
export function validateConfig(input: unknown, options: ParseConfigOptions = {}): ParseConfigResult {
  const source = options.sourceName ?? "(inline)";
  const substituted = substituteEnv(input, options.env ?? process.env);
  const parsed = configSchemaNow().safeParse(substituted.value, { reportInput: true });
  const issues: ConfigIssue[] = [...substituted.issues];
  if (!parsed.success) issues.push(...issuesFromZod(parsed.error.issues, configKnownKeys));
  if (issues.length > 0 || !parsed.success) {
    return { ok: false, error: new ConfigError(source, dedupe(issues)) };
  }
  return { ok: true, config: parsed.data };
}

/** Validates an already-parsed value; throws ConfigError listing every problem. */
export function parseConfig(input: unknown, options: ParseConfigOptions = {}): KernelConfig {
  const result = safeParseConfig(input, options);
  if (!result.ok) throw result.error;
  return result.config;
}

/** Parses JSON5 text and validates it; throws ConfigError (syntax errors with line, column and the line itself). */
export function parseConfigText(text: string, options: ParseConfigOptions = {}): KernelConfig {
  const source = options.sourceName ?? "(inline)";
  return parseConfig(parseJson5(text, source), { ...options, sourceName: source });
}

/** The JSON5 value of `text` (an empty text is `{}`); throws ConfigError naming the line and column. */
export function parseJson5(text: string, source: string): unknown {
  try {
    return text.trim() === "" ? {} : JSON5.parse(text);
  } catch (error) {
    throw new ConfigError(source, [syntaxIssue(text, error)]);
  }
}

/** Finds, reads, parses and validates the config file; throws ConfigError on any problem. */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const file = readConfigFile(options);
  if (file.text === undefined) {
    return {
      config: parseConfig({}, { ...options, env, sourceName: "(defaults)" }),
      path: undefined,
      origin: "defaults-only",
    };
  }
  return {
    config: parseConfigText(file.text, { ...options, env, sourceName: file.path }),
    path: file.path,
    origin: file.origin,
  };
}

function syntaxIssue(text: string, error: unknown): ConfigIssue {
  const { lineNumber, columnNumber, message } = error as {
    lineNumber?: number;
    columnNumber?: number;
    message?: string;
  };
  const reason = (message ?? String(error)).replace(/^JSON5: /, "").replace(/ at \d+:\d+$/, "");
  if (lineNumber === undefined || columnNumber === undefined) {
    return { path: [], kind: "syntax", message: `JSON5 syntax error: ${reason}` };
  }
  const line = text.split(/\r?\n/)[lineNumber - 1] ?? "";
  const caret = `${" ".repeat(Math.max(0, columnNumber - 1))}^`;
  return {
    path: [],
    kind: "syntax",
    message: `JSON5 syntax error at line ${lineNumber}, column ${columnNumber}: ${reason}\n      ${line}\n      ${caret}`,
  };
}

function dedupe(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path.join("\u0000")}\u0001${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The keys the schema knows at each path, for "did you mean" hints; looked up when a config is invalid, so
 * that loading this module does not touch the schema (which is then built only when a config is validated).
 */
let knownKeys: KnownKeysAt | undefined;
const configKnownKeys: KnownKeysAt = (path) => {
  knownKeys ??= knownKeysOf(configSchemaNow());
  return knownKeys(path);
};
