#!/usr/bin/env node
// The installed `agent-kernel-gateway` command: the shared start-up guard (@agent-kernel/config/bin-guard: the
// Node.js version, closed pipes), then the command itself (main.ts), loaded only once the guard passed.
import { guardCommand } from "@agent-kernel/config/bin-guard";

guardCommand("agent-kernel-gateway");
await import("./main.ts");
