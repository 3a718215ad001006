// What the sandbox costs an `exec` tool call, in the same run: the `exec` tool as the model calls it (the pi
// ToolDefinition of `execTool`, `execute(id, { command: "true" })`) over the ToolSandbox the executor prepares
// for a session with sandbox mode "off" (the host engine: the baseline) and for one with mode "all",
// workspaceAccess "none" (bwrap over the scope's own sandbox workspace in a temp state dir, no network).
// Target: the sandboxed call ≤ 2× the unsandboxed one (bwrap itself costs a few ms to start here).
//
// More cases run the raw engines (`createHostEngine().run` and `createBwrapEngine().run` of `true`, with the
// command, environment, mounts and limits the tool passes), so the table shows where the time goes: the engine's
// process start (bash on the host; for bwrap the launcher, bwrap's namespaces and mounts, the limits shell and
// bash, and a pids cgroup when the gateway runs as root) against the tool's own work (pi's bash tool: output
// accumulator, formatting, the output cap). Where the engine uses a pids cgroup (a root gateway with a writable
// pids controller), one more case runs bwrap without it (`pidsCgroup: false`: no process limit then), to show
// what the cgroup costs. The engine starts the next command's sandbox while a command runs (a standby), so a
// session's commands do not wait for bwrap; a reference case turns that off (`standby: false`) to show the
// cold start every first command of a session pays. All cases are interleaved round by round.
//
// Every case starts after the same untimed idle pause (`before`), as a model's tool call comes after a model
// response: a process start right after another is faster than one after a pause (the host engine's too), and
// a pids-cgroup bwrap run is about twice as fast within a few ms of the previous one (on this machine: ~10 ms
// back to back, ~20–25 ms after 20 ms or more of idle). Without the pause the figures depended on the order of
// the cases: whichever bwrap case came right after another ran in the fast mode.
//
// When bwrap cannot start here (not installed, no user namespaces) the sandboxed cases are left out with a
// warning and only the host cases run.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type BenchCase, defineSuite } from "@agent-kernel/bench";
import { parseConfig } from "@agent-kernel/config";
import { resolveSandboxContext, type SandboxMode } from "@agent-kernel/runtime-resolver";
import {
  createBwrapEngine,
  createHostEngine,
  type SandboxCommand,
  type SandboxEngine,
} from "@agent-kernel/sandbox";
import {
  DEFAULT_EXEC_MAX_OUTPUT_BYTES,
  DEFAULT_EXEC_TIMEOUT_SECONDS,
  execTool,
  prepareToolSandbox,
  type ToolSandbox,
} from "../src/tools/index.ts";

const COMMAND = "true";
/** The untimed pause before every case (see the header). */
const IDLE_MS = 30;
const root = mkdtempSync(join(tmpdir(), "exec-bench-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
const agentWorkspace = join(root, "workspace");
const stateDir = join(root, "state");
mkdirSync(agentWorkspace, { recursive: true });
mkdirSync(stateDir, { recursive: true });
const config = parseConfig({});

async function toolSandbox(mode: SandboxMode): Promise<ToolSandbox> {
  const sandbox = resolveSandboxContext({
    agent: { id: "main", sandbox: { mode, scope: "session", workspaceAccess: "none" } },
    sessionKey: "agent:main:bench-exec",
    agentWorkspace,
    stateDir,
  });
  return prepareToolSandbox({ config, sandbox });
}

let callCounter = 0;
/** The `exec` tool over a sandbox, called as pi calls it for the model; throws unless `true` succeeded. */
function execCall(sandbox: ToolSandbox): () => Promise<unknown> {
  const tool = execTool(sandbox, DEFAULT_EXEC_TIMEOUT_SECONDS, DEFAULT_EXEC_MAX_OUTPUT_BYTES);
  return () =>
    tool.execute(`call-${++callCounter}`, { command: COMMAND }, undefined, undefined, undefined as never);
}

/** A raw engine run of what the tool would pass it; throws unless `true` exited 0. */
function engineRun(engine: SandboxEngine, sandbox: ToolSandbox): () => Promise<unknown> {
  const command: SandboxCommand = {
    command: COMMAND,
    cwd: sandbox.cwd,
    env: sandbox.env,
    mounts: sandbox.mounts,
    network: sandbox.network,
    limits: sandbox.limits,
    onData: () => {},
  };
  return async () => {
    const result = await engine.run(command);
    if (result.exitCode !== 0)
      throw new Error(`${engine.name} engine: \`${COMMAND}\` exited ${result.exitCode}`);
    return result;
  };
}

const host = await toolSandbox("off");
let sandboxed: ToolSandbox | undefined;
try {
  sandboxed = await toolSandbox("all");
} catch (error) {
  console.warn(`exec bench: the sandboxed cases are left out: ${String(error)}`);
}

const BASELINE = "exec tool call `true`, unsandboxed (mode off: host engine)";
const measured: BenchCase[] = [
  { name: BASELINE, run: execCall(host) },
  ...(sandboxed === undefined
    ? []
    : [
        {
          name: 'exec tool call `true`, sandboxed (mode all, workspaceAccess "none": bwrap)',
          target: { minSpeedup: 0.5, label: "the sandbox adds ≤ 2× to an unsandboxed exec" },
          run: execCall(sandboxed),
        },
      ]),
  { name: "raw createHostEngine().run `true`", run: engineRun(createHostEngine(), host) },
  ...(sandboxed === undefined
    ? []
    : [
        { name: "raw createBwrapEngine().run `true`", run: engineRun(createBwrapEngine(), sandboxed) },
        {
          name: "raw createBwrapEngine({ standby: false }).run `true` (reference: a sandbox started for each command)",
          run: engineRun(createBwrapEngine({ standby: false }), sandboxed),
        },
      ]),
  ...(sandboxed?.status?.available === true && sandboxed.status.processLimit === "cgroup"
    ? [
        {
          name: "raw createBwrapEngine({ pidsCgroup: false }).run `true` (reference: no pids cgroup)",
          run: engineRun(createBwrapEngine({ pidsCgroup: false }), sandboxed),
        },
      ]
    : []),
];
const cases: BenchCase[] = measured.map((benchCase) => ({ ...benchCase, before: () => sleep(IDLE_MS) }));

export default defineSuite({
  name: "exec tool call of `true`: sandboxed (bwrap) against unsandboxed (host)",
  baseline: BASELINE,
  // Process starts vary with the machine's load: the median of many rounds (a round is ~0.2 s with the pauses).
  iterations: 60,
  warmup: 4,
  cases,
});
