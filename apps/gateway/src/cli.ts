// The gateway's command lines, each `(argv, io) → exit code` so the `agent-kernel` umbrella can dispatch to
// them: `gateway` (the daemon in the foreground), `logs` (its structured log files, `--follow`) and `status`
// (daemon alive, channels, queue depth, active runs). Owns flags, the config and state-dir precedence (as the
// other apps: `--config`, $AGENT_KERNEL_CONFIG, ~/.agent-kernel/config.json5; `--state-dir`,
// $AGENT_KERNEL_STATE_DIR, `store.stateDir`, ~/.agent-kernel), signals and exit codes. Does not own the daemon
// (daemon.ts) or reading the logs (logs-cli.ts).
import { parseArgs } from "node:util";
import { applyStateDir, ConfigError, type KernelConfig, loadConfig } from "@agent-kernel/config";

/** What a command line reads and writes: the process's streams and environment, or a test's. */
export interface GatewayCliIo {
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean | undefined };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /**
   * Stops the daemon or `logs --follow` when aborted (reason "SIGTERM" → exit 143, else 130). Absent: the
   * command listens for SIGINT and SIGTERM on the process itself while it runs.
   */
  readonly signal?: AbortSignal | undefined;
}

/** Exit codes of the gateway's commands. */
export const GATEWAY_EXIT = {
  ok: 0,
  /** `status`: no gateway is running on this state dir. */
  notRunning: 1,
  usage: 2,
  /** A channel could not start for good, or another gateway holds the state dir. */
  startFailed: 3,
  /** A channel's retryable start-up errors outlasted the retries. */
  retriesExhausted: 4,
  interrupted: 130,
  terminated: 143,
} as const;

class UsageError extends Error {}

const GATEWAY_USAGE = `Usage: agent-kernel gateway [--config <file>] [--state-dir <dir>] [--grace <seconds>]

Runs the configured channels (channels.telegram, channels.slack, channels.webchat), the cron scheduler
(cron.jobs; deliveries go out through those channels) and the follow-up queue (messages.queue: steer,
followup, collect, interrupt) in one long-running process. Prints every URL it serves (the web chat link
with its token, the Slack Events endpoint), one line per turn, and writes structured logs under
<state-dir>/logs (read them with \`agent-kernel logs --follow\`).

Ctrl-C or SIGTERM stops it: running turns get --grace seconds (default 10) to finish, then are aborted;
claimed follow-up items go back to the queue. Exit codes: 130 (SIGINT), 143 (SIGTERM), 2 usage or config,
3 a channel refused to start (port in use, invalid token) or another gateway runs on the state dir,
4 a channel kept failing with retryable errors.

Examples:
  agent-kernel gateway
  agent-kernel gateway --config ./config.json5 --state-dir ./state`;

/** The `logs` command's help text. */
export const LOGS_USAGE = `Usage: agent-kernel logs [--follow] [--json] [--lines <n>] [--state-dir <dir>] [--config <file>]

Prints the gateway's structured log (<state-dir>/logs/gateway.<n>.log, rotated by size and daily): the last
--lines records (default 50), then with --follow every new one as it is written, across rotations, until
Ctrl-C. Human-readable lines by default (coloured on a terminal unless NO_COLOR is set); --json prints the
records as they are stored, one JSON object per line.

Examples:
  agent-kernel logs --follow
  agent-kernel logs --json --lines 200`;

/** The `status` command's help text. */
export const STATUS_USAGE = `Usage: agent-kernel status [--json] [--state-dir <dir>] [--config <file>]

Whether a gateway is running on the state dir (its pid file and process), the channels it started and what
they serve, the follow-up queue's depth (pending and claimed items), the active runs and cron jobs.
Exit code 0 when a gateway is running, 1 when none is.

Examples:
  agent-kernel status
  agent-kernel status --json`;

/** The config and the state dir by the apps' precedence. */
export function loadGatewayContext(
  flags: { readonly config?: string | undefined; readonly "state-dir"?: string | undefined },
  io: GatewayCliIo,
): { config: KernelConfig; stateDir: string } {
  const loaded = loadConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { path: flags.config }),
  });
  return applyStateDir(loaded.config, flags["state-dir"], { env: io.env, cwd: io.cwd });
}

/** `signal` from io, or one wired to the process's SIGINT/SIGTERM for as long as `use` runs. */
export async function withStopSignal<T>(
  io: GatewayCliIo,
  use: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (io.signal !== undefined) return use(io.signal);
  const controller = new AbortController();
  const handlers = (["SIGINT", "SIGTERM"] as const).map((name) => {
    const handler = () => {
      // A second signal: the graceful stop is taking too long for the operator.
      if (controller.signal.aborted) process.exit(name === "SIGTERM" ? 143 : 130);
      controller.abort(name);
    };
    process.on(name, handler);
    return () => process.off(name, handler);
  });
  try {
    return await use(controller.signal);
  } finally {
    for (const remove of handlers) remove();
  }
}

function failure(io: GatewayCliIo, command: string, error: unknown): number {
  if (error instanceof UsageError || error instanceof ConfigError) {
    io.stderr.write(`${command}: ${error.message}\n`);
    return GATEWAY_EXIT.usage;
  }
  io.stderr.write(`${command}: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
}

/** Runs a flag parse, turning its error into a usage error (exit 2). */
function parseFlags<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * `agent-kernel gateway`: runs the daemon in the foreground until SIGINT/SIGTERM (or `io.signal`); resolves
 * to the exit code (130 / 143 after a graceful stop; 2, 3 or 4 when it could not start). A leading `logs` or
 * `status` runs that command instead (`runLogsCli`, `runStatusCli`).
 */
export async function runGatewayCli(argv: string[], io: GatewayCliIo): Promise<number> {
  // `gateway logs …` and `gateway status …` (how the umbrella may dispatch `logs` and `status` here).
  if (argv[0] === "logs") return runLogsCli(argv.slice(1), io);
  if (argv[0] === "status") return runStatusCli(argv.slice(1), io);
  try {
    const { values } = parseFlags(() =>
      parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: {
          config: { type: "string" },
          "state-dir": { type: "string" },
          grace: { type: "string" },
          help: { type: "boolean", short: "h" },
        },
      }),
    );
    if (values.help) {
      io.stdout.write(`${GATEWAY_USAGE}\n`);
      return GATEWAY_EXIT.ok;
    }
    let graceMs: number | undefined;
    if (values.grace !== undefined) {
      const seconds = Number(values.grace);
      if (!/^\d+(\.\d+)?$/.test(String(values.grace)) || !Number.isFinite(seconds))
        throw new UsageError(`--grace expects seconds (a number 0 or more), got "${values.grace}"`);
      graceMs = seconds * 1000;
    }
    const { config, stateDir } = loadGatewayContext(values as { config?: string; "state-dir"?: string }, io);
    // Loaded only now: the kernel brings pi, which a usage error does not need.
    const { openGatewayLog } = await import("./log-files.ts");
    const { runGatewayDaemon } = await import("./daemon.ts");
    const log = await openGatewayLog({ stateDir, stderr: io.stderr });
    try {
      return await withStopSignal(io, (signal) =>
        runGatewayDaemon({
          config,
          stateDir,
          log,
          signal,
          ...(graceMs === undefined ? {} : { shutdownGraceMs: graceMs }),
        }),
      );
    } finally {
      await log.close();
    }
  } catch (error) {
    return failure(io, "agent-kernel gateway", error);
  }
}

/**
 * `agent-kernel logs`: the gateway's structured log records — the last `--lines`, then with `--follow` new ones
 * until SIGINT/SIGTERM (or `io.signal`); pretty lines, or the stored JSON with `--json`.
 */
export async function runLogsCli(argv: string[], io: GatewayCliIo): Promise<number> {
  try {
    const { values } = parseFlags(() =>
      parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: {
          config: { type: "string" },
          "state-dir": { type: "string" },
          follow: { type: "boolean", short: "f" },
          json: { type: "boolean" },
          lines: { type: "string", short: "n" },
          help: { type: "boolean", short: "h" },
        },
      }),
    );
    if (values.help) {
      io.stdout.write(`${LOGS_USAGE}\n`);
      return GATEWAY_EXIT.ok;
    }
    const lines = values.lines === undefined ? 50 : Number(values.lines);
    if (!/^\d+$/.test(String(values.lines ?? "50")))
      throw new UsageError(`--lines expects a whole number, got "${values.lines}"`);
    const { stateDir } = loadGatewayContext(values as { config?: string; "state-dir"?: string }, io);
    const { printLogs } = await import("./logs-cli.ts");
    const options = {
      stateDir,
      io,
      json: values.json === true,
      lines,
      colour: io.stdout.isTTY === true && (io.env.NO_COLOR ?? "") === "" && values.json !== true,
    };
    if (values.follow !== true) return await printLogs({ ...options, follow: undefined });
    return await withStopSignal(io, (signal) => printLogs({ ...options, follow: signal }));
  } catch (error) {
    return failure(io, "agent-kernel logs", error);
  }
}

/** `agent-kernel status`: is a gateway running on the state dir, its channels, queue depth and active runs. */
export async function runStatusCli(argv: string[], io: GatewayCliIo): Promise<number> {
  try {
    const { values } = parseFlags(() =>
      parseArgs({
        args: argv,
        strict: true,
        allowPositionals: false,
        options: {
          config: { type: "string" },
          "state-dir": { type: "string" },
          json: { type: "boolean" },
          help: { type: "boolean", short: "h" },
        },
      }),
    );
    if (values.help) {
      io.stdout.write(`${STATUS_USAGE}\n`);
      return GATEWAY_EXIT.ok;
    }
    const { config, stateDir } = loadGatewayContext(values as { config?: string; "state-dir"?: string }, io);
    const { gatewayStatus, formatStatus } = await import("./status.ts");
    const status = await gatewayStatus(config, stateDir);
    io.stdout.write(values.json === true ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
    return status.running ? GATEWAY_EXIT.ok : GATEWAY_EXIT.notRunning;
  } catch (error) {
    return failure(io, "agent-kernel status", error);
  }
}
