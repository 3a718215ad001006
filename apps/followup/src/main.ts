#!/usr/bin/env node
// The `followup` binary: runs the command line with the process's IO and exits with its code once the
// output is flushed (the model client's idle keep-alive connection would otherwise hold the process).
import { runFollowupCli } from "./cli.ts";

const code = await runFollowupCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
await Promise.all(
  [process.stdout, process.stderr].map(
    (stream) => new Promise<void>((resolve) => stream.write("", () => resolve())),
  ),
);
process.exit(code);
