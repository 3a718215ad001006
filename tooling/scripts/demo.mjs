#!/usr/bin/env node
// The README's demo (`tooling/pnpm demo`, after the root script built the `agent` app): a real `agent` turn over
// HTTP against a SCRIPTED model. Owns: starting tooling/fake-llm with examples/demo-scenario.json on a free
// loopback port, a scratch workspace and state dir with a config whose custom provider points at it, running the
// built `agent` binary (the model writes a file with a tool, then answers; text streamed to the terminal; the
// run persisted), then `agent runs show <runId>` and an offline `agent replay <runId>`. Works without a TTY
// (CI). Leaves nothing behind unless AGENT_DEMO_KEEP=1. Does not own the agent or the server.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const root = join(import.meta.dirname, "..", "..");
const agentBin = join(root, "apps", "agent", "dist", "main.js");
const scenario = join(root, "examples", "demo-scenario.json");
const color = process.stdout.isTTY && !process.env.NO_COLOR;
const bold = (text) => (color ? `\x1b[1m${text}\x1b[0m` : text);

function banner(text) {
  process.stdout.write(`\n${bold(`── ${text} `.padEnd(100, "─"))}\n`);
}

/** Starts the fake LLM server as a child process and resolves with its base URL once it listens. */
function startFakeLlm() {
  const child = spawn(
    process.execPath,
    [join(root, "tooling", "fake-llm", "src", "cli.ts"), "--scenario", scenario, "--port", "0", "--quiet"],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    let url;
    lines.on("line", (text) => {
      const listening = /listening on (http:\/\/\S+)/.exec(text);
      if (listening && url === undefined) {
        url = listening[1];
        resolve({ child, url });
      }
    });
    child.once("exit", (code) => {
      if (url === undefined) reject(new Error(`fake-llm exited (${code}) before listening`));
    });
  });
}

function agent(args, options = {}) {
  const result = spawnSync(process.execPath, [agentBin, ...args], {
    stdio: options.capture ? ["ignore", "pipe", "inherit"] : "inherit",
    encoding: "utf8",
  });
  if (result.status !== 0) {
    throw new Error(`agent ${args.join(" ")} exited with ${result.status ?? result.signal}`);
  }
  return result.stdout;
}

const scratch = mkdtempSync(join(tmpdir(), "agent-kernel-demo-"));
const workspace = join(scratch, "workspace");
const stateDir = join(scratch, "state");
mkdirSync(workspace);
const { child: llm, url } = await startFakeLlm();
let failed = false;
try {
  const configPath = join(scratch, "agent-kernel.config.json5");
  writeFileSync(
    configPath,
    `// Written by tooling/scripts/demo.mjs: a custom OpenAI-compatible provider pointing at the scripted server.
{
  models: {
    providers: {
      scripted: {
        baseUrl: ${JSON.stringify(`${url}/v1`)},
        api: "openai-completions",
        models: [{ id: "demo-model", name: "Scripted demo model (tooling/fake-llm)", contextWindow: 32000, maxTokens: 4096 }],
      },
    },
  },
  agents: { defaults: { model: "scripted/demo-model", workspace: ${JSON.stringify(workspace)} } },
  tools: { profile: "coding" },
}
`,
  );
  const common = ["--config", configPath, "--state-dir", stateDir];
  banner("Agent Session Kernel demo — SCRIPTED MODEL, no real LLM");
  process.stdout.write(
    [
      `The model is tooling/fake-llm (${url}) replaying ${join("examples", "demo-scenario.json")} over the OpenAI wire format.`,
      `Scratch workspace: ${workspace}`,
      `State dir:         ${stateDir}`,
      'With a real key instead: export ANTHROPIC_API_KEY=sk-ant-...; agent -m "..." --model anthropic/claude-sonnet-4-5',
      "",
    ].join("\n"),
  );

  banner('agent -m "Write a short release plan to plan.md" --stream --verbose');
  agent([...common, "-m", "Write a short release plan to plan.md", "--stream", "--verbose"]);
  banner("the file the model wrote with the write tool");
  process.stdout.write(readFileSync(join(workspace, "plan.md"), "utf8"));

  const runs = JSON.parse(agent([...common, "runs", "list", "--json", "--limit", "1"], { capture: true }));
  const runId = runs[0]?.runId;
  if (typeof runId !== "string") throw new Error("the demo turn left no stored run");
  banner(`agent runs show ${runId}`);
  agent([...common, "runs", "show", runId]);
  banner(`agent replay ${runId}   (offline: a pi faux model replays the stored replies)`);
  agent([...common, "replay", runId]);
  banner("done");
} catch (error) {
  failed = true;
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
} finally {
  llm.kill("SIGTERM");
  if (process.env.AGENT_DEMO_KEEP === "1") process.stdout.write(`kept ${scratch}\n`);
  else rmSync(scratch, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
