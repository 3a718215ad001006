#!/usr/bin/env node
// The `followup` binary: runs the command line with the process's IO and exits with its code once the
// output is flushed (the model client's idle keep-alive connection would otherwise hold the process). The
// first Ctrl-C or SIGTERM stops `run` (its turn aborted, its claimed items released: exit 130, or 143 for
// SIGTERM); a second one exits at once.
import { runFollowupCli } from "./cli.ts";

const controller = new AbortController();
let stoppedBy: "SIGINT" | "SIGTERM" | undefined;
for (const name of ["SIGINT", "SIGTERM"] as const) {
  process.on(name, () => {
    if (controller.signal.aborted) process.exit(name === "SIGTERM" ? 143 : 130);
    stoppedBy = name;
    controller.abort();
  });
}

const code = await runFollowupCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
});
await Promise.all(
  [process.stdout, process.stderr].map(
    (stream) => new Promise<void>((resolve) => stream.write("", () => resolve())),
  ),
);
process.exit(stoppedBy === "SIGTERM" && code === 130 ? 143 : code);
