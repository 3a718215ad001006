// The apps `agent-kernel` composes, and how a subcommand reaches each: the app's exported command-line
// function, called in-process with the same IO and abort signal (`agent-kernel agent …` is `agent …`). An
// app whose package does not export its command line yet is run as its own installed binary in a child
// process (same arguments, same streams; a Ctrl-C or SIGTERM is passed on), so every subcommand works either
// way. Owns that table and the child process. Does not own what the apps do.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CliError, EXIT } from "./errors.ts";
import type { CliIo } from "./io.ts";

/** A command line an app exports: argv without the command name, resolving to the exit code. */
export type AppCli = (
  argv: string[],
  io: CliIo & { readonly signal?: AbortSignal | undefined },
  signal?: AbortSignal,
) => Promise<number>;

interface AppEntry {
  /** The package of the app. */
  readonly packageName: string;
  /** The function its index exports, when it does. */
  readonly exportName: string;
  /**
   * Arguments put before the user's when the app's binary runs instead (the gateway's one binary serves
   * `gateway`, `logs` and `status`); an exported function gets the user's arguments only.
   */
  readonly leadingArgs?: readonly string[];
}

/** Subcommand → the app that serves it. */
export const APPS: Readonly<Record<string, AppEntry>> = {
  agent: { packageName: "@agent-kernel/agent", exportName: "runAgentCli" },
  cron: { packageName: "@agent-kernel/cron", exportName: "runCronCli" },
  followup: { packageName: "@agent-kernel/followup", exportName: "runFollowupCli" },
  "hybrid-planner": { packageName: "@agent-kernel/hybrid-planner", exportName: "runPlannerCli" },
  "auto-reply": { packageName: "@agent-kernel/auto-reply", exportName: "runAutoReplyCli" },
  gateway: { packageName: "@agent-kernel/gateway", exportName: "runGatewayCli" },
  logs: { packageName: "@agent-kernel/gateway", exportName: "runLogsCli", leadingArgs: ["logs"] },
  status: { packageName: "@agent-kernel/gateway", exportName: "runStatusCli", leadingArgs: ["status"] },
};

/** Running from TypeScript sources (tests, `node --conditions=@agent-kernel/source`): children do the same. */
const FROM_SOURCE = import.meta.url.endsWith(".ts");

/** Runs `argv` with the app that serves `command`. */
export async function runApp(
  command: string,
  argv: readonly string[],
  io: CliIo,
  signal?: AbortSignal,
): Promise<number> {
  const entry = APPS[command];
  if (entry === undefined) throw new CliError(EXIT.usage, `no app serves "${command}"`);
  const module = await importApp(entry.packageName);
  const exported = module[entry.exportName];
  // The abort signal both ways: as the third argument (agent, cron, hybrid-planner) and on the IO (gateway).
  if (typeof exported === "function") return (exported as AppCli)([...argv], { ...io, signal }, signal);
  return runAppBinary(entry.packageName, [...(entry.leadingArgs ?? []), ...argv], io, signal);
}

async function importApp(packageName: string): Promise<Record<string, unknown>> {
  try {
    // One loader for every app: a string specifier (each app is a dependency; a missing one is said plainly).
    const specifier: string = packageName;
    return (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" &&
      String(error).includes(packageName)
    ) {
      throw new CliError(
        EXIT.usage,
        `${packageName} is not installed, so this command is not available (install it beside @agent-kernel/cli).`,
      );
    }
    throw error;
  }
}

/** The app's own installed binary, as a child with the same arguments and streams. */
function runAppBinary(
  packageName: string,
  argv: readonly string[],
  io: CliIo,
  signal?: AbortSignal,
): Promise<number> {
  const manifestPath = fileURLToPath(import.meta.resolve(`${packageName}/package.json`));
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { bin?: Record<string, string> };
  const bin = Object.values(manifest.bin ?? {})[0];
  if (bin === undefined) throw new CliError(EXIT.usage, `${packageName} has no command line`);
  const dir = dirname(manifestPath);
  const script = FROM_SOURCE
    ? [
        "--conditions=@agent-kernel/source",
        join(dir, bin.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts")),
      ]
    : [join(dir, bin)];
  const inherit = io.stdout === process.stdout && io.stderr === process.stderr;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...script, ...argv], {
      cwd: io.cwd,
      env: { ...io.env },
      stdio: inherit ? "inherit" : ["inherit", "pipe", "pipe"],
    });
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => io.stdout.write(chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => io.stderr.write(chunk));
    // A Ctrl-C on a terminal reaches the whole foreground process group, the child included: passing it on
    // too would be the child's second Ctrl-C (exit at once) instead of its first (stop gracefully).
    const terminalDelivers = inherit && process.stdin.isTTY === true;
    const forward = () => {
      if (signal?.reason === "SIGTERM") child.kill("SIGTERM");
      else if (!terminalDelivers) child.kill("SIGINT");
    };
    signal?.addEventListener("abort", forward, { once: true });
    child.once("error", reject);
    child.once("close", (code, killedBy) => {
      signal?.removeEventListener("abort", forward);
      resolvePromise(code ?? (killedBy === "SIGTERM" ? EXIT.terminated : EXIT.interrupted));
    });
  });
}
