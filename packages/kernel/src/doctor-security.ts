// The doctor's security checks. Owns: probing the sandbox engine of every agent whose sandbox mode is not
// `off` (a problem when it cannot start: those sessions' turns would fail), the engine's own warnings (a
// process limit it cannot enforce here), and the agents whose non-owner sessions can run `exec` unsandboxed
// (warnings, from `findNonOwnerHostExposure`). Does not own: the store's integrity checks (admin.ts) or the
// rules themselves (config, sandbox).
import {
  findNonOwnerHostExposure,
  type KernelConfig,
  listAgentIds,
  resolveAgentConfig,
} from "@agent-kernel/config";
import { createBwrapEngine, type EngineStatus, type SandboxEngine } from "@agent-kernel/sandbox";

export interface SandboxCheck {
  readonly agentId: string;
  readonly mode: string;
  readonly engine: string;
  readonly status: EngineStatus;
}

export interface SecurityReport {
  /** One entry per agent with a sandbox mode other than `off`. */
  readonly sandboxes: readonly SandboxCheck[];
  /** Sandboxed agents whose engine cannot start: every sandboxed turn of theirs would fail. */
  readonly problems: readonly { readonly where: string; readonly problem: string }[];
  /** Weaker than the defaults promise, but working. */
  readonly warnings: readonly { readonly where: string; readonly warning: string }[];
}

export async function checkSecurity(
  config: KernelConfig,
  options: { readonly bwrap?: SandboxEngine | undefined } = {},
): Promise<SecurityReport> {
  const sandboxes: SandboxCheck[] = [];
  const problems: { where: string; problem: string }[] = [];
  const warnings: { where: string; warning: string }[] = [];
  let bwrap: SandboxEngine | undefined = options.bwrap;
  let status: EngineStatus | undefined;
  for (const agentId of listAgentIds(config)) {
    const sandbox = resolveAgentConfig(config, agentId)?.sandbox;
    if (sandbox === undefined || sandbox.mode === "off") continue;
    bwrap ??= createBwrapEngine();
    status ??= await bwrap.probe({ fresh: true });
    sandboxes.push({ agentId, mode: sandbox.mode, engine: sandbox.engine, status });
    const where = `agent ${agentId} (sandbox.mode "${sandbox.mode}")`;
    if (!status.available) {
      problems.push({
        where,
        problem: `its sandbox cannot start, so its sandboxed turns fail before the model is called: ${status.problem}. To fix: ${status.fix}`,
      });
    } else {
      for (const warning of status.warnings) warnings.push({ where, warning });
    }
  }
  for (const exposure of findNonOwnerHostExposure(config)) {
    warnings.push({ where: `agent ${exposure.agentId}`, warning: exposure.message });
  }
  return { sandboxes, problems, warnings };
}
