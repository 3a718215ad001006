// The `agent` command line: flags and subcommands (commander), each command's module loaded only when that
// command runs (a `sessions list` never loads pi), and every failure turned into one paragraph on stderr and
// an exit code (exit-codes.ts). Owns parsing and dispatch. Does not own what the commands do (commands/*).
import { readFileSync } from "node:fs";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { type CommandContext, type GlobalFlags, loadCommandContext } from "./context.ts";
import { CliError, EXIT, type ExitCode } from "./exit-codes.ts";
import { type CliIo, line, paint, processIo } from "./io.ts";

function positiveInteger(flag: string) {
  return (raw: string): number => {
    const value = Number(raw);
    if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(value) || value <= 0) {
      throw new InvalidArgumentError(`${flag} expects a positive whole number, got "${raw}".`);
    }
    return value;
  };
}

interface RootFlags extends GlobalFlags {
  readonly message?: string;
  readonly image?: readonly string[];
  readonly agent?: string;
  readonly sessionKey?: string;
  readonly sessionId?: string;
  readonly to?: string;
  readonly model?: string;
  readonly thinking?: string;
  readonly thinkingOnce?: string;
  readonly timeout?: number;
  readonly json?: boolean;
  readonly verbose?: boolean;
  readonly stream?: boolean;
}

/** This package's version: package.json sits one level above src/ and dist/ alike. */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  return String((manifest as { version?: unknown }).version);
}

/** `-m -`: the message is what stdin holds (trailing whitespace dropped, as a shell's `$(…)` would). */
async function readMessageFromStdin(): Promise<string> {
  let text = "";
  process.stdin.setEncoding("utf8");
  for await (const chunk of process.stdin) text += chunk;
  return text.replace(/\s+$/, "");
}

const EXIT_CODES_HELP = `
Examples:
  agent -m "What changed in the build?"            one turn in the default agent's main session
  git log -1 | agent -m -                          the message read from stdin
  agent -m "hi" --agent ops --to +15550001 --json  the TurnOutcome as JSON
  agent -m "start over" --session-key scratch      a new conversation, under a key of its own
  agent -m "think hard" --thinking high            a thinking level stored on the session
  agent -m "what is this?" --image photo.jpg       an image sent with this turn only
  agent runs list --limit 5                        the latest runs; then: agent runs show <runId>
  agent sessions show agent:main:main              a session's messages and runs
  agent doctor                                     migrate and check the store

Exit codes:
  0    ok
  1    the turn failed, was aborted or timed out; doctor found problems
  2    usage: bad flags or arguments, invalid config, unknown agent, model or thinking level
  3    not found: no such session or run
  4    replay diverged from the stored run
  5    the store cannot be opened or written (read-only, disk full, a damaged file or row)
  130  interrupted (Ctrl-C) during a turn

Environment: AGENT_KERNEL_CONFIG (config file), AGENT_KERNEL_STATE_DIR (state dir); provider keys such as
ANTHROPIC_API_KEY or OPENAI_API_KEY are used by built-in providers, or referenced from auth profiles as "\${NAME}".`;

/** Parses `argv` (without node and the script) and runs the command; resolves to the exit code. */
export async function runAgentCli(
  argv: readonly string[],
  io: CliIo = processIo(),
  signal?: AbortSignal,
): Promise<ExitCode> {
  let exitCode: ExitCode = EXIT.ok;
  const program = new Command("agent");
  program
    .description(
      "Run one agent turn through the Agent Session Kernel, and inspect its sessions, runs and store.",
    )
    .version(packageVersion(), "-V, --version", "print the version")
    .option("-m, --message <text>", 'the message to send (runs one turn); "-" reads it from stdin')
    .option(
      "--image <path>",
      "attach a PNG, JPEG, GIF or WebP image to this turn's message (repeatable; this turn only)",
      (path: string, previous: readonly string[]) => [...previous, path],
      [] as readonly string[],
    )
    .option("--agent <id>", "the agent to run (default: the configured default agent)")
    .option("--session-key <key>", "the session key (default: the agent's main session)")
    .option(
      "--session-id <id>",
      "run under this session id (a stored one selects its session; an unknown one only starts a new session, never replaces one)",
    )
    .option(
      "--to <recipient>",
      "the recipient: a direct peer session on the cli channel, per session.dmScope",
    )
    .option("--model <ref>", "a model ref or alias for this turn")
    .option("--thinking <level>", "thinking level, stored on the session (off clears it)")
    .option("--thinking-once <level>", "thinking level for this turn only")
    .option("--timeout <seconds>", "turn timeout in seconds (positive integer)", positiveInteger("--timeout"))
    .option("--json", "print JSON (for a turn: the TurnOutcome)")
    .option("--verbose", "print the run's decisions and events on stderr; stored on the session")
    .addOption(
      new Option("--stream", "stream partial text as it arrives (default when stdout is a terminal)"),
    )
    .addOption(new Option("--no-stream", "print only the final text"))
    .option(
      "--config <file>",
      "config file (default: $AGENT_KERNEL_CONFIG, else ~/.agent-kernel/config.json5)",
    )
    .option(
      "--state-dir <dir>",
      "state dir (default: $AGENT_KERNEL_STATE_DIR, else store.stateDir, else ~/.agent-kernel)",
    )
    .addHelpText("after", EXIT_CODES_HELP)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      // Errors are reported once, by the catch below, as one paragraph.
      writeErr: () => {},
      outputError: () => {},
    });

  const contextOf = async (command: Command): Promise<{ context: CommandContext; flags: RootFlags }> => {
    const flags = command.optsWithGlobals<RootFlags>();
    return { context: await loadCommandContext(flags, io), flags };
  };

  program.action(async () => {
    const given = program.opts<RootFlags>();
    const flags = given.message === "-" ? { ...given, message: await readMessageFromStdin() } : given;
    if (given.message === "-" && flags.message?.trim() === "") {
      throw new CliError(EXIT.usage, "--message - read no text from stdin: pipe the message in.");
    }
    if (flags.message === undefined || flags.message.trim() === "") {
      throw new CliError(
        EXIT.usage,
        flags.message === undefined
          ? "nothing to do: pass --message <text> to run a turn, or a command (sessions, runs, replay, doctor). Run `agent --help` for usage."
          : "--message is empty: pass the text to send.",
      );
    }
    const { readImageFiles } = await import("./image-files.ts");
    const images = readImageFiles(flags.image ?? []);
    const loaded = await loadCommandContext(flags, io);
    const { runTurn } = await import("./commands/turn.ts");
    exitCode = await runTurn(loaded, { ...flags, message: flags.message, images }, io, signal);
  });

  const sessions = program.command("sessions").description("list or show stored sessions");
  sessions
    .command("list")
    .description("sessions of one agent (--agent) or every agent, most recent first")
    .option("--limit <n>", "show at most n", positiveInteger("--limit"))
    .action(async function (this: Command) {
      const { context, flags } = await contextOf(this);
      const { sessionsList } = await import("./commands/inspect.ts");
      exitCode = await sessionsList(context, flagsOf(this, flags), io);
    });
  sessions
    .command("show <session>")
    .description("a session (by key or session id): metadata, messages and its runs")
    .option("--limit <n>", "show at most n runs", positiveInteger("--limit"))
    .action(async function (this: Command, key: string) {
      const { context, flags } = await contextOf(this);
      const { sessionsShow } = await import("./commands/inspect.ts");
      exitCode = await sessionsShow(context, key, flagsOf(this, flags), io);
    });

  const runs = program.command("runs").description("list or show stored runs");
  runs
    .command("list")
    .description("recent runs, newest first (of one session with --session-key)")
    .option("--limit <n>", "show at most n (default 20)", positiveInteger("--limit"))
    .action(async function (this: Command) {
      const { context, flags } = await contextOf(this);
      const { runsList } = await import("./commands/inspect.ts");
      exitCode = await runsList(context, { ...flagsOf(this, flags), sessionKey: flags.sessionKey }, io);
    });
  runs
    .command("show <runId>")
    .description("every decision of a run: runtime, tool policy, attempts, fallback, tool calls, replies")
    .option("--prompt", "print the system prompt the run's model was sent (--json: with its sha256)")
    .action(async function (this: Command, runId: string) {
      const { context, flags } = await contextOf(this);
      if (this.opts<{ prompt?: boolean }>().prompt) {
        const { runPrompt } = await import("./commands/prompt.ts");
        exitCode = await runPrompt(context, runId, { json: flags.json }, io);
        return;
      }
      const { runsShow } = await import("./commands/inspect.ts");
      exitCode = await runsShow(context, runId, flagsOf(this, flags), io);
    });

  program
    .command("skills")
    .description("the agent's SKILL.md skills")
    .command("list")
    .description("skills found, which are offered, and why each gated one is not")
    .action(async function (this: Command) {
      const { context, flags } = await contextOf(this);
      const { skillsList } = await import("./commands/skills.ts");
      exitCode = await skillsList(context, { agent: flags.agent, json: flags.json }, io);
    });

  program
    .command("replay <runId>")
    .description("re-run a stored run offline against a scripted model built from its recorded replies")
    .option("--keep", "keep the scratch state dir and workspace")
    .action(async function (this: Command, runId: string) {
      const { context, flags } = await contextOf(this);
      const { replay } = await import("./commands/replay.ts");
      const keep = this.opts<{ keep?: boolean }>().keep;
      exitCode = await replay(context, runId, { json: flags.json, keep }, io);
    });

  program
    .command("doctor [legacy...]")
    .description(
      "migrate the store, import legacy pi JSONL / OpenClaw sessions.json files or folders, check it",
    )
    .action(async function (this: Command, legacy: string[] | undefined) {
      const { context, flags } = await contextOf(this);
      const { doctor } = await import("./commands/doctor.ts");
      exitCode = await doctor(context, legacy ?? [], { agent: flags.agent, json: flags.json }, io);
    });

  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    return report(error, io, argv.includes("--verbose"));
  }
}

function flagsOf(command: Command, flags: RootFlags) {
  const own = command.opts<{ limit?: number }>();
  return { agent: flags.agent, json: flags.json, limit: own.limit };
}

/**
 * session-store's `StorageFailure` in `error` or its causes, recognised by its name and fields (this module
 * loads no store code: a command that got here without classifying still exits with the store's code).
 */
function storageFailureIn(error: unknown): Error | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    if (at.name === "StorageFailure" && typeof (at as { path?: unknown }).path === "string") return at;
  }
  return undefined;
}

/** One paragraph on stderr and the exit code; a stack trace only for an unexpected failure with --verbose. */
function report(error: unknown, io: CliIo, verbose: boolean): ExitCode {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0) return EXIT.ok; // --help, --version
    if (error.code === "commander.help" || error.code === "commander.helpDisplayed") {
      line(
        io.stderr,
        paint(io, io.stderr, "red", "agent: a command needs a subcommand. Run `agent --help` for usage."),
      );
      return EXIT.usage;
    }
    const message = error.message.replace(/^error: /, "");
    const text = `agent: ${message.trim()} Run \`agent --help\` for usage.`.replace(/([^.])\sRun/, "$1. Run");
    line(io.stderr, paint(io, io.stderr, "red", text));
    return EXIT.usage;
  }
  if (error instanceof CliError) {
    line(io.stderr, paint(io, io.stderr, "red", `agent: ${error.message}`));
    return error.code;
  }
  // A store file failed a command (full, read-only, damaged): its message names the file and what to do.
  const storage = storageFailureIn(error);
  if (storage !== undefined) {
    line(io.stderr, paint(io, io.stderr, "red", `agent: ${storage.message}`));
    return EXIT.store;
  }
  const message = error instanceof Error ? error.message : String(error);
  line(io.stderr, paint(io, io.stderr, "red", `agent: unexpected failure: ${message}`));
  if (verbose && error instanceof Error && error.stack) line(io.stderr, error.stack);
  return EXIT.failed;
}
