// What every command starts from: the loaded config and the state dir, from the global flags and the
// environment (`--config`, else $AGENT_KERNEL_CONFIG, else ~/.agent-kernel/config.json5, else defaults;
// `--state-dir`, else $AGENT_KERNEL_STATE_DIR, else the config's `store.stateDir`, else ~/.agent-kernel — the
// rule is @agent-kernel/config's `applyStateDir`, shared by every app) and turning a config error into a usage
// error. The resolved state dir is written back into the config so the store and the runtime agree.
// Does not own: the config's rules (@agent-kernel/config) or the store (the kernel facades).
import { applyStateDir, ConfigError, type KernelConfig, loadConfigCached } from "@agent-kernel/config";
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

/**
 * Loads the config through the config package's validation cache: a config file validated before by this
 * release is not validated again (nor the schema built), which is most of what a start spends on its config.
 */
export async function loadCommandContext(flags: GlobalFlags, io: CliIo): Promise<CommandContext> {
  let loaded: Awaited<ReturnType<typeof loadConfigCached>>;
  try {
    loaded = await loadConfigCached({
      env: io.env,
      cwd: io.cwd,
      ...(flags.config === undefined ? {} : { path: flags.config }),
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(EXIT.usage, error.message);
    throw error;
  }
  const { config, stateDir } = applyStateDir(loaded.config, flags.stateDir, { env: io.env, cwd: io.cwd });
  return { config, configPath: loaded.path, stateDir };
}
