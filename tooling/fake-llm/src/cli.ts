#!/usr/bin/env node
// The `fake-llm` command: serves a JSON scenario on 127.0.0.1 until SIGINT/SIGTERM, printing the base URLs
// to put on pi models and one line per request. Owns argument parsing and process lifetime only.
import { parseArgs } from "node:util";
import { loadScenarioFile } from "./scenario.ts";
import { startFakeLlm } from "./server.ts";
import type { Scenario } from "./types.ts";

const USAGE = `usage: fake-llm [--scenario <file.json>] [--port <n>] [--quiet]

Serves OpenAI chat completions (POST <url>/v1/chat/completions) and Anthropic Messages
(POST <url>/v1/messages) from a scenario file (schema: tooling/fake-llm/README.md).
Without --scenario every request gets the "unscripted" 400 error.`;

async function main(argv: string[]): Promise<number> {
  let values: { scenario?: string; port?: string; quiet?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        scenario: { type: "string", short: "s" },
        port: { type: "string", short: "p" },
        quiet: { type: "boolean", short: "q" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    process.stderr.write(`fake-llm: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    process.stderr.write(
      `fake-llm: --port must be an integer 0–65535 (got ${JSON.stringify(values.port)})\n`,
    );
    return 2;
  }
  let scenario: Scenario = {};
  if (values.scenario !== undefined) {
    try {
      scenario = await loadScenarioFile(values.scenario);
    } catch (error) {
      process.stderr.write(`fake-llm: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  }
  const quiet = values.quiet === true;
  const llm = await startFakeLlm({
    scenario,
    port,
    onRequest: (request) => {
      if (quiet) return;
      const key = request.apiKeySuffix === null ? "no key" : `key …${request.apiKeySuffix}`;
      process.stdout.write(
        `#${request.index} ${request.method} ${request.path} model=${request.model ?? "-"} ${key} → ${request.served ?? "unscripted"}${request.rule ? ` (${request.rule})` : ""}\n`,
      );
    },
  });
  process.stdout.write(
    `fake-llm listening on ${llm.url}\n` +
      `  openai-completions baseUrl: ${llm.baseUrlFor("openai")}\n` +
      `  anthropic-messages baseUrl: ${llm.baseUrlFor("anthropic")}\n`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await llm.close();
  process.stdout.write(`fake-llm closed after ${llm.requests.length} request(s)\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
