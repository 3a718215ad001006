// `agent replay <runId>`: re-run a stored run offline against a scripted model built from its recorded replies
// (the kernel's `replayRun`) and print what diverged. Exit 0 when nothing did, 4 when something did.
import { ReplayUnavailableError, replayRun } from "@agent-kernel/kernel";
import type { CommandContext } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import { type CliIo, line } from "../io.ts";
import { storeLocation, withStore } from "./store.ts";

export function replay(
  context: CommandContext,
  runId: string,
  flags: { readonly json?: boolean | undefined; readonly keep?: boolean | undefined },
  io: CliIo,
): Promise<ExitCode> {
  return withStore(context, async (store) => {
    const report = await replayRun({
      store,
      config: context.config,
      runId,
      ...(flags.keep ? { keepScratch: true } : {}),
    }).catch((error: unknown) => {
      if (error instanceof ReplayUnavailableError) throw new CliError(EXIT.notFound, error.message);
      throw error;
    });
    if (report === undefined)
      throw new CliError(EXIT.notFound, `no run "${runId}" in ${storeLocation(context)}.`);
    if (flags.json) {
      line(io.stdout, JSON.stringify(report, null, 2));
    } else {
      line(
        io.stdout,
        `Replay of run ${report.runId} against a scripted model (its ${report.recorded.modelCalls.length} recorded replies), offline`,
      );
      line(io.stdout, `  prompt:   ${JSON.stringify(report.prompt)}`);
      line(
        io.stdout,
        `  recorded: ${report.recorded.status}, ${report.recorded.modelCalls.length} model calls, ${report.recorded.toolCalls.length} tool calls`,
      );
      line(
        io.stdout,
        `  replay:   ${report.replayed.status}, ${report.replayed.modelCalls.length} model calls, ${report.replayed.toolCalls.length} tool calls (run ${report.replayed.runId})`,
      );
      if (report.scratch.kept)
        line(io.stdout, `  scratch:  ${report.scratch.stateDir}, ${report.scratch.workspaceDir}`);
      if (report.divergences.length === 0) line(io.stdout, "  no divergence");
      for (const divergence of report.divergences) line(io.stdout, `  diverged: ${divergence}`);
    }
    return report.divergences.length === 0 ? EXIT.ok : EXIT.diverged;
  });
}
