// Where the store keeps its files. Owns: resolving the state dir (explicit option, then `store.stateDir` from
// the config, then $AGENT_KERNEL_STATE_DIR, then ~/.agent-kernel) and the layout inside it. Does not own:
// creating or opening the files (store.ts).
import { homedir } from "node:os";
import { join } from "node:path";
import {
  AGENT_ID_PATTERN,
  type KernelConfig,
  resolveStateDir as resolveConfigStateDir,
  resolvePath,
} from "@agent-kernel/config";
import { SessionStoreError } from "./errors.ts";

/** The environment variable naming the state dir (re-exported from @agent-kernel/config). */
export { STATE_DIR_ENV_VAR } from "@agent-kernel/config";

export interface StateDirSource {
  readonly stateDir?: string;
  readonly config?: Pick<KernelConfig, "store">;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** An explicit `stateDir`, else @agent-kernel/config's library rule (`store.stateDir`, the variable, ~/.agent-kernel). */
export function resolveStateDir(source: StateDirSource = {}): string {
  return source.stateDir !== undefined
    ? resolvePath(source.stateDir, process.cwd(), homedir())
    : resolveConfigStateDir(source.config, { env: source.env ?? process.env });
}

/** `state/kernel.sqlite`: sessions, runs, auth state, queue, cron. */
export function controlPlanePath(stateDir: string): string {
  return join(stateDir, "state", "kernel.sqlite");
}

/** `agents/<agentId>/agent.sqlite`: that agent's transcripts. */
export function agentDatabasePath(stateDir: string, agentId: string): string {
  return join(stateDir, "agents", normalizeAgentId(agentId), "agent.sqlite");
}

/** Agent ids name folders, so only OpenClaw's valid ids are accepted; stored lower-cased like the config does. */
export function normalizeAgentId(agentId: string): string {
  if (!AGENT_ID_PATTERN.test(agentId)) {
    throw new SessionStoreError(
      `invalid agent id ${JSON.stringify(agentId)}: expected 1-64 letters, digits, "_" or "-", starting with a letter or digit`,
    );
  }
  return agentId.toLowerCase();
}
