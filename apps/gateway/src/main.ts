#!/usr/bin/env node
// The `agent-kernel-gateway` command: `agent-kernel-gateway [gateway] [flags]` runs the daemon,
// `agent-kernel-gateway logs …` and `agent-kernel-gateway status …` the operator commands (the same functions
// `agent-kernel gateway|logs|status` dispatch to). Exits with the command's code once output is flushed.
import { runGatewayCli } from "./cli.ts";

const args = process.argv.slice(2);
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
const code = await runGatewayCli(args[0] === "gateway" ? args.slice(1) : args, io);
await Promise.all(
  [process.stdout, process.stderr].map(
    (stream) => new Promise<void>((resolve) => stream.write("", () => resolve())),
  ),
);
process.exit(code);
