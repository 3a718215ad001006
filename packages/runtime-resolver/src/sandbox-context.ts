// Sandbox context per session (OpenClaw 2026.9.6 `agents/sandbox/runtime-status.ts`).
// Owns: whether a session is sandboxed (`off` never, `all` always, `non-main`
// every session but the agent's main one), the scope key the sandbox is shared
// under, and the workspace access. Does not own: creating sandboxes or which
// tools a sandbox allows (tool-policy).
import type { AgentConfig } from "@agent-kernel/config";
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
}

export function resolveSandboxContext(params: {
  agent: Pick<AgentConfig, "id" | "sandbox">;
  sessionKey: string;
  mainKey?: string | undefined;
  /** `session.scope: "global"`: the main session is the literal key `global`. */
  globalScope?: boolean | undefined;
  /** A caller that must run sandboxed whatever the mode (e.g. an untrusted hook). */
  required?: boolean | undefined;
}): SandboxContext {
  const { mode, scope, workspaceAccess } = params.agent.sandbox;
  const mainSessionKey = params.globalScope
    ? "global"
    : buildAgentMainSessionKey({ agentId: params.agent.id, mainKey: params.mainKey });
  const sandboxed =
    params.required === true ||
    (mode !== "off" && (mode === "all" || params.sessionKey.trim() !== mainSessionKey.trim()));
  const scopeKey =
    scope === "session" ? params.sessionKey : scope === "agent" ? `agent:${params.agent.id}` : "shared";
  return { sandboxed, mode, scope, scopeKey, workspaceAccess };
}
