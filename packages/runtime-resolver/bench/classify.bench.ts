// What OpenClaw's precedence costs: classifying every distinct message of the
// parity corpus with classifyFailover, against a naive first-match pass over
// the same pattern tables (the baseline a simple implementation would use).
import { defineSuite } from "@agent-kernel/bench";
import { parseConfig } from "@agent-kernel/config";
import { classifyFailover, ERROR_PATTERNS, matchesAny } from "../src/classify-error.ts";
import { resolveRuntime } from "../src/runtime-context.ts";
import { loadParityCases } from "../test/parity-fixtures.ts";

const messages = [
  ...new Set(
    loadParityCases("error-classify", "classifyFailoverSignal").flatMap((c) => {
      const message = (c.input as { message?: string }).message;
      return message === undefined ? [] : [message];
    }),
  ),
];
const tables = Object.entries(ERROR_PATTERNS);

function naive(message: string): string | null {
  for (const [reason, patterns] of tables) if (matchesAny(message, patterns)) return reason;
  return null;
}

const config = parseConfig(
  {
    agents: {
      defaults: {
        model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["openai/gpt-5-mini"] },
        models: {
          "anthropic/claude-sonnet-4-5": { alias: "sonnet" },
          "openai/gpt-5-mini": { alias: "mini" },
        },
      },
    },
    auth: {
      profiles: { "anthropic:a": { provider: "anthropic", mode: "api_key", apiKey: "sk-bench-key-0000" } },
    },
  },
  { env: {}, cpuCount: 1 },
);

export default [
  defineSuite({
    name: `classify ${messages.length} corpus messages`,
    baseline: "naive first-match over the tables",
    iterations: 10,
    itemsPerIteration: messages.length,
    cases: [
      { name: "naive first-match over the tables", run: () => messages.map(naive) },
      {
        name: "classifyFailover (OpenClaw precedence)",
        run: () => messages.map((message) => classifyFailover({ message })),
      },
    ],
  }),
  defineSuite({
    name: "resolveRuntime ×100",
    baseline: "classifyFailover ×100",
    iterations: 10,
    itemsPerIteration: 100,
    cases: [
      {
        name: "classifyFailover ×100",
        run: () => {
          for (let i = 0; i < 100; i++) classifyFailover({ message: '429: {"type":"rate_limit_error"}' });
        },
      },
      {
        name: "resolveRuntime ×100",
        run: () => {
          for (let i = 0; i < 100; i++)
            resolveRuntime({
              config,
              session: { sessionKey: `telegram:direct:${i}`, agentDir: "/nonexistent-agent-dir" },
              env: {},
              homeDir: "/tmp",
            });
        },
      },
    ],
  }),
];
