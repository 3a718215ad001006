// What every command starts from: the loaded config and the state dir, from the global flags and the
// environment. Owns the precedence rules of the CLI (`--config`, else $AGENT_KERNEL_CONFIG, else
// ~/.agent-kernel/config.json5, else defaults; `--state-dir`, else $AGENT_KERNEL_STATE_DIR, else the config's
// `store.stateDir`, else ~/.agent-kernel) and turning a config error into a usage error. The resolved state
// dir is written back into the config so the store and the runtime (workspace and agent dir defaults) agree.
// Does not own: the config's rules (@agent-kernel/config) or the store (the kernel facades).
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { ConfigError, type KernelConfig, loadConfig } from "@agent-kernel/config";
import { CliError, EXIT } from "./exit-codes.ts";
import type { CliIo } from "./io.ts";

export interface GlobalFlags {
  readonly config?: string | undefined;
  readonly stateDir?: string | undefined;
}

export interface CommandContext {
  readonly config: KernelConfig;
  readonly configPath: string | undefined;
  readonly stateDir: string;
}

const STATE_DIR_ENV_VAR = "AGENT_KERNEL_STATE_DIR";

function expand(path: string, cwd: string): string {
  const home = homedir();
  const expanded = path === "~" ? home : path.startsWith("~/") ? join(home, path.slice(2)) : path;
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

export function loadCommandContext(flags: GlobalFlags, io: CliIo): CommandContext {
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig({
      env: io.env,
      cwd: io.cwd,
      ...(flags.config === undefined ? {} : { path: flags.config }),
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(EXIT.usage, error.message);
    throw error;
  }
  const chosen =
    flags.stateDir?.trim() ||
    io.env[STATE_DIR_ENV_VAR]?.trim() ||
    loaded.config.store.stateDir ||
    join(homedir(), ".agent-kernel");
  const stateDir = expand(chosen, io.cwd);
  return {
    config: { ...loaded.config, store: { ...loaded.config.store, stateDir } },
    configPath: loaded.path,
    stateDir,
  };
}
