// Where the kernel keeps its state, decided in one place. Owns: the two precedence rules (a program's: flag,
// then $AGENT_KERNEL_STATE_DIR, then the config's `store.stateDir`, then ~/.agent-kernel; a library's, given a
// config a program already resolved: `store.stateDir`, then the variable, then ~/.agent-kernel) and turning
// `~` and relative paths into absolute ones. Does not own: the layout inside the state dir (session-store).
import { homedir } from "node:os";
import { resolvePath } from "./config-file.ts";
import type { KernelConfig } from "./schema.ts";

/** The environment variable naming the state dir. */
export const STATE_DIR_ENV_VAR = "AGENT_KERNEL_STATE_DIR";

/** Where the state dir is when nothing names one (before `~` is expanded). */
export const DEFAULT_STATE_DIR = "~/.agent-kernel";

/** The process's environment, working directory and home, each overridable (tests, embedding programs). */
export interface StateDirEnvironment {
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Relative paths are resolved against this (default `process.cwd()`). */
  readonly cwd?: string | undefined;
  /** `~` stands for this (default `os.homedir()`). */
  readonly homeDir?: string | undefined;
}

const absolute = (path: string, options: StateDirEnvironment): string =>
  resolvePath(path, options.cwd ?? process.cwd(), options.homeDir ?? homedir());

const named = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
};

/**
 * A library's rule, for a config a program already resolved: `store.stateDir`, else
 * `$AGENT_KERNEL_STATE_DIR`, else `~/.agent-kernel`; absolute.
 */
export function resolveStateDir(
  config: Pick<KernelConfig, "store"> | undefined,
  options: StateDirEnvironment = {},
): string {
  const env = options.env ?? process.env;
  const chosen = named(config?.store.stateDir) ?? named(env[STATE_DIR_ENV_VAR]) ?? DEFAULT_STATE_DIR;
  return absolute(chosen, options);
}

/**
 * A program's rule: the `--state-dir` flag, else `$AGENT_KERNEL_STATE_DIR`, else the config file's
 * `store.stateDir`, else `~/.agent-kernel`. Returns the absolute dir and the config with it written into
 * `store.stateDir`, so every package the program hands the config to uses the same dir.
 */
export function applyStateDir<Config extends Pick<KernelConfig, "store">>(
  config: Config,
  flag: string | undefined,
  options: StateDirEnvironment = {},
): { readonly config: Config; readonly stateDir: string } {
  const env = options.env ?? process.env;
  const chosen =
    named(flag) ?? named(env[STATE_DIR_ENV_VAR]) ?? named(config.store.stateDir) ?? DEFAULT_STATE_DIR;
  const stateDir = absolute(chosen, options);
  return { config: { ...config, store: { ...config.store, stateDir } }, stateDir };
}
