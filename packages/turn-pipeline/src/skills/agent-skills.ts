// An agent's skills as an operator sees them (`agent skills list`): the agent and its workspace resolved as a
// turn would resolve them (runtime-resolver's session identity), the state dir's managed folder, and every
// skill found with its gates. Owns: that resolution for a report. Does not own: discovery or the gates
// (load.ts, eligibility.ts), nor printing (the agent app).
import type { KernelConfig } from "@agent-kernel/config";
import { resolveSessionIdentity } from "@agent-kernel/runtime-resolver";
import { currentSkillHost, type SkillHost } from "./eligibility.ts";
import { inspectSkills, type SkillsReport } from "./snapshot.ts";

/** An agent's skills now, with the agent and workspace they were looked up for. */
export interface AgentSkillsReport extends SkillsReport {
  readonly agentId: string;
  readonly workspaceDir: string;
}

/**
 * The skills the agent's next new session would get, and why each gated one would not. Throws the session
 * identity's error (naming the agent and the known ones) for an unknown agent.
 */
export function inspectAgentSkills(
  config: KernelConfig,
  options: {
    readonly agentId?: string | undefined;
    readonly stateDir?: string | undefined;
    /** The environment the gates read (and PATH for binaries); default this process's. */
    readonly env?: Readonly<Record<string, string | undefined>> | undefined;
    readonly host?: SkillHost | undefined;
  } = {},
): AgentSkillsReport {
  const host = options.host ?? currentSkillHost((options.env ?? process.env) as NodeJS.ProcessEnv);
  const identity = resolveSessionIdentity(
    config,
    options.agentId === undefined ? {} : { agentId: options.agentId },
    { env: host.env },
  );
  const report = inspectSkills(config, identity.workspaceDir, {
    stateDir: options.stateDir ?? identity.stateDir,
    host,
  });
  return { ...report, agentId: identity.agentId, workspaceDir: identity.workspaceDir };
}
