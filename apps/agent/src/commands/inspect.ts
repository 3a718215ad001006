// `agent sessions list|show` and `agent runs list|show`: read the store through the kernel's admin facades and
// print text or JSON. Imports no pi and no runtime-resolver, so these start fast.
import { listRuns, listSessions, showRun, showSession } from "@agent-kernel/kernel/admin";
import type { CommandContext } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import { type CliIo, line } from "../io.ts";
import { formatRunList, formatRunReport, formatSession, formatSessionList } from "./format.ts";
import { storeLocation, withStore } from "./store.ts";

export interface InspectFlags {
  readonly agent?: string | undefined;
  readonly json?: boolean | undefined;
  readonly limit?: number | undefined;
}

function print(io: CliIo, flags: InspectFlags, value: unknown, text: () => string): void {
  line(io.stdout, flags.json ? JSON.stringify(value, null, 2) : text());
}

export function sessionsList(context: CommandContext, flags: InspectFlags, io: CliIo): Promise<ExitCode> {
  return withStore(context, async (store) => {
    const sessions = await listSessions(store, context.config, { agentId: flags.agent });
    const shown = flags.limit === undefined ? sessions : sessions.slice(0, flags.limit);
    print(io, flags, shown, () => formatSessionList(shown));
    return EXIT.ok;
  });
}

export function sessionsShow(
  context: CommandContext,
  key: string,
  flags: InspectFlags,
  io: CliIo,
): Promise<ExitCode> {
  return withStore(context, async (store) => {
    const details = await showSession(store, context.config, {
      agentId: flags.agent,
      key,
      ...(flags.limit === undefined ? {} : { runLimit: flags.limit }),
    });
    if (details === undefined)
      throw new CliError(EXIT.notFound, `no session "${key}" in ${storeLocation(context)}.`);
    print(io, flags, details, () => formatSession(details));
    return EXIT.ok;
  });
}

export function runsList(
  context: CommandContext,
  flags: InspectFlags & { readonly sessionKey?: string | undefined },
  io: CliIo,
): Promise<ExitCode> {
  return withStore(context, async (store) => {
    const runs = await listRuns(store, context.config, {
      agentId: flags.agent,
      ...(flags.sessionKey === undefined ? {} : { sessionKey: flags.sessionKey }),
      ...(flags.limit === undefined ? {} : { limit: flags.limit }),
    });
    print(io, flags, runs, () => formatRunList(runs));
    return EXIT.ok;
  });
}

export function runsShow(
  context: CommandContext,
  runId: string,
  flags: InspectFlags,
  io: CliIo,
): Promise<ExitCode> {
  return withStore(context, async (store) => {
    const report = await showRun(store, runId);
    if (report === undefined)
      throw new CliError(EXIT.notFound, `no run "${runId}" in ${storeLocation(context)}.`);
    print(io, flags, report, () => formatRunReport(report));
    return EXIT.ok;
  });
}
