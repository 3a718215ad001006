#!/usr/bin/env node
// The `agent` binary: runs the command line with the process's IO, aborts a running turn on the first Ctrl-C
// (the run is stored as aborted; a second Ctrl-C exits at once), and exits with the command's code.
import { runAgentCli } from "./cli.ts";

const controller = new AbortController();
process.on("SIGINT", () => {
  if (controller.signal.aborted) process.exit(130);
  controller.abort();
});

const code = await runAgentCli(process.argv.slice(2), undefined, controller.signal);
process.exitCode = code;
