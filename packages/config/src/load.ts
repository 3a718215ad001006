// Parsing and loading. Owns: where the config file is found, JSON5 parsing,
// `${ENV}` substitution, validation with every default filled, and the
// ConfigError a user sees. Does not own: the schema itself (schema.ts).
import { readFileSync, statSync } from "node:fs";
import { availableParallelism, homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import JSON5 from "json5";
import { DEFAULT_CONFIG_FILE, defaultMaxConcurrent } from "./defaults.ts";
import { type Environment, substituteEnv } from "./env.ts";
import { ConfigError, type ConfigIssue, issuesFromZod, knownKeysOf } from "./errors.ts";
import { configSchema, type KernelConfig } from "./schema.ts";

export const CONFIG_ENV_VAR = "AGENT_KERNEL_CONFIG";

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
  const source = options.sourceName ?? "(inline)";
  const substituted = substituteEnv(input, options.env ?? process.env);
  const parsed = configSchema.safeParse(substituted.value, { reportInput: true });
  const issues: ConfigIssue[] = [...substituted.issues];
  if (!parsed.success) issues.push(...issuesFromZod(parsed.error.issues, configKnownKeys));
  if (issues.length > 0 || !parsed.success) {
    return { ok: false, error: new ConfigError(source, dedupe(issues)) };
  }
  const config = parsed.data;
  config.agents.defaults.maxConcurrent ??= defaultMaxConcurrent(options.cpuCount ?? availableCpus());
  return { ok: true, config };
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
  let raw: unknown;
  try {
    raw = text.trim() === "" ? {} : JSON5.parse(text);
  } catch (error) {
    throw new ConfigError(source, [syntaxIssue(text, error)]);
  }
  return parseConfig(raw, { ...options, sourceName: source });
}

export interface LoadConfigOptions extends Omit<ParseConfigOptions, "sourceName"> {
  /** An explicit file; else $AGENT_KERNEL_CONFIG; else ~/.agent-kernel/config.json5 if it exists. */
  readonly path?: string;
  /** Resolves relative paths; default process.cwd(). */
  readonly cwd?: string;
  /** Replaces the home directory for `~`; default os.homedir(). */
  readonly homeDir?: string;
}

export interface LoadedConfig {
  readonly config: KernelConfig;
  /** The file read, or undefined when no file exists and defaults were used. */
  readonly path: string | undefined;
  /** How the file was chosen. */
  readonly origin: "argument" | "env" | "default-path" | "defaults-only";
}

/** Finds, reads, parses and validates the config file; throws ConfigError on any problem. */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const home = options.homeDir ?? homedir();
  const fromEnv = env[CONFIG_ENV_VAR]?.trim() || undefined;
  const origin = options.path !== undefined ? "argument" : fromEnv !== undefined ? "env" : "default-path";
  const given = options.path ?? fromEnv ?? DEFAULT_CONFIG_FILE;
  const path = resolvePath(given, cwd, home);
  const how = origin === "env" ? ` (from $${CONFIG_ENV_VAR})` : "";

  let text: string;
  try {
    if (statSync(path).isDirectory())
      throw new ConfigError(path, [fileIssue(`${path}${how} is a directory, expected a file`)]);
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && origin === "default-path") {
      return {
        config: parseConfig({}, { ...options, env, sourceName: "(defaults)" }),
        path: undefined,
        origin: "defaults-only",
      };
    }
    const reason =
      code === "ENOENT"
        ? "does not exist"
        : code === "EACCES"
          ? "is not readable"
          : `cannot be read (${code ?? String(error)})`;
    throw new ConfigError(path, [fileIssue(`config file ${path}${how} ${reason}`)]);
  }
  return { config: parseConfigText(text, { ...options, env, sourceName: path }), path, origin };
}

/** Expands a leading `~` and resolves against `cwd`. */
export function resolvePath(path: string, cwd: string, home: string): string {
  const expanded = path === "~" ? home : path.startsWith("~/") ? `${home}${path.slice(1)}` : path;
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

function availableCpus(): number {
  // Honours cgroup CPU limits, unlike os.cpus().length.
  return availableParallelism();
}

function fileIssue(message: string): ConfigIssue {
  return { path: [], kind: "file", message };
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

const configKnownKeys = knownKeysOf(configSchema);
