// Test support for the `agent` CLI: a scratch dir with a workspace, a state dir and a config whose custom
// provider points at a real tooling/fake-llm server on loopback, and a runner that starts the command as a
// subprocess (`node --conditions=@agent-kernel/source src/main.ts`: the shipped entry, workspace packages
// from source, so no build is needed) and collects its exit code and output.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, startFakeLlm } from "@agent-kernel/fake-llm";

export const APP_DIR = join(import.meta.dirname, "..");
export const REPO_ROOT = join(APP_DIR, "..", "..");

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliHarness {
  readonly root: string;
  readonly workspaceDir: string;
  readonly stateDir: string;
  readonly configPath: string;
  readonly llm: FakeLlm;
  /** Runs `agent <args>` with this harness's `--config` and `--state-dir` unless `bare`. */
  run(args: readonly string[], options?: RunOptions): Promise<CliResult>;
  close(): Promise<void>;
}

export interface RunOptions {
  readonly bare?: boolean;
  readonly env?: Readonly<Record<string, string>>;
  /** The script to run; default src/main.ts with the source condition. */
  readonly entry?: "source" | "dist";
}

export function runNode(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      cwd: APP_DIR,
      env: { ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The environment of a subprocess: no inherited kernel config, state dir or provider keys. */
let configCacheDir: string | undefined;

/**
 * A config validation cache of this process's own (AGENT_KERNEL_CONFIG_CACHE), made on first use and removed
 * at exit: the runs of one test file or bench share it, so the cache is exercised, and nothing is written into
 * the developer's real ~/.cache.
 */
function harnessConfigCacheDir(): string {
  if (configCacheDir === undefined) {
    const made = mkdtempSync(join(tmpdir(), "agent-cli-config-cache-"));
    process.on("exit", () => rmSync(made, { recursive: true, force: true }));
    configCacheDir = made;
  }
  return configCacheDir;
}

export function cleanEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of [
    "AGENT_KERNEL_CONFIG",
    "AGENT_KERNEL_STATE_DIR",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "NODE_OPTIONS",
  ]) {
    delete env[name];
  }
  return {
    ...env,
    HOME: env.HOME ?? tmpdir(),
    AGENT_KERNEL_CONFIG_CACHE: harnessConfigCacheDir(),
    ...extra,
  };
}

export function configText(baseUrl: string, workspaceDir: string, extra = ""): string {
  return `{
  models: { providers: { scripted: { baseUrl: ${JSON.stringify(baseUrl)}, api: "openai-completions",
    models: [{ id: "m1", reasoning: true, contextWindow: 32000, maxTokens: 4096 }, { id: "m2", contextWindow: 16000, maxTokens: 4096 }] } } },
  agents: {
    defaults: { model: "scripted/m1", workspace: ${JSON.stringify(workspaceDir)}, models: { "scripted/m2": { alias: "second" } } },
    list: [{ id: "main", default: true }, { id: "ops" }],
  },
  tools: { profile: "coding" },
  ${extra}
}
`;
}

export async function createCliHarness(extraConfig = ""): Promise<CliHarness> {
  const root = mkdtempSync(join(tmpdir(), "agent-cli-"));
  const workspaceDir = join(root, "workspace");
  const stateDir = join(root, "state");
  mkdirSync(workspaceDir);
  const llm = await startFakeLlm();
  const configPath = join(root, "config.json5");
  writeFileSync(configPath, configText(llm.baseUrlFor("openai"), workspaceDir, extraConfig));
  return {
    root,
    workspaceDir,
    stateDir,
    configPath,
    llm,
    run(args, options = {}) {
      const entry =
        options.entry === "dist"
          ? [join(APP_DIR, "dist", "main.js")]
          : ["--conditions=@agent-kernel/source", join(APP_DIR, "src", "main.ts")];
      const common = options.bare ? [] : ["--config", configPath, "--state-dir", stateDir];
      return runNode([...entry, ...args, ...common], cleanEnv(options.env));
    },
    async close() {
      await llm.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
