#!/usr/bin/env node
// The `auto-reply` daemon: loads the config (`--config`, else $AGENT_KERNEL_CONFIG, else
// ~/.agent-kernel/config.json5) and the state dir (`--state-dir`, else $AGENT_KERNEL_STATE_DIR, else
// `store.stateDir`, else ~/.agent-kernel), opens the store, starts every configured channel through the
// gateway, and on SIGINT/SIGTERM shuts down gracefully (a second signal exits at once). A bad config or
// flag is one paragraph on stderr and exit code 2.
import { parseArgs } from "node:util";
import { applyStateDir, ConfigError, loadConfig } from "@agent-kernel/config";

const USAGE = `Usage: auto-reply [--config <file>] [--state-dir <dir>]

Starts the configured channels (channels.telegram, channels.slack, channels.webchat) and answers every
allowed message through the Agent Session Kernel. Stops gracefully on Ctrl-C or SIGTERM.`;

function fail(message: string, code: number): never {
  process.stderr.write(`auto-reply: ${message}\n`);
  process.exit(code);
}

let flags: { config?: string | undefined; "state-dir"?: string | undefined; help?: boolean | undefined };
try {
  flags = parseArgs({
    options: {
      config: { type: "string" },
      "state-dir": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  }).values;
} catch (error) {
  fail(`${(error as Error).message}\n${USAGE}`, 2);
}
if (flags.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

let config: ReturnType<typeof loadConfig>["config"];
try {
  config = loadConfig(flags.config === undefined ? {} : { path: flags.config }).config;
} catch (error) {
  if (error instanceof ConfigError) fail(error.message, 2);
  throw error;
}
const applied = applyStateDir(config, flags["state-dir"]);
config = applied.config;
const stateDir = applied.stateDir;
const log = (line: string) => process.stderr.write(`[auto-reply] ${line}\n`);
if (!["telegram", "slack", "webchat"].some((id) => config.channels[id]?.enabled === true))
  fail("no channel is configured and enabled (channels.telegram, channels.slack or channels.webchat)", 2);

// Loaded only now: the kernel brings pi, which a usage error does not need.
const { createKernel, openKernelStore } = await import("@agent-kernel/kernel");
const { channelsFromConfig } = await import("./channels.ts");
const { createAutoReplyGateway } = await import("./gateway.ts");
const { servedUrls, startupFailure, startWithRetry, turnLine } = await import("./startup.ts");

const store = await openKernelStore({ stateDir, config });
const kernel = createKernel({ config, store });
const stopping = new AbortController();
let stopSignal: "SIGINT" | "SIGTERM" | undefined;
let gateway: ReturnType<typeof createAutoReplyGateway> | undefined;
let channels: ReturnType<typeof channelsFromConfig> = [];
try {
  // Fresh adapters per attempt: one that failed to start cannot be started again.
  gateway = await startWithRetry(
    async () => {
      channels = channelsFromConfig(config, { channelState: store.channelState, log });
      const attempt = createAutoReplyGateway({
        config,
        stateDir,
        channels,
        kernel,
        store,
        log,
        onTurnEnd: (turn) => log(turnLine(turn)),
      });
      await attempt.start();
      return attempt;
    },
    { log, signal: stopping.signal },
  );
} catch (error) {
  await store.close();
  const failure = startupFailure(error);
  fail(failure.line, failure.exitCode);
}
log(`listening on ${channels.map((channel) => `${channel.id}:${channel.accountId}`).join(", ")}`);
for (const line of servedUrls(channels)) log(line);

const shutdown = async (signal: "SIGINT" | "SIGTERM") => {
  const code = signal === "SIGTERM" ? 143 : 130;
  if (stopSignal !== undefined) process.exit(code);
  stopSignal = signal;
  stopping.abort();
  log("shutting down: letting running turns finish");
  await gateway?.stop();
  await store.close();
  process.exit(code);
};
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
