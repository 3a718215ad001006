// Test support for the gateway: a scratch state dir and workspace, a config whose custom provider points at a
// real tooling/fake-llm server on loopback, a TestChannel, and a started gateway that records every handled
// turn. Each harness has its own server and dirs, so tests can run concurrently.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestChannel } from "@agent-kernel/channels-core/testing";
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import { type FakeLlm, startFakeLlm } from "@agent-kernel/fake-llm";
import {
  type AutoReplyGateway,
  type AutoReplyGatewayOptions,
  createAutoReplyGateway,
  type HandledTurn,
} from "../src/index.ts";

export interface GatewayHarness {
  readonly root: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
  readonly llm: FakeLlm;
  readonly config: KernelConfig;
  readonly channel: TestChannel;
  readonly turns: HandledTurn[];
  readonly logs: string[];
  gateway: AutoReplyGateway;
  /** A new gateway over the same state dir and channel (after `stop`), started. */
  restart(): Promise<AutoReplyGateway>;
  close(): Promise<void>;
}

export function testConfig(
  baseUrl: string,
  workspaceDir: string,
  extra: Record<string, unknown> = {},
): KernelConfig {
  const agents = (extra.agents ?? {}) as Record<string, unknown>;
  const defaults = (agents.defaults ?? {}) as Record<string, unknown>;
  return parseConfig({
    models: {
      providers: {
        scripted: {
          baseUrl,
          api: "openai-completions",
          apiKey: "sk-test-key",
          models: [
            { id: "m1", reasoning: true, contextWindow: 32000, maxTokens: 4096 },
            { id: "m2", contextWindow: 16000, maxTokens: 4096 },
          ],
        },
      },
    },
    tools: { profile: "full" },
    channels: { test: { dmPolicy: "open", allowFrom: ["*"] } },
    ...extra,
    agents: { ...agents, defaults: { model: "scripted/m1", workspace: workspaceDir, ...defaults } },
  });
}

export async function createGatewayHarness(
  extra: Record<string, unknown> = {},
  options: Partial<AutoReplyGatewayOptions> = {},
): Promise<GatewayHarness> {
  const root = mkdtempSync(join(tmpdir(), "auto-reply-"));
  const stateDir = join(root, "state");
  const workspaceDir = join(root, "workspace");
  mkdirSync(workspaceDir, { recursive: true });
  const llm = await startFakeLlm();
  const config = testConfig(llm.baseUrlFor("openai"), workspaceDir, extra);
  const channel = new TestChannel();
  const turns: HandledTurn[] = [];
  const logs: string[] = [];
  const make = () =>
    createAutoReplyGateway({
      config,
      stateDir,
      channels: [channel],
      kernelOptions: { executorSettings: { transientRetryDelayMs: 1 } },
      log: (line) => logs.push(line),
      onTurnEnd: (turn) => turns.push(turn),
      ...options,
    });
  const harness: GatewayHarness = {
    root,
    stateDir,
    workspaceDir,
    llm,
    config,
    channel,
    turns,
    logs,
    gateway: make(),
    async restart() {
      harness.gateway = make();
      await harness.gateway.start();
      return harness.gateway;
    },
    async close() {
      await harness.gateway.stop();
      await llm.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  await harness.gateway.start();
  return harness;
}
