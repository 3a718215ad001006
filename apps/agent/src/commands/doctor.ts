// `agent doctor [legacy paths...]`: open (and so migrate) the store, import legacy pi JSONL files and OpenClaw
// sessions.json folders, check the store (damaged transcript rows set aside and listed, broken branches),
// print the report. Exit 1 when problems were found. Imports no pi.
import { checkConfigFileExposure } from "@agent-kernel/config";
import { runDoctor } from "@agent-kernel/kernel/admin";
import type { CommandContext } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import { type CliIo, line } from "../io.ts";
import { withStore } from "./store.ts";

export function doctor(
  context: CommandContext,
  legacyPaths: readonly string[],
  flags: { readonly agent?: string | undefined; readonly json?: boolean | undefined },
  io: CliIo,
): Promise<ExitCode> {
  return withStore(context, async (store) => {
    const report = await runDoctor(store, context.config, { legacyPaths, agentId: flags.agent }).catch(
      (error: unknown) => {
        // A legacy path that does not exist or is not a legacy file: the argument is wrong.
        if (error instanceof Error && /legacy path|neither a sessions\.json/.test(error.message)) {
          throw new CliError(EXIT.usage, error.message);
        }
        throw error;
      },
    );
    // A config file others can read that holds a secret written in it (not as ${ENV}).
    const configFile = context.configPath === undefined ? [] : checkConfigFileExposure(context.configPath);
    if (flags.json) {
      line(io.stdout, JSON.stringify({ ...report, configFile }, null, 2));
    } else {
      const schema = report.schema;
      line(io.stdout, `Store ${report.stateDir}`);
      line(
        io.stdout,
        `  schema: version ${schema.version} of ${schema.latestVersion} (${schema.applied.length} migrations applied)`,
      );
      if (report.recoveredRuns.length > 0) {
        line(io.stdout, `  runs marked interrupted on open: ${report.recoveredRuns.join(", ")}`);
      }
      for (const replay of report.recoveredAppends) {
        line(
          io.stdout,
          `  append journal of a stopped process replayed: ${replay.file} (${replay.stored} entries stored, ${replay.alreadyStored} already stored)`,
        );
        for (const { line: at, problem } of replay.problems) line(io.stdout, `    line ${at}: ${problem}`);
      }
      if (report.imported !== undefined) {
        const imported = report.imported;
        line(
          io.stdout,
          `  legacy import: ${imported.transcripts.length} transcripts (${imported.transcripts.reduce((n, t) => n + t.added, 0)} entries added), ${imported.sessions.length} sessions, ${imported.skipped.length} skipped, ${imported.repaired.length} repaired`,
        );
        for (const note of imported.skipped) {
          line(
            io.stdout,
            `    skipped ${note.file}${note.line === undefined ? "" : `:${note.line}`}: ${note.reason}`,
          );
        }
        for (const note of imported.repaired) {
          line(
            io.stdout,
            `    repaired ${note.file}${note.line === undefined ? "" : `:${note.line}`}: ${note.reason}`,
          );
        }
      }
      const checked = report.checked;
      line(
        io.stdout,
        `  checked: ${checked.sessions} sessions, ${checked.transcripts} transcripts, ${checked.runs} runs`,
      );
      for (const row of report.quarantined) {
        line(
          io.stdout,
          `  set aside as damaged: ${row.file ?? `agent ${row.agentId}`}, session ${row.sessionKey} (${row.sessionId}), row seq ${row.seq} (entry ${row.id}) ${row.problem}; kept byte for byte, skipped by reads (${row.quarantinedAt})`,
        );
      }
      for (const sandbox of report.security.sandboxes) {
        const status = sandbox.status;
        line(
          io.stdout,
          `  sandbox of agent ${sandbox.agentId} (mode ${sandbox.mode}): ${
            status.available
              ? `${status.version}, process limit ${status.processLimit === "none" ? "NOT enforced" : `by ${status.processLimit}`}, memory limit by ${status.memoryLimit === "cgroup" ? "cgroup (everything a command holds)" : "rlimit (each process's address space)"}`
              : `${sandbox.engine} unavailable`
          }`,
        );
      }
      for (const exposure of configFile) line(io.stdout, `  warning: ${exposure.message}`);
      for (const warning of report.security.warnings) {
        line(io.stdout, `  warning: ${warning.where}: ${warning.warning}`);
      }
      if (report.problems.length === 0) line(io.stdout, "  no problems found");
      for (const problem of report.problems)
        line(io.stdout, `  problem: ${problem.where}: ${problem.problem}`);
    }
    return report.problems.length === 0 ? EXIT.ok : EXIT.failed;
  });
}
