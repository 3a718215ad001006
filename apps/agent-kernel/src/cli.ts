// The `agent-kernel` command line: one command over the apps and the everyday operations. Owns the table of
// subcommands (each with its summary and examples, shown by `--help`), `--version`, "did you mean" for a
// mistyped subcommand, and turning a failure into one paragraph on stderr and an exit code. Each subcommand's
// module is loaded only when it runs (`agent-kernel --help` loads no app and no kernel). Does not own what the
// subcommands do: the apps (apps.ts) and the operations (commands/*).
import { readFileSync } from "node:fs";
import { closestMatch } from "@agent-kernel/config";
import { runApp } from "./apps.ts";
import { CliError, EXIT } from "./errors.ts";
import { type CliIo, line, paint, processIo } from "./io.ts";

type Handler = (argv: readonly string[], io: CliIo, signal?: AbortSignal) => Promise<number>;

interface Subcommand {
  readonly summary: string;
  readonly examples: readonly string[];
  readonly run: Handler;
}

const app =
  (name: string): Handler =>
  (argv, io, signal) =>
    runApp(name, argv, io, signal);

/** Every subcommand, in the order `--help` lists them. */
export const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = {
  agent: {
    summary: "run one agent turn; inspect sessions, runs and the store (the `agent` app)",
    examples: [
      'agent-kernel agent -m "What changed in the build?"',
      "agent-kernel agent runs list --limit 5 --json",
    ],
    run: app("agent"),
  },
  gateway: {
    summary: "the daemon: configured channels, the cron scheduler and the follow-up queue together",
    examples: ["agent-kernel gateway", "agent-kernel gateway --help"],
    run: app("gateway"),
  },
  status: {
    summary: "the daemon, its channels, queue depth and active runs",
    examples: ["agent-kernel status", "agent-kernel status --json"],
    run: app("status"),
  },
  logs: {
    summary: "the daemon's structured logs (--follow to keep reading)",
    examples: ["agent-kernel logs", "agent-kernel logs --follow"],
    run: app("logs"),
  },
  pairing: {
    summary: "list, approve or deny senders asking to talk to the bot (dmPolicy: pairing)",
    examples: ["agent-kernel pairing list", "agent-kernel pairing approve telegram K7QX2M9P"],
    run: async (argv, io) => (await import("./commands/pairing.ts")).runPairing(argv, io),
  },
  cron: {
    summary: "scheduled jobs: add, rm, enable, disable, list, run, history (and tick, start)",
    examples: [
      'agent-kernel cron add brief --every 3600 -m "Summarise my inbox"',
      "agent-kernel cron list --json",
      "agent-kernel cron disable brief",
    ],
    run: async (argv, io, signal) => (await import("./commands/cron-jobs.ts")).runCron(argv, io, signal),
  },
  channels: {
    summary: "the configured channels, and whether their APIs answer (status --probe)",
    examples: ["agent-kernel channels list", "agent-kernel channels status --probe"],
    run: async (argv, io) => (await import("./commands/channels.ts")).runChannels(argv, io),
  },
  models: {
    summary: "the models the agents use, which keys are set and which models are usable",
    examples: ["agent-kernel models list", "agent-kernel models status --json"],
    run: async (argv, io) => (await import("./commands/models.ts")).runModels(argv, io),
  },
  sessions: {
    summary: "list, show, reset or delete stored sessions",
    examples: ["agent-kernel sessions list", "agent-kernel sessions reset main"],
    run: async (argv, io, signal) => (await import("./commands/sessions.ts")).runSessions(argv, io, signal),
  },
  doctor: {
    summary: "check config, keys, channels, model reachability, store and sandbox (--fix what is safe)",
    examples: ["agent-kernel doctor", "agent-kernel doctor --fix"],
    run: async (argv, io) => (await import("./commands/doctor.ts")).runDoctorCommand(argv, io),
  },
  config: {
    summary: "read or change one config value (get, set)",
    examples: [
      "agent-kernel config get agents.defaults.model",
      "agent-kernel config set session.dmScope per-peer",
    ],
    run: async (argv, io) => (await import("./commands/config-file.ts")).runConfig(argv, io),
  },
  setup: {
    summary: "write a config and the workspace's bootstrap files",
    examples: ["agent-kernel setup", "agent-kernel setup --workspace ~/assistant --model openai/gpt-5-mini"],
    run: async (argv, io) => (await import("./commands/setup.ts")).runSetup(argv, io),
  },
  followup: {
    summary: "the follow-up queue: enqueue, run, list (the `followup` app)",
    examples: ['agent-kernel followup enqueue -m "and the tests?"', "agent-kernel followup list --json"],
    run: app("followup"),
  },
  "hybrid-planner": {
    summary: "plan a goal with one planner turn, then run its steps (the `hybrid-planner` app)",
    examples: ['agent-kernel hybrid-planner -m "Tidy the docs folder"'],
    run: app("hybrid-planner"),
  },
  "auto-reply": {
    summary: "answer the configured channels only (no cron, no queue; `gateway` runs all three)",
    examples: ["agent-kernel auto-reply"],
    run: app("auto-reply"),
  },
};

/** This package's version: package.json sits one level above src/ and dist/ alike. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  return String((manifest as { version?: unknown }).version);
}

function helpText(io: CliIo): string {
  const bold = (text: string) => paint(io, io.stdout, "bold", text);
  const dim = (text: string) => paint(io, io.stdout, "dim", text);
  const width = Math.max(...Object.keys(SUBCOMMANDS).map((name) => name.length));
  const commands = Object.entries(SUBCOMMANDS).map(
    ([name, command]) => `  ${bold(name.padEnd(width))}  ${command.summary}`,
  );
  const examples = Object.values(SUBCOMMANDS).flatMap((command) =>
    command.examples.map((example) => `  ${example}`),
  );
  return [
    `${bold("Usage:")} agent-kernel <command> [arguments] [flags]`,
    "",
    "One command for the Agent Session Kernel: its apps and the everyday operations.",
    "",
    bold("Commands:"),
    ...commands,
    "",
    bold("Examples:"),
    ...examples,
    "",
    `${bold("Flags:")} --version, --help; every command: --config <file>, --state-dir <dir>; every read: --json.`,
    dim("`agent-kernel <command> --help` for a command's flags and examples."),
    "",
    `${bold("Exit codes:")} 0 ok; 1 failed (a turn, a check, a probe); 2 usage or config; 3 not found;`,
    "5 the store cannot be opened; 130 interrupted; 143 terminated. Colour only on a terminal, never with NO_COLOR.",
  ].join("\n");
}

/** Parses `argv` (without node and the script) and runs the subcommand; resolves to the exit code. */
export async function runAgentKernelCli(
  argv: readonly string[],
  io: CliIo = processIo(),
  signal?: AbortSignal,
): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === "--version" || first === "-V") {
      line(io.stdout, packageVersion());
      return EXIT.ok;
    }
    if (first === "--help" || first === "-h" || first === "help") {
      const topic = first === "help" ? rest[0] : undefined;
      if (topic !== undefined && topic in SUBCOMMANDS) {
        return await (SUBCOMMANDS[topic] as Subcommand).run(["--help"], io, signal);
      }
      line(io.stdout, helpText(io));
      return EXIT.ok;
    }
    if (first === undefined) {
      line(io.stderr, helpText({ ...io, stdout: io.stderr }));
      return EXIT.usage;
    }
    const command = SUBCOMMANDS[first];
    if (command === undefined) {
      const guess = closestMatch(first, Object.keys(SUBCOMMANDS));
      throw new CliError(
        EXIT.usage,
        `unknown command "${first}"${guess ? `; did you mean "${guess}"?` : ""} Run \`agent-kernel --help\` for the commands.`,
      );
    }
    return await command.run(rest, io, signal);
  } catch (error) {
    if (error instanceof CliError) {
      line(io.stderr, paint(io, io.stderr, "red", `agent-kernel: ${error.message}`));
      return error.code;
    }
    const message = error instanceof Error ? error.message : String(error);
    line(io.stderr, paint(io, io.stderr, "red", `agent-kernel: unexpected failure: ${message}`));
    if (io.env.AGENT_KERNEL_DEBUG && error instanceof Error && error.stack) line(io.stderr, error.stack);
    return EXIT.failed;
  }
}
