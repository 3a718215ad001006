// Who and where a run is: agentId, sessionKey, sessionId, workspaceDir and
// agentDir resolved from a SessionKernelInput-like input and the config.
// Owns: the unknown-agent and agent/key-mismatch errors, default paths
// (`~` expanded), the state dir, and whether the current sessionId is still
// fresh under `session.reset`. Does not own: the key grammar (session-key.ts)
// or reading/writing session rows (session-store).
import { homedir } from "node:os";
import { join } from "node:path";
import {
  closestMatch,
  defaultAgentId,
  type KernelConfig,
  listAgentIds,
  resolveStateDir as resolveConfigStateDir,
  resolvePath,
} from "@agent-kernel/config";
import {
  buildAgentMainSessionKey,
  classifySessionKeyShape,
  isUnscopedSessionKeySentinel,
  normalizeAgentId,
  parseAgentSessionKey,
  toAgentStoreSessionKey,
} from "./session-key.ts";

export interface SessionIdentityInput {
  readonly agentId?: string | undefined;
  readonly sessionKey?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly workspaceDir?: string | undefined;
  readonly agentDir?: string | undefined;
}

export interface PathOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly homeDir?: string;
  readonly cwd?: string;
}

export type IdentitySource = "input" | "session-key" | "agent" | "default";

export interface SessionIdentity {
  readonly agentId: string;
  readonly agentIdSource: IdentitySource;
  readonly sessionKey: string;
  readonly sessionKeySource: "input" | "main";
  /** True for the agent's main session (DMs collapse into it with dmScope "main"). */
  readonly isMainSession: boolean;
  readonly workspaceDir: string;
  readonly workspaceDirSource: "input" | "agent" | "defaults" | "default";
  readonly agentDir: string;
  readonly agentDirSource: "input" | "agent" | "default";
  readonly stateDir: string;
}

export class SessionIdentityError extends Error {
  override readonly name = "SessionIdentityError";
}

const expandPath = (path: string, options: PathOptions): string =>
  resolvePath(path, options.cwd ?? process.cwd(), options.homeDir ?? homedir());

/** `store.stateDir`, else `$AGENT_KERNEL_STATE_DIR`, else `~/.agent-kernel`: @agent-kernel/config's library rule. */
export const resolveStateDir = (config: KernelConfig, options: PathOptions = {}): string =>
  resolveConfigStateDir(config, options);

/**
 * Resolves the run's identity. An explicit agentId must name a configured
 * agent; a session key naming another agent is an error; with neither, the
 * key's agent or the default agent is used. The key is canonicalised
 * (`agent:<id>:<rest>`, lower-cased except opaque peer ids); none means the
 * agent's main key. The workspace is the input's, the agent's, the defaults'
 * (default agent only), else `<stateDir>/workspace` (other agents
 * `<stateDir>/workspace-<id>`); agentDir defaults to `<stateDir>/agents/<id>/agent`.
 */
export function resolveSessionIdentity(
  config: KernelConfig,
  input: SessionIdentityInput,
  options: PathOptions = {},
): SessionIdentity {
  const known = listAgentIds(config);
  const rawKey = input.sessionKey?.trim() || undefined;
  const shape = classifySessionKeyShape(rawKey);
  if (shape === "malformed_agent") {
    throw new SessionIdentityError(`malformed session key "${rawKey}": expected "agent:<agentId>:<rest>"`);
  }
  if (rawKey !== undefined && isUnscopedSessionKeySentinel(rawKey)) {
    throw new SessionIdentityError(`session key "${rawKey}" is not agent-scoped; pass an agent session key`);
  }
  const keyAgent = parseAgentSessionKey(rawKey)?.agentId;
  const requireKnown = (id: string, what: string) => {
    if (known.includes(id)) return;
    const suggestion = closestMatch(id, known);
    throw new SessionIdentityError(
      `unknown agent "${id}"${what}${suggestion ? `; did you mean "${suggestion}"?` : ""} (agents: ${known.join(", ")})`,
    );
  };
  let agentId: string;
  let agentIdSource: IdentitySource;
  if (input.agentId?.trim()) {
    agentId = normalizeAgentId(input.agentId);
    requireKnown(agentId, "");
    agentIdSource = "input";
    if (keyAgent !== undefined && normalizeAgentId(keyAgent) !== agentId) {
      throw new SessionIdentityError(
        `session key "${rawKey}" belongs to agent "${normalizeAgentId(keyAgent)}", not to the given agent "${agentId}"`,
      );
    }
  } else if (keyAgent !== undefined) {
    agentId = normalizeAgentId(keyAgent);
    requireKnown(agentId, ` in session key "${rawKey}"`);
    agentIdSource = "session-key";
  } else {
    agentId = defaultAgentId(config);
    agentIdSource = "default";
  }
  const mainKey = config.session.mainKey;
  const main = buildAgentMainSessionKey({ agentId, mainKey });
  const sessionKey =
    rawKey === undefined ? main : toAgentStoreSessionKey({ agentId, requestKey: rawKey, mainKey });
  const agent = config.agents.list.find((entry) => entry.id === agentId);
  const stateDir = resolveStateDir(config, options);
  const isDefault = agentId === defaultAgentId(config);
  // agents.defaults.workspace belongs to the default agent; other agents get their own folder.
  const workspace = input.workspaceDir?.trim()
    ? { path: input.workspaceDir, source: "input" as const }
    : agent?.workspace
      ? { path: agent.workspace, source: "agent" as const }
      : isDefault && config.agents.defaults.workspace
        ? { path: config.agents.defaults.workspace, source: "defaults" as const }
        : {
            path: join(stateDir, isDefault ? "workspace" : `workspace-${agentId}`),
            source: "default" as const,
          };
  const agentDir = input.agentDir?.trim()
    ? { path: input.agentDir, source: "input" as const }
    : agent?.agentDir
      ? { path: agent.agentDir, source: "agent" as const }
      : { path: join(stateDir, "agents", agentId, "agent"), source: "default" as const };
  return {
    agentId,
    agentIdSource,
    sessionKey,
    sessionKeySource: rawKey === undefined ? "main" : "input",
    isMainSession: sessionKey === main,
    workspaceDir: expandPath(workspace.path, options),
    workspaceDirSource: workspace.source,
    agentDir: expandPath(agentDir.path, options),
    agentDirSource: agentDir.source,
    stateDir,
  };
}

export type ResetConfig = KernelConfig["session"]["reset"];

/**
 * Whether a session last active at `lastActivityAt` is stale at `now`:
 * `daily` after the most recent `atHour` (local time) boundary, `idle` after
 * `idleMinutes` without activity, `off` never.
 */
export function isSessionStale(reset: ResetConfig, lastActivityAt: number, now: number): boolean {
  if (reset.mode === "off") return false;
  if (reset.mode === "idle") {
    return reset.idleMinutes !== undefined && now - lastActivityAt > reset.idleMinutes * 60_000;
  }
  const boundary = new Date(now);
  boundary.setHours(reset.atHour, 0, 0, 0);
  if (boundary.getTime() > now) boundary.setDate(boundary.getDate() - 1);
  return lastActivityAt < boundary.getTime();
}

export type SessionIdSource = "input" | "current" | "new:none" | "new:stale" | "new:forced";

/**
 * The sessionId to run under: the caller's, else the current one while it is
 * fresh, else a new one (`newId`), with the reason.
 */
export function resolveSessionId(params: {
  requested?: string | undefined;
  current?: { sessionId: string; lastActivityAt: number } | undefined;
  reset: ResetConfig;
  now: number;
  forceNew?: boolean | undefined;
  newId: () => string;
}): { sessionId: string; source: SessionIdSource } {
  if (params.requested?.trim()) return { sessionId: params.requested.trim(), source: "input" };
  if (params.forceNew) return { sessionId: params.newId(), source: "new:forced" };
  if (!params.current) return { sessionId: params.newId(), source: "new:none" };
  if (isSessionStale(params.reset, params.current.lastActivityAt, params.now)) {
    return { sessionId: params.newId(), source: "new:stale" };
  }
  return { sessionId: params.current.sessionId, source: "current" };
}
