#!/usr/bin/env node
// The `agent-cron` binary: runs the command line with the process's IO. The first Ctrl-C (or SIGTERM) stops
// `start` and aborts a `run` in flight (runs are recorded as aborted), exiting 130 (143 for SIGTERM); a second
// signal exits at once.
import { runCronCli } from "./cli.ts";

const controller = new AbortController();
let stoppedBy: "SIGINT" | "SIGTERM" | undefined;
for (const name of ["SIGINT", "SIGTERM"] as const) {
  process.on(name, () => {
    if (controller.signal.aborted) process.exit(name === "SIGTERM" ? 143 : 130);
    stoppedBy = name;
    controller.abort();
  });
}

const code = await runCronCli(process.argv.slice(2), undefined, controller.signal);
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(stoppedBy === "SIGTERM" && code === 130 ? 143 : code);

function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write("", () => resolve()));
}
