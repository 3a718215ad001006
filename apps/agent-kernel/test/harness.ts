// Test support for `agent-kernel`: a scratch dir with a workspace, a state dir and a config whose custom
// provider points at a real tooling/fake-llm server on loopback (the `agent` app's test set-up, with a
// cron job and the aliases the READMEs use), and two ways to run the command — in-process through
// `runAgentKernelCli` with captured streams, or as a subprocess of the shipped entry from source
// (`node --conditions=@agent-kernel/source src/main.ts`), so no build is needed.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, startFakeLlm } from "@agent-kernel/fake-llm";
import { runAgentKernelCli } from "../src/cli.ts";

export const APP_DIR = join(import.meta.dirname, "..");
export const REPO_ROOT = join(APP_DIR, "..", "..");
export const MAIN = join(APP_DIR, "src", "main.ts");

export interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Harness {
  readonly root: string;
  readonly home: string;
  readonly workspaceDir: string;
  readonly stateDir: string;
  readonly configPath: string;
  readonly llm: FakeLlm;
  /** The environment commands get: this harness's config and state dir, no provider keys. */
  readonly env: Record<string, string | undefined>;
  /** `agent-kernel <args>` in-process. */
  run(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<Result>;
  /** `agent-kernel <args>` as a subprocess. */
  spawn(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<Result>;
  close(): Promise<void>;
}

/** The environment of a subprocess: no inherited kernel config, state dir, provider keys or NO_COLOR. */
export function cleanEnv(
  extra: Readonly<Record<string, string | undefined>> = {},
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of [
    "AGENT_KERNEL_CONFIG",
    "AGENT_KERNEL_STATE_DIR",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "NODE_OPTIONS",
    "NO_COLOR",
    "FORCE_COLOR",
  ]) {
    delete env[name];
  }
  return { ...env, ...extra };
}

export function configText(baseUrl: string, workspaceDir: string, extra = ""): string {
  return `{
  models: { providers: { scripted: { baseUrl: ${JSON.stringify(baseUrl)}, api: "openai-completions",
    models: [{ id: "m1", reasoning: true, contextWindow: 32000, maxTokens: 4096 }, { id: "m2", reasoning: true, contextWindow: 16000, maxTokens: 4096 }] } } },
  agents: {
    defaults: { model: "scripted/m1", workspace: ${JSON.stringify(workspaceDir)},
      models: { "scripted/m2": { alias: "sonnet" } } },
    list: [{ id: "main", default: true }, { id: "ops" }],
  },
  tools: { profile: "coding" },
  cron: { jobs: [{ id: "digest", schedule: { kind: "every", everySeconds: 86400 }, payload: { message: "digest please" } }] },
  ${extra}
}
`;
}

export async function createHarness(extraConfig = ""): Promise<Harness> {
  const root = mkdtempSync(join(tmpdir(), "agent-kernel-cli-"));
  const home = join(root, "home");
  const workspaceDir = join(root, "workspace");
  const stateDir = join(root, "state");
  mkdirSync(home);
  mkdirSync(workspaceDir);
  const llm = await startFakeLlm();
  const configPath = join(root, "config.json5");
  // Owner-only, as `setup` writes it: a config holding a channel token must not be readable by others.
  writeFileSync(configPath, configText(llm.baseUrlFor("openai"), workspaceDir, extraConfig), { mode: 0o600 });
  const env = cleanEnv({
    HOME: home,
    AGENT_KERNEL_CONFIG: configPath,
    AGENT_KERNEL_STATE_DIR: stateDir,
    NO_COLOR: "1",
  });
  return {
    root,
    home,
    workspaceDir,
    stateDir,
    configPath,
    llm,
    env,
    async run(args, extra = {}) {
      let stdout = "";
      let stderr = "";
      const code = await runAgentKernelCli(args, {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        env: { ...env, ...extra },
        cwd: root,
      });
      return { code, stdout, stderr };
    },
    spawn(args, extra = {}) {
      return runNode(["--conditions=@agent-kernel/source", MAIN, ...args], { ...env, ...extra }, root);
    },
    async close() {
      await llm.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** `node <args>` with this environment; resolves with its code and output. */
export function runNode(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      cwd,
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
