// What the operations start from: the loaded config, the file it came from (or where `setup` and `config set`
// would write one) and the state dir. The precedence is the apps' own: `--config`, else $AGENT_KERNEL_CONFIG,
// else ~/.agent-kernel/config.json5, else defaults; `--state-dir`, else $AGENT_KERNEL_STATE_DIR, else
// `store.stateDir`, else ~/.agent-kernel. A config error is a usage error (exit 2). Also the store, opened the
// way the apps open it, with its failures as exit 5. Does not own the config's rules (@agent-kernel/config).
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { applyStateDir, ConfigError, type KernelConfig, loadConfig } from "@agent-kernel/config";
import type { AnyKernelStore } from "@agent-kernel/kernel";
import { CliError, EXIT } from "./errors.ts";
import type { CliIo } from "./io.ts";

/** The flags every operation takes. */
export interface GlobalFlags {
  readonly config?: string | undefined;
  readonly "state-dir"?: string | undefined;
}

/** The loaded config and where things are. */
export interface OperationContext {
  readonly config: KernelConfig;
  /** The file the config was read from; undefined when none exists (defaults). */
  readonly configPath: string | undefined;
  /** Where a config is written (`setup`, `config set`): the file read, else the default path. */
  readonly configTarget: string;
  readonly stateDir: string;
}

/** `~` and relative paths made absolute against `cwd`. */
export function expandPath(path: string, cwd: string): string {
  const home = homedir();
  const expanded = path === "~" ? home : path.startsWith("~/") ? join(home, path.slice(2)) : path;
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

/** Where the config is read from and written to, before reading it. */
export function configTargetOf(flags: GlobalFlags, io: CliIo): string {
  const chosen = flags.config?.trim() || io.env.AGENT_KERNEL_CONFIG?.trim();
  return chosen ? expandPath(chosen, io.cwd) : join(homedir(), ".agent-kernel", "config.json5");
}

/** Loads the config and resolves the state dir (written back into the config, as the apps do). */
export function loadOperationContext(flags: GlobalFlags, io: CliIo): OperationContext {
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
  const { config, stateDir } = applyStateDir(loaded.config, flags["state-dir"], { env: io.env, cwd: io.cwd });
  return {
    config,
    configPath: loaded.path,
    configTarget: loaded.path ?? configTargetOf(flags, io),
    stateDir,
  };
}

/** Runs `use` with the kernel store open (SQLite under the state dir, or PostgreSQL), closing it after. */
export async function withStore<T>(
  context: OperationContext,
  use: (store: AnyKernelStore) => Promise<T>,
): Promise<T> {
  // Loaded here: commands that need no store (config, models) never load the kernel.
  const { openKernelStore } = await import("@agent-kernel/kernel");
  let store: AnyKernelStore;
  try {
    store = await openKernelStore({ stateDir: context.stateDir, config: context.config });
  } catch (error) {
    const where =
      context.config.store.driver === "postgres"
        ? "the PostgreSQL store (store.postgres.url)"
        : context.stateDir;
    throw new CliError(EXIT.store, `cannot open the store in ${where}: ${(error as Error).message}`);
  }
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}
