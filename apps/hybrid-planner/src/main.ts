#!/usr/bin/env node
// The `hybrid-planner` binary: runs the command line with the process's IO; the first Ctrl-C aborts the turn in
// flight (recorded as aborted), a second exits at once.
import { runPlannerCli } from "./cli.ts";

const controller = new AbortController();
process.on("SIGINT", () => {
  if (controller.signal.aborted) process.exit(130);
  controller.abort();
});

const code = await runPlannerCli(process.argv.slice(2), undefined, controller.signal);
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);

function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write("", () => resolve()));
}
