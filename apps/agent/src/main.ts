#!/usr/bin/env node
// The `agent` binary: runs the command line with the process's IO, aborts a running turn on the first Ctrl-C
// (the run is stored as aborted; a second Ctrl-C exits at once), and exits with the command's code as soon as
// the command returned and its output is flushed.
import { enableCompileCache } from "node:module";

// V8's code cache on disk (Node's own, in the OS temp dir unless NODE_COMPILE_CACHE names one): a command
// started again skips compiling the modules it loads — most of them pi's — which is most of a cold start.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. Enabled before anything else loads, hence the dynamic import.
enableCompileCache();
const { runAgentCli } = await import("./cli.ts");

const controller = new AbortController();
process.on("SIGINT", () => {
  if (controller.signal.aborted) process.exit(130);
  controller.abort();
});

const code = await runAgentCli(process.argv.slice(2), undefined, controller.signal);
process.exitCode = code;
// Everything a command does is finished when it returns (the store closed, the run recorded). What can
// still be open is idle: the model client's keep-alive connection, which would hold the process for its
// idle timeout (about 150 ms against a local server) before Node exits on its own.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);

/** Resolves once everything written to `stream` so far is handed to the OS (pipes are asynchronous). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write("", () => resolve()));
}
