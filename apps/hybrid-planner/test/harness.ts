// Test support for the planner: a scratch dir with a workspace and a state dir, a real tooling/fake-llm server
// on loopback and a config (parsed by @agent-kernel/config) whose provider points at it; `tools.deny` holds
// `exec` so a plan can ask for a tool the config forbids.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KernelConfig, parseConfigText } from "@agent-kernel/config";
import { type FakeLlm, startFakeLlm } from "@agent-kernel/fake-llm";

export interface PlannerHarness {
  readonly root: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
  readonly configPath: string;
  readonly config: KernelConfig;
  readonly llm: FakeLlm;
  close(): Promise<void>;
}

export async function createPlannerHarness(): Promise<PlannerHarness> {
  const root = mkdtempSync(join(tmpdir(), "hybrid-planner-"));
  const workspaceDir = join(root, "workspace");
  const stateDir = join(root, "state");
  mkdirSync(workspaceDir);
  writeFileSync(join(workspaceDir, "notes.md"), "# Notes\nship on friday\n");
  const llm = await startFakeLlm();
  const text = `{
  models: { providers: { scripted: { baseUrl: ${JSON.stringify(llm.baseUrlFor("openai"))}, api: "openai-completions",
    models: [{ id: "m1", reasoning: true, contextWindow: 32000, maxTokens: 4096 }] } } },
  agents: { defaults: { model: "scripted/m1", workspace: ${JSON.stringify(workspaceDir)} } },
  tools: { profile: "coding", deny: ["exec"] },
  store: { stateDir: ${JSON.stringify(stateDir)} },
}
`;
  const configPath = join(root, "config.json5");
  writeFileSync(configPath, text);
  const config = parseConfigText(text, { env: {}, cpuCount: 2 });
  return {
    root,
    stateDir,
    workspaceDir,
    configPath,
    config,
    llm,
    async close() {
      await llm.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The planner's scripted answer: some reasoning, then the plan inside `<final>`. */
export function plannerReply(plan: unknown): string {
  const json = typeof plan === "string" ? plan : JSON.stringify(plan);
  return `<think>Break the goal into steps.</think><final>${json}</final>`;
}

/** The tool names a recorded request offered the model. */
export function offeredTools(body: unknown): string[] {
  const tools = (body as { tools?: { function?: { name?: string } }[] } | null)?.tools ?? [];
  return tools.map((tool) => tool.function?.name ?? "").sort();
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
