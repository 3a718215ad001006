#!/usr/bin/env node
// The installed `agent-kernel-config` command: the shared start-up guard (bin-guard.ts: the Node.js version,
// closed pipes), then the command itself (cli.ts), loaded only once the guard passed.
import { guardCommand } from "./bin-guard.ts";

guardCommand("agent-kernel-config");
const { main } = await import("./cli.ts");
process.exitCode = main(process.argv.slice(2));
