// The `followup` command line: `enqueue` (accept one message into the durable queue), `run` (process the
// queue: every pending message by its session's queue mode, through the kernel), `list` (what is stored).
// Owns flags (node:util parseArgs), config and state-dir precedence (as the `agent` command: `--config`, else
// $AGENT_KERNEL_CONFIG, else ~/.agent-kernel/config.json5, else defaults; `--state-dir`, else
// $AGENT_KERNEL_STATE_DIR, else `store.stateDir`, else ~/.agent-kernel), output and exit codes. Does not own
// what a command does beyond IO (runner.ts).
import { parseArgs } from "node:util";
import { applyStateDir, ConfigError, type KernelConfig, loadConfig } from "@agent-kernel/config";

export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Ctrl-C / SIGTERM: `run` aborts its running turn, releases the claimed items and exits 130. */
  readonly signal?: AbortSignal | undefined;
}

export const EXIT = {
  ok: 0,
  /** A follow-up turn ended in error, was aborted or timed out. */
  failed: 1,
  /** Bad flags, arguments or config. */
  usage: 2,
  /** The store cannot be opened. */
  store: 5,
  /** Stopped by Ctrl-C (`io.signal`); the bin exits 143 when that was SIGTERM. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

class CliError extends Error {
  readonly code: ExitCode;
  constructor(code: ExitCode, message: string) {
    super(message);
    this.code = code;
  }
}

const USAGE = `Usage:
  followup enqueue -m <text> [--session <key>] [--agent <id>] [--id <id>] [--mode <mode>]
                   [--channel <id>] [--to <target>] [--thread <id>] [--sender <id>] [--json]
  followup run [--json]        process every pending message (each session by its queue mode)
  followup list [--session <key>] [--agent <id>] [--status pending|claimed|done|failed] [--json]
Global: --config <file> (default $AGENT_KERNEL_CONFIG, else ~/.agent-kernel/config.json5)
        --state-dir <dir> (default $AGENT_KERNEL_STATE_DIR, else store.stateDir, else ~/.agent-kernel)
Ctrl-C stops "run": the running turn is aborted and its items go back to pending (exit 130).
Exit codes: 0 ok, 1 a follow-up turn failed, 2 usage or config, 5 the store cannot be opened, 130 interrupted.`;

const OPTIONS = {
  message: { type: "string", short: "m" },
  session: { type: "string" },
  agent: { type: "string" },
  id: { type: "string" },
  mode: { type: "string" },
  channel: { type: "string" },
  to: { type: "string" },
  thread: { type: "string" },
  sender: { type: "string" },
  status: { type: "string" },
  json: { type: "boolean" },
  config: { type: "string" },
  "state-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type Flags = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

function line(stream: CliIo["stdout"], text = ""): void {
  stream.write(`${text}\n`);
}

function loadContext(flags: Flags, io: CliIo): { config: KernelConfig; stateDir: string } {
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig({
      env: io.env,
      cwd: io.cwd,
      ...(flags.config === undefined ? {} : { path: flags.config }),
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(EXIT.usage, error.message);
    throw error;
  }
  return applyStateDir(loaded.config, flags["state-dir"], { env: io.env, cwd: io.cwd });
}

function storeError(error: unknown, stateDir: string): unknown {
  const names = new Set(["StoreOpenError", "StoreVersionError", "SessionStoreError"]);
  if (error instanceof Error && (names.has(error.name) || "code" in error)) {
    return new CliError(EXIT.store, `cannot open the store in ${stateDir}: ${error.message}`);
  }
  return error;
}

/** Runs the command line (without node and the script); resolves to the exit code. */
export async function runFollowupCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  try {
    let parsed: { values: Flags; positionals: string[] };
    try {
      parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw new CliError(EXIT.usage, (error as Error).message);
    }
    const { values: flags, positionals } = parsed;
    const [command, ...rest] = positionals;
    if (flags.help || command === undefined) {
      line(flags.help ? io.stdout : io.stderr, USAGE);
      return flags.help ? EXIT.ok : EXIT.usage;
    }
    if (rest.length > 0) throw new CliError(EXIT.usage, `unexpected argument "${rest[0]}"`);
    if (command === "list") return await list(flags, io);
    if (command === "enqueue") return await enqueue(flags, io);
    if (command === "run") return await run(flags, io);
    throw new CliError(EXIT.usage, `unknown command "${command}" (expected enqueue, run or list)`);
  } catch (error) {
    if (error instanceof CliError) {
      line(io.stderr, `followup: ${error.message}`);
      return error.code;
    }
    line(io.stderr, `followup: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.failed;
  }
}

async function withRunner<T>(
  flags: Flags,
  io: CliIo,
  use: (runner: import("./runner.ts").FollowupRunner) => Promise<T>,
): Promise<T> {
  const { config, stateDir } = loadContext(flags, io);
  const { createFollowupRunner } = await import("./runner.ts");
  const runner = await createFollowupRunner({ config, stateDir }).catch((error: unknown) => {
    throw storeError(error, stateDir);
  });
  try {
    return await use(runner);
  } finally {
    await runner.stop();
  }
}

async function enqueue(flags: Flags, io: CliIo): Promise<ExitCode> {
  if (flags.message === undefined || flags.message.trim() === "") {
    throw new CliError(EXIT.usage, "enqueue needs the message: -m <text>");
  }
  const { FollowupInputError, validateInbound } = await import("./inbound.ts");
  const text = flags.message;
  const messageContext = {
    ...(flags.channel === undefined ? {} : { channel: flags.channel }),
    ...(flags.to === undefined ? {} : { to: flags.to }),
    ...(flags.thread === undefined ? {} : { threadId: flags.thread }),
    ...(flags.sender === undefined ? {} : { senderId: flags.sender }),
  };
  let inbound: ReturnType<typeof validateInbound>;
  try {
    // Checked before the store is opened: bad input stores nothing.
    inbound = validateInbound({
      text,
      ...(flags.id === undefined ? {} : { id: flags.id }),
      ...(flags.session === undefined ? {} : { sessionKey: flags.session }),
      ...(flags.agent === undefined ? {} : { agentId: flags.agent }),
      ...(flags.mode === undefined ? {} : { queueMode: flags.mode }),
      ...(Object.keys(messageContext).length === 0 ? {} : { messageContext }),
    });
  } catch (error) {
    if (error instanceof FollowupInputError) throw new CliError(EXIT.usage, error.message);
    throw error;
  }
  return withRunner(flags, io, async (runner) => {
    const result = await runner.accept(inbound);
    const { steering: _steering, ...shown } = result;
    if (flags.json) line(io.stdout, JSON.stringify(shown, null, 2));
    else {
      const dropped = result.dropped.length > 0 ? ` (dropped: ${result.dropped.join(", ")})` : "";
      line(
        io.stdout,
        `${result.status} ${result.itemId} for ${result.sessionKey} [${result.settings.mode}]${dropped}`,
      );
    }
    return EXIT.ok;
  });
}

async function run(flags: Flags, io: CliIo): Promise<ExitCode> {
  return withRunner(flags, io, async (runner) => {
    const delivered: {
      runId: string;
      sessionKey: string;
      itemIds: readonly string[];
      status: string;
      text: string;
    }[] = [];
    runner.on("delivered", (event) => {
      const text = event.payloads.flatMap((payload) => (payload.text ? [payload.text] : [])).join("\n\n");
      delivered.push({
        runId: event.runId,
        sessionKey: event.sessionKey,
        itemIds: event.itemIds,
        status: event.status,
        text,
      });
      if (!flags.json) line(io.stdout, `[${event.sessionKey}] ${event.status}: ${text}`);
    });
    const errors: string[] = [];
    runner.on("error", (event) => {
      const message = event.error instanceof Error ? event.error.message : String(event.error);
      errors.push(message);
      line(io.stderr, `followup: items ${event.itemIds.join(", ")} of ${event.sessionKey}: ${message}`);
    });
    runner.on("released", (event) => {
      line(
        io.stderr,
        `followup: stopped; released ${event.itemIds.length} claimed item(s) of ${event.sessionKey} back to pending`,
      );
    });
    const stop = () => void runner.stop({ abort: true });
    io.signal?.addEventListener("abort", stop, { once: true });
    if (io.signal?.aborted) stop();
    const report = await runner.drain().finally(() => io.signal?.removeEventListener("abort", stop));
    if (io.signal?.aborted) {
      await runner.stop({ abort: true });
      return EXIT.interrupted;
    }
    if (flags.json) line(io.stdout, JSON.stringify({ ...report, delivered }, null, 2));
    else line(io.stdout, `${report.turns} turn(s), ${report.items} item(s) handled`);
    return errors.length > 0 || delivered.some((entry) => entry.status !== "ok") ? EXIT.failed : EXIT.ok;
  });
}

async function list(flags: Flags, io: CliIo): Promise<ExitCode> {
  const { config, stateDir } = loadContext(flags, io);
  const statuses = ["pending", "claimed", "done", "failed"];
  if (flags.status !== undefined && !statuses.includes(flags.status)) {
    throw new CliError(EXIT.usage, `--status expects one of ${statuses.join(", ")}, got "${flags.status}"`);
  }
  // Reading the queue does not load pi: the admin entry opens the store.
  const { openKernelStore } = await import("@agent-kernel/kernel/admin");
  const { defaultAgentId, listAgentIds } = await import("@agent-kernel/config");
  const store = await openKernelStore({ stateDir }).catch((error: unknown) => {
    throw storeError(error, stateDir);
  });
  try {
    const agents =
      flags.agent === undefined
        ? [...new Set([...listAgentIds(config), defaultAgentId(config)])]
        : [flags.agent];
    const items = (
      await Promise.all(
        agents.map((agentId) =>
          store.queue.list({
            agentId,
            ...(flags.session === undefined
              ? {}
              : {
                  sessionKey: flags.session.startsWith("agent:")
                    ? flags.session
                    : `agent:${agentId}:${flags.session}`,
                }),
            ...(flags.status === undefined ? {} : { status: flags.status as "pending" }),
          }),
        ),
      )
    )
      .flat()
      .sort((a, b) => a.enqueuedAt - b.enqueuedAt);
    if (flags.json) line(io.stdout, JSON.stringify(items, null, 2));
    else {
      for (const item of items) {
        const text =
          (item.payload as { text?: string; line?: string }).text ??
          (item.payload as { line?: string }).line ??
          "";
        const why = item.lastError === undefined ? "" : ` (${item.lastError})`;
        line(
          io.stdout,
          `${item.itemId}  ${item.status}${why}  ${item.sessionKey}  ${item.kind}  ${JSON.stringify(text)}`,
        );
      }
      if (items.length === 0) line(io.stdout, "no queued messages");
    }
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
