#!/usr/bin/env node
// `agent-kernel-config`: check, print or describe a config from the shell.
// Owns: argument parsing, output and exit codes; all logic is in the library.
//   exit 0  ok (`check` may still print warnings, on stderr, one "warning: " line each)
//   exit 2  the config (or the command line) is invalid; the message says why
//   exit 1  anything unexpected (a bug): the stack trace is printed
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { listAgentIds } from "./agents.ts";
import { ConfigError } from "./errors.ts";
import { findNonOwnerHostExposure } from "./exposure.ts";
import { checkConfigFileExposure } from "./file-exposure.ts";
import { configJsonSchema } from "./json-schema.ts";
import { loadConfig } from "./load.ts";
import { redactSecrets } from "./redact.ts";

const USAGE = `usage: agent-kernel-config <command> [file]

commands:
  check [file]          validate the config and summarise it; warn (on stderr) about
                        literal secrets in a file other users can read, and about
                        agents whose non-owner sessions can run exec unsandboxed
  print [file]          print the fully resolved config as JSON (secrets redacted)
  schema [--out file]   print (or write) the JSON Schema of the config file

The file defaults to $AGENT_KERNEL_CONFIG, then ~/.agent-kernel/config.json5.`;

export function main(argv: readonly string[]): number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, file, ...extra] = positionals;
  if (values.help || command === undefined) {
    (values.help ? process.stdout : process.stderr).write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  if (extra.length > 0) {
    process.stderr.write(`unexpected arguments: ${extra.join(" ")}\n\n${USAGE}\n`);
    return 2;
  }
  try {
    switch (command) {
      case "check": {
        const loaded = loadConfig(file === undefined ? {} : { path: file });
        const { config } = loaded;
        const channels = Object.keys(config.channels);
        process.stdout.write(
          `config OK: ${loaded.path ?? "no file, defaults only"}\n` +
            `  agents: ${listAgentIds(config).join(", ")}\n` +
            `  channels: ${channels.length > 0 ? channels.join(", ") : "(none)"}\n` +
            `  cron jobs: ${config.cron.jobs.length}\n`,
        );
        const warnings = [
          ...(loaded.path === undefined ? [] : checkConfigFileExposure(loaded.path)),
          ...findNonOwnerHostExposure(config),
        ];
        for (const warning of warnings) process.stderr.write(`warning: ${warning.message}\n`);
        return 0;
      }
      case "print": {
        const loaded = loadConfig(file === undefined ? {} : { path: file });
        process.stderr.write(`# resolved config from ${loaded.path ?? "defaults only"}\n`);
        process.stdout.write(`${JSON.stringify(redactSecrets(loaded.config), null, 2)}\n`);
        return 0;
      }
      case "schema": {
        const text = `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
        if (values.out) {
          writeFileSync(values.out, text);
          process.stderr.write(`wrote ${values.out}\n`);
        } else process.stdout.write(text);
        return 0;
      }
      default:
        process.stderr.write(`unknown command "${command}"\n\n${USAGE}\n`);
        return 2;
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { out: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
