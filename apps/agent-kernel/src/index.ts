// @agent-kernel/cli: the `agent-kernel` command — one command over the apps (agent, cron, followup,
// auto-reply, hybrid-planner, gateway) and the everyday operations. The package's face for tests and
// programs: run the command line in-process, its subcommand table and its exit codes.
export { APPS, type AppCli, runApp } from "./apps.ts";
export { packageVersion, runAgentKernelCli, SUBCOMMANDS } from "./cli.ts";
export { CliError, EXIT, type ExitCode } from "./errors.ts";
export { type CliIo, type CliStream, colourFor, processIo } from "./io.ts";
