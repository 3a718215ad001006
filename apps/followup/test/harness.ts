// Test support for the follow-up runner: a scratch dir with a workspace and a state dir, a real
// tooling/fake-llm server on loopback, and a config whose `scripted` provider points at it (the same shape
// apps/agent's tests write), plus helpers to read what the model was sent and what the store holds.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import { type FakeLlm, type RecordedRequest, startFakeLlm } from "@agent-kernel/fake-llm";
import { type AnyKernelStore, showSession } from "@agent-kernel/kernel";
import { type Clock, createFollowupRunner, type FollowupEvent, type FollowupRunner } from "../src/index.ts";

export const APP_DIR = join(import.meta.dirname, "..");

export interface Harness {
  readonly root: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
  readonly llm: FakeLlm;
  readonly config: KernelConfig;
  /** The raw config (JSON) for child processes and the CLI. */
  readonly configPath: string;
  runner(options?: { readonly clock?: Clock; readonly leaseMs?: number }): Promise<FollowupRunner>;
  close(): Promise<void>;
}

/** `queue`: `messages.queue` for this test. */
export async function createHarness(queue: Record<string, unknown> = {}): Promise<Harness> {
  const root = mkdtempSync(join(tmpdir(), "followup-"));
  const workspaceDir = join(root, "workspace");
  const stateDir = join(root, "state");
  mkdirSync(workspaceDir);
  const llm = await startFakeLlm();
  const raw = {
    store: { stateDir },
    models: {
      providers: {
        scripted: {
          baseUrl: llm.baseUrlFor("openai"),
          api: "openai-completions",
          models: [{ id: "m1", contextWindow: 32_000, maxTokens: 4096 }],
        },
      },
    },
    agents: { defaults: { model: "scripted/m1", workspace: workspaceDir } },
    tools: { profile: "coding" },
    messages: { queue },
  };
  const configPath = join(root, "config.json");
  writeFileSync(configPath, JSON.stringify(raw, null, 2));
  const config = parseConfig(raw, { env: {} });
  const runners: FollowupRunner[] = [];
  return {
    root,
    stateDir,
    workspaceDir,
    llm,
    config,
    configPath,
    async runner(options = {}) {
      const runner = await createFollowupRunner({
        config,
        stateDir,
        kernelOptions: {
          paths: { env: {}, homeDir: root, cwd: root },
          executorSettings: { transientRetryDelayMs: 0 },
        },
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      });
      runners.push(runner);
      return runner;
    },
    async close() {
      for (const runner of runners) await runner.stop().catch(() => undefined);
      await llm.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The last user message's text of a request the model got. */
export function lastUserText(request: RecordedRequest | undefined): string {
  return userTexts(request).at(-1) ?? "";
}

/** Every user message's text of a request, in order. */
export function userTexts(request: RecordedRequest | undefined): string[] {
  const body = request?.body as { messages?: { role: string; content: unknown }[] } | undefined;
  return (body?.messages ?? [])
    .filter((message) => message.role === "user")
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : (message.content as { type: string; text?: string }[])
            .map((part) => (part.type === "text" ? (part.text ?? "") : ""))
            .join(""),
    );
}

/** Collects every event of a runner, in order. */
export function recordEvents(runner: FollowupRunner): FollowupEvent[] {
  const events: FollowupEvent[] = [];
  for (const type of ["delivered", "steered", "dropped", "recovered", "error"] as const) {
    runner.on(type, (event) => events.push(event));
  }
  return events;
}

/** The stored transcript's messages and the session's runs. */
export async function sessionView(store: AnyKernelStore, config: KernelConfig, key: string) {
  const details = await showSession(store, config, { key, runLimit: 100 });
  return {
    userMessages: details?.messages.filter((message) => message.role === "user").map((m) => m.text) ?? [],
    runs: details?.runs ?? [],
  };
}
