// Finding and reading the config file. Owns: which file is the config (an explicit path, else
// $AGENT_KERNEL_CONFIG, else ~/.agent-kernel/config.json5 when it exists, else defaults only), `~` expansion,
// and the ConfigError for a file that is missing, a folder or unreadable. Does not own: parsing or validating
// the text (load.ts), so reading the file never builds the schema.
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { DEFAULT_CONFIG_FILE } from "./defaults.ts";
import type { Environment } from "./env.ts";
import { ConfigError, type ConfigIssue } from "./errors.ts";
import type { KernelConfig } from "./schema.ts";

export const CONFIG_ENV_VAR = "AGENT_KERNEL_CONFIG";

export interface LoadConfigOptions {
  /** Variables for `${NAME}` references; default `process.env`. */
  readonly env?: Environment;
  /** Fills `agents.defaults.maxConcurrent` when unset (max(8, 4 × CPUs)); default this machine's. */
  readonly cpuCount?: number;
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

/** The config file's text, or `text: undefined` when no file is given and the default one does not exist. */
export type ConfigFile =
  | { readonly path: string; readonly origin: "argument" | "env" | "default-path"; readonly text: string }
  | { readonly path: undefined; readonly origin: "defaults-only"; readonly text: undefined };

/** Finds and reads the config file; throws ConfigError when a given file is missing, a folder or unreadable. */
export function readConfigFile(options: LoadConfigOptions = {}): ConfigFile {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const home = options.homeDir ?? homedir();
  const fromEnv = env[CONFIG_ENV_VAR]?.trim() || undefined;
  const origin = options.path !== undefined ? "argument" : fromEnv !== undefined ? "env" : "default-path";
  const given = options.path ?? fromEnv ?? DEFAULT_CONFIG_FILE;
  const path = resolvePath(given, cwd, home);
  const how = origin === "env" ? ` (from $${CONFIG_ENV_VAR})` : "";

  try {
    if (statSync(path).isDirectory())
      throw new ConfigError(path, [fileIssue(`${path}${how} is a directory, expected a file`)]);
    return { path, origin, text: readFileSync(path, "utf8") };
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && origin === "default-path") {
      return { path: undefined, origin: "defaults-only", text: undefined };
    }
    const reason =
      code === "ENOENT"
        ? "does not exist"
        : code === "EACCES"
          ? "is not readable"
          : `cannot be read (${code ?? String(error)})`;
    throw new ConfigError(path, [fileIssue(`config file ${path}${how} ${reason}`)]);
  }
}

/** Expands a leading `~` and resolves against `cwd`. */
export function resolvePath(path: string, cwd: string, home: string): string {
  const expanded = path === "~" ? home : path.startsWith("~/") ? `${home}${path.slice(1)}` : path;
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

function fileIssue(message: string): ConfigIssue {
  return { path: [], kind: "file", message };
}
