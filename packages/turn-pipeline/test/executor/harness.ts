// Test harness for the turn executor: a temp state dir with a real SQLite store, a workspace, a config with
// the given providers and profiles, the RuntimeContext and ToolPolicy exactly as the kernel will resolve
// them, and a ModelRuntimePool (with pi's faux provider when given). Shared by the executor's tests, the
// child process of the restart test and the benchmark.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import { loadProfileUsage, type RuntimeRequest, resolveRuntime } from "@agent-kernel/runtime-resolver";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { resolveToolPolicy } from "@agent-kernel/tool-policy";
import type { Provider } from "@earendil-works/pi-ai";
import { ModelRuntimePool } from "../../src/executor/model-runtimes.ts";
import type { TurnContext } from "../../src/executor/types.ts";

export const AGENT = "main";

export interface Harness {
  readonly root: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
  readonly agentDir: string;
  readonly config: KernelConfig;
  readonly store: SqliteSessionStore;
  readonly models: ModelRuntimePool;
  /** Resolves a fresh context for the session (cooldowns read from the store, as the kernel does). */
  context(
    sessionKey: string,
    options?: { sessionId?: string; request?: RuntimeRequest; overrides?: Partial<TurnContext> },
  ): Promise<TurnContext>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** The config object (before parsing); `agents.defaults.workspace` is set by the harness. */
  readonly config: Record<string, unknown>;
  readonly nativeProviders?: readonly Provider[];
  /** Reuse an existing state dir (the restart test's child). */
  readonly root?: string;
  readonly defaults?: Partial<TurnContext>;
}

export async function createHarness(options: HarnessOptions): Promise<Harness> {
  const root = options.root ?? mkdtempSync(join(tmpdir(), "turn-executor-"));
  const stateDir = join(root, "state");
  const workspaceDir = join(root, "workspace");
  const agentDir = join(root, "agent");
  mkdirSync(workspaceDir, { recursive: true });
  mkdirSync(agentDir, { recursive: true });
  const raw = options.config as { agents?: { defaults?: Record<string, unknown> } };
  const config = parseConfig({
    ...options.config,
    agents: {
      ...(raw.agents ?? {}),
      defaults: { ...(raw.agents?.defaults ?? {}), workspace: workspaceDir, agentDir },
    },
  });
  const store = await openSessionStore({ stateDir });
  const models = new ModelRuntimePool({
    config,
    ...(options.nativeProviders ? { nativeProviders: options.nativeProviders } : {}),
  });
  return {
    root,
    stateDir,
    workspaceDir,
    agentDir,
    config,
    store,
    models,
    async context(sessionKey, contextOptions = {}) {
      const existing = await store.sessions.get({ agentId: AGENT, sessionKey });
      const session =
        existing ??
        (await store.sessions.ensure({
          agentId: AGENT,
          sessionKey,
          ...(contextOptions.sessionId === undefined ? {} : { sessionId: contextOptions.sessionId }),
        }));
      const runtime = resolveRuntime({
        config,
        session: { agentId: AGENT, sessionKey, sessionId: session.sessionId },
        current: { sessionId: session.sessionId, lastActivityAt: Date.now() },
        authUsage: await loadProfileUsage(store.auth, AGENT, Date.now()),
        env: { AGENT_KERNEL_STATE_DIR: stateDir },
        ...(contextOptions.request ? { request: contextOptions.request } : {}),
      });
      const toolPolicy = resolveToolPolicy(config, {
        agentId: AGENT,
        modelProvider: runtime.model.value.provider,
        modelId: runtime.model.value.model,
      });
      return {
        config,
        store,
        runtime,
        toolPolicy,
        models,
        agentId: AGENT,
        sessionKey: runtime.sessionKey.value,
        sessionId: session.sessionId,
        workspaceDir,
        transientRetryDelayMs: 0,
        ...(options.defaults ?? {}),
        ...(contextOptions.overrides ?? {}),
      };
    },
    async close() {
      await store.close();
      if (options.root === undefined) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A config whose only provider is pi's faux provider (registered natively by the pool). */
export function fauxConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    models: {
      providers: {
        faux: {
          baseUrl: "http://127.0.0.1:9/v1",
          api: "openai-completions",
          models: [
            {
              id: "faux-1",
              reasoning: true,
              input: ["text", "image"],
              contextWindow: 200_000,
              maxTokens: 8192,
            },
          ],
        },
      },
    },
    agents: { defaults: { model: "faux/faux-1" } },
    tools: { profile: "full" },
    ...extra,
  };
}
