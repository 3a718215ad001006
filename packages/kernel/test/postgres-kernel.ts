// Shared set-up of the kernel's PostgreSQL tests: a config whose store is PostgreSQL and whose model is served
// by tooling/fake-llm over real HTTP. Used by src/postgres-lanes.test.ts and its child processes
// (postgres-lane-worker.ts). Owns: the config only; the server and fake-llm are started by the tests.
import { type KernelConfig, parseConfig } from "@agent-kernel/config";

export interface PostgresKernelConfigInput {
  readonly url: string;
  readonly llmBaseUrl: string;
  /** The model id the fake server sees (tests route slow and fast answers by it). */
  readonly model: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
}

export function postgresKernelConfig(input: PostgresKernelConfigInput): KernelConfig {
  return parseConfig(
    {
      store: {
        stateDir: input.stateDir,
        driver: "postgres",
        postgres: { url: input.url, maxConnections: 4 },
      },
      models: {
        providers: {
          local: {
            baseUrl: input.llmBaseUrl,
            api: "openai-completions",
            models: [{ id: input.model, contextWindow: 32_000, maxTokens: 4096 }],
          },
        },
      },
      agents: { defaults: { model: `local/${input.model}`, workspace: input.workspaceDir } },
      tools: { profile: "minimal" },
    },
    { env: {} },
  );
}
