// `agent skills list`: the SKILL.md skills an agent's next session gets, and why each gated one does not —
// found in the extra folders, bundled, managed (`<state dir>/skills`) and the workspace's `skills/`, the
// workspace winning a name conflict. Text or JSON. Owns the printing; the discovery and the gates are the
// kernel's (`inspectAgentSkills`), so what this shows is what a turn would list.
import { type AgentSkillsReport, inspectAgentSkills } from "@agent-kernel/kernel";
import type { CommandContext } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import { type CliIo, line } from "../io.ts";

export interface SkillsFlags {
  readonly agent?: string | undefined;
  readonly json?: boolean | undefined;
}

/** The report as JSON: one object per skill, plus the folders, diagnostics and shadowed duplicates. */
function asJson(report: AgentSkillsReport) {
  return {
    agentId: report.agentId,
    workspaceDir: report.workspaceDir,
    folders: report.folders,
    skills: report.statuses.map(({ skill, eligible, reasons }) => ({
      name: skill.name,
      description: skill.description,
      source: skill.source,
      filePath: skill.filePath,
      skillKey: skill.skillKey,
      eligible,
      inPrompt: eligible && !skill.disableModelInvocation,
      reasons: skill.disableModelInvocation && eligible ? ["disable-model-invocation"] : reasons,
    })),
    diagnostics: report.diagnostics,
    shadowed: report.shadowed,
  };
}

function asText(report: AgentSkillsReport): string {
  const lines: string[] = [];
  const offered = report.statuses.filter((s) => s.eligible).length;
  lines.push(`agent ${report.agentId}: ${offered} of ${report.statuses.length} skills offered`);
  for (const { skill, eligible, reasons } of report.statuses) {
    const state = !eligible ? "gated" : skill.disableModelInvocation ? "hidden" : "ok";
    lines.push(`${state.padEnd(6)} ${skill.name} (${skill.source}) ${skill.filePath}`);
    if (!eligible) for (const reason of reasons) lines.push(`         ${reason}`);
    if (eligible && skill.disableModelInvocation) {
      lines.push("         disable-model-invocation: loaded, not listed in the prompt");
    }
  }
  for (const shadow of report.shadowed) {
    lines.push(`shadowed ${shadow.name}: ${shadow.loser} (by ${shadow.winner})`);
  }
  for (const diagnostic of report.diagnostics)
    lines.push(`skipped ${diagnostic.path}: ${diagnostic.message}`);
  const folders = report.folders;
  lines.push(
    `folders: workspace ${folders.workspaceDir}/skills; managed ${folders.managedDir}` +
      `${folders.bundledDir ? `; bundled ${folders.bundledDir}` : ""}` +
      `${folders.extraDirs.length > 0 ? `; extra ${folders.extraDirs.join(", ")}` : ""}`,
  );
  return lines.join("\n");
}

export async function skillsList(context: CommandContext, flags: SkillsFlags, io: CliIo): Promise<ExitCode> {
  let report: AgentSkillsReport;
  try {
    report = inspectAgentSkills(context.config, {
      agentId: flags.agent,
      stateDir: context.stateDir,
      env: io.env,
    });
  } catch (error) {
    if (error instanceof Error && error.name === "SessionIdentityError")
      throw new CliError(EXIT.usage, error.message);
    throw error;
  }
  line(io.stdout, flags.json ? JSON.stringify(asJson(report), null, 2) : asText(report));
  return EXIT.ok;
}
