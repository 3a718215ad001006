// Sandbox context per session (OpenClaw 2026.9.6 `agents/sandbox/runtime-status.ts`).
// Owns: whether a session is sandboxed (`off` never, `all` always, `non-main` every session but the agent's
// main one), the scope key the sandbox is shared under, the workspace access, and — for a sandboxed session —
// the sandbox workspace directory of its scope (under `sandbox.workspaceRoot`, default
// `<stateDir>/sandboxes`), the view its tools get (cwd and mounts), network and limits. Does not own:
// starting sandboxes (@agent-kernel/sandbox, called by the executor) or which tools a sandbox allows
// (tool-policy).
import { isAbsolute, join, resolve } from "node:path";
import type { AgentConfig } from "@agent-kernel/config";
import {
  type SandboxLimits,
  type SandboxMount,
  sandboxLayout,
  sandboxLimits,
  sandboxWorkspaceDir,
} from "@agent-kernel/sandbox";
import { buildAgentMainSessionKey } from "./session-key.ts";

export type SandboxMode = "off" | "non-main" | "all";
export type SandboxScope = "session" | "agent" | "shared";
export type WorkspaceAccess = "none" | "ro" | "rw";

export interface SandboxContext {
  readonly sandboxed: boolean;
  readonly mode: SandboxMode;
  readonly scope: SandboxScope;
  /** The key sandboxes are shared under: the session key, `agent:<id>`, or `shared`. */
  readonly scopeKey: string;
  readonly workspaceAccess: WorkspaceAccess;
  /** `bwrap` for a sandboxed session, `host` (no containment) otherwise. */
  readonly engine: "bwrap" | "host";
  /** Network inside the sandbox (always true on the host). */
  readonly network: boolean;
  /** Where sandbox workspaces live. */
  readonly workspaceRoot: string;
  /** The scope's sandbox workspace on the host (the agent workspace when not sandboxed or with `rw`). */
  readonly workspaceDir: string;
  /** Working directory as the session's tools see it. */
  readonly cwd: string;
  /** What the session's tools see: `path` inside, `hostPath` outside. One host mount when not sandboxed. */
  readonly mounts: readonly SandboxMount[];
  /** Per-command limits inside the sandbox. */
  readonly limits: SandboxLimits;
}

/** The agent's sandbox settings; the limits and engine fields default as in the config when absent. */
type SandboxSettings = Pick<AgentConfig["sandbox"], "mode" | "scope" | "workspaceAccess"> &
  Partial<AgentConfig["sandbox"]>;

export function resolveSandboxContext(params: {
  agent: Pick<AgentConfig, "id"> & { readonly sandbox: SandboxSettings };
  sessionKey: string;
  mainKey?: string | undefined;
  /** `session.scope: "global"`: the main session is the literal key `global`. */
  globalScope?: boolean | undefined;
  /** A caller that must run sandboxed whatever the mode (e.g. an untrusted hook). */
  required?: boolean | undefined;
  /** The agent's workspace on the host. */
  agentWorkspace?: string | undefined;
  /** The state dir (the default workspace root lives in it). */
  stateDir?: string | undefined;
}): SandboxContext {
  const settings = params.agent.sandbox;
  const { mode, scope, workspaceAccess } = settings;
  const mainSessionKey = params.globalScope
    ? "global"
    : buildAgentMainSessionKey({ agentId: params.agent.id, mainKey: params.mainKey });
  const sandboxed =
    params.required === true ||
    (mode !== "off" && (mode === "all" || params.sessionKey.trim() !== mainSessionKey.trim()));
  const scopeKey =
    scope === "session" ? params.sessionKey : scope === "agent" ? `agent:${params.agent.id}` : "shared";
  const stateDir = params.stateDir ?? resolve(".agent-kernel");
  const agentWorkspace = params.agentWorkspace ?? process.cwd();
  const configuredRoot = settings.workspaceRoot;
  const workspaceRoot =
    configuredRoot === undefined
      ? join(stateDir, "sandboxes")
      : isAbsolute(configuredRoot)
        ? configuredRoot
        : resolve(stateDir, configuredRoot);
  const limits = sandboxLimits({
    timeoutSeconds: settings.timeoutSeconds ?? 120,
    maxOutputBytes: settings.maxOutputBytes ?? 1024 * 1024,
    memoryMb: settings.memoryMb ?? 1024,
    maxProcesses: settings.maxProcesses ?? 256,
    maxFileMb: settings.maxFileMb ?? 512,
    tmpMb: settings.tmpMb ?? 256,
  });
  const base = { sandboxed, mode, scope, scopeKey, workspaceAccess, workspaceRoot, limits };
  if (!sandboxed) {
    return {
      ...base,
      engine: "host",
      network: true,
      workspaceDir: agentWorkspace,
      cwd: agentWorkspace,
      mounts: [{ path: agentWorkspace, hostPath: agentWorkspace, writable: true }],
    };
  }
  const sandboxWorkspace =
    workspaceAccess === "rw" ? agentWorkspace : sandboxWorkspaceDir(workspaceRoot, scopeKey);
  const layout = sandboxLayout({ workspaceAccess, agentWorkspace, sandboxWorkspace });
  return {
    ...base,
    engine: settings.engine ?? "bwrap",
    network: settings.network ?? false,
    workspaceDir: sandboxWorkspace,
    cwd: layout.cwd,
    mounts: layout.mounts,
  };
}
