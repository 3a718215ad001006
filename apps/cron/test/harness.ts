// Test support for the cron app: a scratch dir with a workspace and a state dir, a real tooling/fake-llm server
// on loopback, a config (JSON5, parsed by @agent-kernel/config) whose provider points at it, and channels-core's
// in-memory test channel behind a gate (held, a run outlasts its interval).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { OutboundMessage, SendResult } from "@agent-kernel/channels-core";
import { TestChannel } from "@agent-kernel/channels-core/testing";
import { type KernelConfig, parseConfigText } from "@agent-kernel/config";
import { type FakeLlm, startFakeLlm } from "@agent-kernel/fake-llm";
import type { CronDeliveryChannel } from "../src/delivery.ts";

export interface CronHarness {
  readonly root: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
  readonly configPath: string;
  readonly llm: FakeLlm;
  /** The config with `cron` set to `cronSection` (JSON5 text of the `cron` object). */
  config(cronSection: string): KernelConfig;
  /** Writes the config file for the CLI; returns its path. */
  writeConfig(cronSection: string): string;
  close(): Promise<void>;
}

export function configText(baseUrl: string, workspaceDir: string, cronSection: string): string {
  return `{
  models: { providers: { scripted: { baseUrl: ${JSON.stringify(baseUrl)}, api: "openai-completions",
    models: [{ id: "m1", reasoning: true, contextWindow: 32000, maxTokens: 4096 }] } } },
  agents: { defaults: { model: "scripted/m1", workspace: ${JSON.stringify(workspaceDir)} }, list: [{ id: "main", default: true }, { id: "ops" }] },
  tools: { profile: "coding" },
  cron: ${cronSection},
}
`;
}

export async function createCronHarness(): Promise<CronHarness> {
  const root = mkdtempSync(join(tmpdir(), "agent-cron-"));
  const workspaceDir = join(root, "workspace");
  const stateDir = join(root, "state");
  mkdirSync(workspaceDir);
  const llm = await startFakeLlm();
  const configPath = join(root, "config.json5");
  const text = (cron: string) => configText(llm.baseUrlFor("openai"), workspaceDir, cron);
  return {
    root,
    stateDir,
    workspaceDir,
    configPath,
    llm,
    config(cronSection) {
      const config = parseConfigText(text(cronSection), { env: {}, cpuCount: 2 });
      return { ...config, store: { ...config.store, stateDir } };
    },
    writeConfig(cronSection) {
      writeFileSync(configPath, text(cronSection));
      return configPath;
    },
    async close() {
      await llm.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * The in-memory test channel of `@agent-kernel/channels-core/testing`, with a gate: `hold()` makes the next
 * sends wait until `release()`, so a run can be kept going past its interval.
 */
export class HeldChannel implements CronDeliveryChannel {
  readonly inner: TestChannel;
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;
  #waiting: (() => void) | undefined;

  constructor(id = "test") {
    this.inner = new TestChannel({ id });
  }

  get id(): string {
    return this.inner.id;
  }

  get accountId(): string {
    return this.inner.accountId;
  }

  /** Holds sends; the returned promise resolves once one is waiting at the gate. */
  hold(): Promise<void> {
    this.#gate = new Promise((resolve) => (this.#open = resolve));
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  release(): void {
    this.#open?.();
    this.#gate = undefined;
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    if (this.#gate !== undefined) {
      this.#waiting?.();
      await this.#gate;
    }
    return this.inner.send(message);
  }
}

/** Runs the app's binary (`src/main.ts` with the source condition, so no build) as a subprocess. */
export function runBinary(
  args: readonly string[],
): Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }> {
  const appDir = join(import.meta.dirname, "..");
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of ["AGENT_KERNEL_CONFIG", "AGENT_KERNEL_STATE_DIR", "NODE_OPTIONS"]) delete env[name];
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--conditions=@agent-kernel/source", join(appDir, "src", "main.ts"), ...args],
      {
        cwd: appDir,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
