// `agent-kernel sessions list|show|reset|delete`: list and show are the `agent` app's (`agent sessions …`);
// reset starts the session over under a new session id (its key, label and the user's model and auth
// choices kept, by the store's reset rules — OpenClaw's `/new`), delete removes the session's entry (its
// stored runs and transcript rows stay for `agent runs show`). The session is found by key or session id,
// as `agent sessions show` finds it. Owns the two edits' flags, output and exit codes.
import { runApp } from "../apps.ts";
import { COMMON_FLAGS_HELP, expectArgs, parseCommand, stringFlag } from "../args.ts";
import { loadOperationContext, withStore } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import { type CliIo, line, printJson } from "../io.ts";

const USAGE = `Usage:
  agent-kernel sessions list [--agent <id>] [--limit n] [--json]
  agent-kernel sessions show <session> [--json]
  agent-kernel sessions reset <session> [--agent <id>] [--json]
  agent-kernel sessions delete <session> [--agent <id>] [--json]

<session> is a session key (agent:main:main, or main for the agent's own) or a session id. reset starts the
conversation over under a new session id; delete removes the session (its runs stay readable by id).

Examples:
  agent-kernel sessions list
  agent-kernel sessions reset main
  agent-kernel sessions delete agent:ops:telegram:direct:5550001

Exit codes: 0 ok; 2 usage or config; 3 no such session; 5 the store cannot be opened.

${COMMON_FLAGS_HELP}`;

/** `sessions …`; resolves to the exit code. */
export async function runSessions(argv: readonly string[], io: CliIo, signal?: AbortSignal): Promise<number> {
  const first = argv.find((arg) => !arg.startsWith("-"));
  if (first === "list" || first === "show") return runApp("agent", ["sessions", ...argv], io, signal);
  const parsed = parseCommand(argv, { agent: { type: "string" }, limit: { type: "string" } }, USAGE, io);
  if (parsed === undefined) return EXIT.ok;
  const [name, ...rest] = parsed.positionals;
  if (name !== "reset" && name !== "delete") {
    throw new CliError(
      EXIT.usage,
      name === undefined
        ? `sessions needs a subcommand (list, show, reset, delete)\n\n${USAGE}`
        : `sessions: unknown subcommand "${name}" (list, show, reset, delete)`,
    );
  }
  const [key] = expectArgs(rest, ["session"], `sessions ${name}`) as [string];
  const context = loadOperationContext(parsed.values, io);
  const agent = stringFlag(parsed, "agent");
  const { findSession } = await import("@agent-kernel/kernel");
  return withStore(context, async (store) => {
    const session = await findSession(store, context.config, { agentId: agent, key });
    if (session === undefined) {
      throw new CliError(
        EXIT.notFound,
        `no session "${key}"${agent ? ` of agent ${agent}` : ""}. See: agent-kernel sessions list`,
      );
    }
    const ref = { agentId: session.agentId, sessionKey: session.sessionKey };
    if (name === "reset") {
      const { previous, current } = await store.sessions.reset(ref);
      if (parsed.values.json === true) {
        printJson(io, {
          sessionKey: current.sessionKey,
          previousSessionId: previous.sessionId,
          sessionId: current.sessionId,
        });
      } else {
        line(
          io.stdout,
          `Session ${current.sessionKey} starts over: session id ${previous.sessionId} → ${current.sessionId}.`,
        );
      }
      return EXIT.ok;
    }
    const deleted = await store.sessions.delete(ref);
    if (parsed.values.json === true)
      printJson(io, { sessionKey: session.sessionKey, sessionId: session.sessionId, deleted });
    else
      line(
        io.stdout,
        `Session ${session.sessionKey} (${session.sessionId}) deleted; its runs stay readable by run id.`,
      );
    return EXIT.ok;
  });
}
