// Flag parsing shared by `agent-kernel`'s own commands (node:util parseArgs, strict): the flags every one of
// them takes (`--config`, `--state-dir`, `--json`, `-h/--help`), its own, and the usage text shown by
// `--help` or after a usage error. Owns nothing else.
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { CliError, EXIT } from "./errors.ts";
import { type CliIo, line } from "./io.ts";

const COMMON: ParseArgsOptionsConfig = {
  config: { type: "string" },
  "state-dir": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

/** The lines every command's usage ends with: the flags all of them take. */
export const COMMON_FLAGS_HELP = `Common flags:
  --config <file>      config file (default: $AGENT_KERNEL_CONFIG, else ~/.agent-kernel/config.json5)
  --state-dir <dir>    state dir (default: $AGENT_KERNEL_STATE_DIR, else store.stateDir, else ~/.agent-kernel)
  --json               print JSON (every command that reads)
  -h, --help           this help`;

/** What a command's flags parsed to. */
export interface Parsed {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * Parses `argv` against the common flags and `options`. `--help` prints `usage` and yields undefined (exit
 * 0); a bad flag is a usage error naming it.
 */
export function parseCommand(
  argv: readonly string[],
  options: ParseArgsOptionsConfig,
  usage: string,
  io: CliIo,
): Parsed | undefined {
  let parsed: Parsed;
  try {
    // No option here is `multiple`, so no value is an array.
    parsed = parseArgs({
      args: [...argv],
      options: { ...COMMON, ...options },
      allowPositionals: true,
      strict: true,
    }) as Parsed;
  } catch (error) {
    throw new CliError(EXIT.usage, `${(error as Error).message}\n\n${usage}`);
  }
  if (parsed.values.help === true) {
    line(io.stdout, usage);
    return undefined;
  }
  return parsed;
}

/** A string flag's value, or undefined. */
export function stringFlag(parsed: Parsed, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === "string" ? value : undefined;
}

/** The subcommand (first positional) checked against `known`, with the rest. */
export function subcommand(
  parsed: Parsed,
  command: string,
  known: readonly string[],
  usage: string,
): { readonly name: string; readonly rest: readonly string[] } {
  const [name, ...rest] = parsed.positionals;
  if (name === undefined) {
    throw new CliError(EXIT.usage, `${command} needs a subcommand (${known.join(", ")})\n\n${usage}`);
  }
  if (!known.includes(name)) {
    throw new CliError(EXIT.usage, `${command}: unknown subcommand "${name}" (${known.join(", ")})`);
  }
  return { name, rest };
}

/** Exactly `count` positional arguments after the subcommand, named for the error. */
export function expectArgs(rest: readonly string[], names: readonly string[], what: string): string[] {
  if (rest.length !== names.length) {
    const wanted = names.length === 0 ? "no arguments" : names.map((name) => `<${name}>`).join(" ");
    throw new CliError(
      EXIT.usage,
      `${what} takes ${wanted}, got ${rest.length === 0 ? "none" : `"${rest.join(" ")}"`}`,
    );
  }
  return [...rest];
}
