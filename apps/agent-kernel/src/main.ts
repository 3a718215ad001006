#!/usr/bin/env node
// The `agent-kernel` binary: runs the command line with the process's IO; the first Ctrl-C (or SIGTERM) is
// handed to the running command (a turn is aborted and stored as aborted, a child command gets the signal),
// a second exits at once. Exits with the command's code once its output is flushed.
import { runAgentKernelCli } from "./cli.ts";

const controller = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (controller.signal.aborted) process.exit(signal === "SIGINT" ? 130 : 143);
    controller.abort(signal);
  });
}

const code = await runAgentKernelCli(process.argv.slice(2), undefined, controller.signal);
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);

/** Resolves once everything written to `stream` so far is handed to the OS (pipes are asynchronous). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write("", () => resolve()));
}
