// @agent-kernel/agent: the `agent` command over the kernel, IO only. The package's face for tests, scripts and
// benchmarks: run the command line in-process, its exit codes, and the schema of `agent -m … --json` output
// (the kernel's `TurnOutcome` as JSON).

export { type TurnOutcomeJson, turnOutcomeJsonSchema } from "@agent-kernel/kernel";
export { runAgentCli } from "./cli.ts";
export { CliError, EXIT, type ExitCode } from "./exit-codes.ts";
export { type CliIo, type CliStream, colourFor, paint, processIo, type Style } from "./io.ts";
