// exec's background mode and the process tool with real processes: a command that outlives yieldMs keeps
// running and is polled, written to and killed; the limits (running count, kept output); sessions do not see
// each other's commands; a session's end and the gateway's stop kill what runs.
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@agent-kernel/config";
import { createBwrapEngine, type SandboxEngine } from "@agent-kernel/sandbox";
import { resolveToolPolicy } from "@agent-kernel/tool-policy";
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDefaultTools, DefaultToolCache, type DefaultToolsOptions } from "./default-tools.ts";
import { killAllBackgroundProcesses, killSessionProcesses, noteSessionTurn } from "./process-registry.ts";
import type { ToolSandbox } from "./tool-sandbox.ts";

let ws: string;
let session = 0;

beforeEach(() => {
  ws = mkdtempSync(join(tmpdir(), "process-tool-"));
  session++;
});
afterEach(() => {
  killAllBackgroundProcesses("test over");
  rmSync(ws, { recursive: true, force: true });
});

function toolsFor(extra: Partial<DefaultToolsOptions> = {}): Map<string, ToolDefinition> {
  const list = buildDefaultTools({
    workspaceDir: ws,
    agentId: "a",
    store: {} as never,
    sessionId: `s${session}`,
    execTimeoutSeconds: 60,
    ...extra,
  });
  return new Map(list.map((tool) => [tool.name, tool]));
}

async function call(tools: Map<string, ToolDefinition>, name: string, params: object) {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const result = await tool.execute("c", params as never, undefined, undefined, undefined as never);
  return {
    text: result.content.map((block) => (block.type === "text" ? block.text : "")).join(""),
    details: result.details as Record<string, unknown>,
  };
}

/** Polls until the process prints `pattern` (a loaded machine may be slow to start it). */
async function pollUntil(
  tools: Map<string, ToolDefinition>,
  sessionId: string,
  pattern: RegExp,
): Promise<string> {
  let seen = "";
  for (let attempt = 0; attempt < 40; attempt++) {
    seen += (await call(tools, "process", { action: "poll", sessionId, timeout: 1000 })).text;
    if (pattern.test(seen)) return seen;
  }
  throw new Error(`never saw ${pattern} in: ${seen}`);
}

/** Waits until the ticking command has written its file. */
async function waitForTicks(file: string): Promise<void> {
  for (let attempt = 0; attempt < 200 && !existsSync(file); attempt++) await sleep(50);
  expect(existsSync(file)).toBe(true);
}

/** The ticking command wrote nothing for a while: it is dead. */
async function expectStopped(file: string): Promise<void> {
  await sleep(500);
  const before = readFileSync(file, "utf8");
  await sleep(500);
  expect(readFileSync(file, "utf8")).toBe(before);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("exec's background mode", () => {
  it("a command that ends within yieldMs answers like the foreground; one that outlives it returns a sessionId", async () => {
    const tools = toolsFor();
    expect((await call(tools, "exec", { command: "echo quick", yieldMs: 10_000 })).text).toBe("quick\n");
    await expect(call(tools, "exec", { command: "echo bad; exit 3", yieldMs: 10_000 })).rejects.toThrow(
      /bad\n\n\nProcess proc_\w+ exited with code 3\./,
    );
    const started = await call(tools, "exec", { command: "echo first; sleep 30", yieldMs: 200 });
    expect(started.details.status).toBe("running");
    const id = String(started.details.sessionId);
    expect(started.text).toContain(`sessionId ${id}`);
    const listed = await call(tools, "process", { action: "list" });
    expect(listed.text).toMatch(new RegExp(`^${id}\\trunning\\t\\d+s\\techo first; sleep 30$`));
    const killed = await call(tools, "process", { action: "kill", sessionId: id });
    expect(killed.text).toBe(`Process ${id} was killed (killed by the process tool).`);
    const log = await call(tools, "process", { action: "log", sessionId: id });
    expect(log.text).toContain("first");
    await call(tools, "process", { action: "clear", sessionId: id });
    expect((await call(tools, "process", { action: "list" })).text).toBe("(no background processes)");
  });

  it("background: true returns at once; poll gives new output only, write feeds stdin, eof ends it", async () => {
    const tools = toolsFor();
    const started = await call(tools, "exec", {
      command: 'echo ready; while read line; do echo "got $line"; done; echo bye',
      background: true,
    });
    const id = String(started.details.sessionId);
    expect(await pollUntil(tools, id, /ready/)).toContain(`Process ${id} is still running.`);
    await call(tools, "process", { action: "write", sessionId: id, data: "one\n" });
    const first = await pollUntil(tools, id, /got one/);
    expect(first).not.toContain("ready");
    const closed = await call(tools, "process", { action: "write", sessionId: id, data: "two\n", eof: true });
    expect(closed.text).toBe(`wrote 4 bytes to ${id} and closed its input`);
    const last = await pollUntil(tools, id, /exited with code 0/);
    // Output may arrive over several polls: in order, each piece once.
    expect(last).toMatch(/got two\n[\s\S]*bye\n/);
    expect(last.match(/got two/g)).toHaveLength(1);
    await expect(call(tools, "process", { action: "write", sessionId: id, data: "x" })).rejects.toThrow(
      /is not running \(exited\)/,
    );
  });

  it("keeps only the newest output, counts what was dropped, and pages the log by lines", async () => {
    const tools = toolsFor({ background: { limits: { maxOutputChars: 1000 } } });
    const started = await call(tools, "exec", { command: "seq 1 2000", background: true });
    const id = String(started.details.sessionId);
    await pollUntil(tools, id, /exited with code 0/);
    const log = await call(tools, "process", { action: "log", sessionId: id, offset: 0, limit: 2 });
    expect(log.text).toMatch(
      /^\[the first \d+ characters were dropped: the log keeps the newest 1000\]\n\[lines 0-1 of \d+\]/,
    );
    const tail = await call(tools, "process", { action: "log", sessionId: id });
    expect(tail.text).toContain("1999\n2000\nProcess");
  });

  it("refuses a start past the running limit, and sessions see only their own commands", async () => {
    const tools = toolsFor({ background: { limits: { maxRunning: 2 } } });
    for (let index = 0; index < 2; index++)
      await call(tools, "exec", { command: "sleep 30", background: true });
    await expect(call(tools, "exec", { command: "sleep 30", background: true })).rejects.toThrow(
      /already runs 2 background processes \(the limit\)/,
    );
    const other = toolsFor({ sessionId: `other-${session}` });
    expect((await call(other, "process", { action: "list" })).text).toBe("(no background processes)");
    const [id] = (await call(tools, "process", { action: "list" })).text.split("\t");
    await expect(call(other, "process", { action: "poll", sessionId: id })).rejects.toThrow(
      /no background process/,
    );
  });

  it("the session's end and the gateway's stop kill what runs, and forget it", async () => {
    const ticking = "while true; do date +%s%N > tick-$TAG; sleep 0.05; done";
    const tools = toolsFor();
    await call(tools, "exec", { command: ticking.replaceAll("$TAG", "a"), background: true });
    await waitForTicks(join(ws, "tick-a"));
    expect(killSessionProcesses("a", `s${session}`)).toBe(1);
    await expectStopped(join(ws, "tick-a"));
    // Forgotten with its session: the same tools now see an empty scope.
    expect((await call(tools, "process", { action: "list" })).text).toBe("(no background processes)");
    await call(tools, "exec", { command: ticking.replaceAll("$TAG", "b"), background: true });
    await waitForTicks(join(ws, "tick-b"));
    expect(killAllBackgroundProcesses()).toBe(1);
    await expectStopped(join(ws, "tick-b"));
    expect((await call(toolsFor(), "process", { action: "list" })).text).toBe("(no background processes)");
  });

  it("a session key running a turn with a new session id (a reset) ends the old session's commands", async () => {
    expect(noteSessionTurn("a", `key-${session}`, `s${session}`)).toBe(0);
    const tools = toolsFor();
    await call(tools, "exec", {
      command: "while true; do date +%s%N > tick; sleep 0.05; done",
      background: true,
    });
    await waitForTicks(join(ws, "tick"));
    expect(noteSessionTurn("a", `key-${session}`, `s${session}`)).toBe(0);
    expect(noteSessionTurn("a", `key-${session}`, `reset-${session}`)).toBe(1);
    await expectStopped(join(ws, "tick"));
  });

  it("a turn whose policy denies process gets a foreground-only exec", async () => {
    const policy = resolveToolPolicy(parseConfig({ tools: { profile: "full", deny: ["process"] } }), {
      agentId: "a",
    });
    const tools = new Map(
      new DefaultToolCache()
        .toolsFor({ workspaceDir: ws, agentId: "a", store: {} as never, sessionId: `s${session}` }, policy)
        .map((tool) => [tool.name, tool]),
    );
    expect(tools.has("process")).toBe(false);
    // background is ignored: the command runs to its end.
    expect((await call(tools, "exec", { command: "sleep 0.2; echo done", background: true })).text).toBe(
      "done\n",
    );
  });
});

const engine: SandboxEngine = createBwrapEngine();
let bwrapProblem: string | undefined;
beforeAll(async () => {
  const status = await engine.probe();
  bwrapProblem = status.available ? undefined : status.problem;
});

describe("exec's background mode in a sandboxed session", () => {
  beforeEach((context) => {
    if (bwrapProblem !== undefined) context.skip(`bwrap cannot run here: ${bwrapProblem}`);
    // The bwrap engine refuses a root-owned workspace: a root gateway gives it to the sandbox's user.
    if (process.getuid?.() === 0) chownSync(ws, 65534, 65534);
  });

  it("runs the background command inside the sandbox, under its wall time, with its input open", async () => {
    const sandbox: ToolSandbox = {
      sandboxed: true,
      engine,
      cwd: "/workspace",
      mounts: [{ path: "/workspace", hostPath: ws, writable: true }],
      network: false,
      limits: {
        timeoutMs: 4_000,
        maxOutputBytes: 64 * 1024,
        memoryBytes: 512 * 1024 * 1024,
        maxProcesses: 64,
        maxFileBytes: 64 * 1024 * 1024,
        tmpBytes: 16 * 1024 * 1024,
      },
      env: {},
    };
    const tools = toolsFor({ sandbox });
    const started = await call(tools, "exec", {
      command: 'pwd; id -un; read line; echo "got $line"; sleep 60',
      background: true,
    });
    const id = String(started.details.sessionId);
    await call(tools, "process", { action: "write", sessionId: id, data: "hello\n" });
    const seen = await pollUntil(tools, id, /got hello/);
    expect(seen).toMatch(/\/workspace\n[\s\S]*sandbox\n[\s\S]*got hello/);
    // The sandbox's wall time (4 s) ends the `sleep 60`, whatever exec's own timeout says.
    expect(await pollUntil(tools, id, /killed at its time limit/)).toBeTruthy();
  });
});
