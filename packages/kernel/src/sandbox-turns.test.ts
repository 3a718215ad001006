// Sandboxed turns end to end: the kernel over tooling/fake-llm (real HTTP, pi's real client), tools running in
// the real bubblewrap engine. Owns: the config matrix (mode × scope × workspaceAccess: where the model's
// `write` lands, what `read` and `exec` can see), the secret canary (no byte of a key in the state dir, the
// run records, the transcript or what the model was sent), a parallel `exec` racing the file tools through a
// swapped link and a FIFO (nothing reaches outside the view, nothing hangs), and a sandboxed session whose
// engine is missing (the turn fails before the model call; doctor reports it).
import {
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import { type FakeLlm, reply, startFakeLlm } from "@agent-kernel/fake-llm";
import { createBwrapEngine, SANDBOX_HOST_ID, sandboxWorkspaceDir } from "@agent-kernel/sandbox";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runDoctor } from "./admin.ts";
import { createKernel, type Kernel, type KernelOptions } from "./index.ts";

let llm: FakeLlm;

beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

interface Setup {
  readonly root: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
  readonly config: KernelConfig;
  readonly store: SqliteSessionStore;
  readonly kernel: Kernel;
}

const setups: Setup[] = [];
afterEach(async () => {
  for (const setup of setups.splice(0)) {
    await setup.store.close();
    rmSync(setup.root, { recursive: true, force: true });
  }
});

async function setUp(
  extra: Record<string, unknown>,
  env: Record<string, string> = {},
  kernelOptions: Partial<KernelOptions> = {},
): Promise<Setup> {
  const root = mkdtempSync(join(tmpdir(), "kernel-sandbox-"));
  const stateDir = join(root, "state");
  const workspaceDir = join(root, "workspace");
  mkdirSync(workspaceDir);
  writeFileSync(join(workspaceDir, "seed.txt"), "seed from the agent workspace\n");
  const agents = (extra.agents ?? {}) as { defaults?: Record<string, unknown> };
  const config = parseConfig(
    {
      ...extra,
      store: { stateDir },
      models: {
        providers: {
          local: {
            baseUrl: llm.baseUrlFor("openai"),
            api: "openai-completions",
            models: [{ id: "scripted-1", contextWindow: 32_000, maxTokens: 4096 }],
          },
        },
      },
      agents: {
        ...agents,
        defaults: { model: "local/scripted-1", workspace: workspaceDir, ...(agents.defaults ?? {}) },
      },
      tools: { profile: "coding", ...((extra.tools as object | undefined) ?? {}) },
    },
    { env },
  );
  const store = await openSessionStore({ stateDir });
  const kernel = createKernel({
    config,
    store,
    paths: { env: {}, homeDir: root, cwd: root },
    executorSettings: { transientRetryDelayMs: 0 },
    ...kernelOptions,
  });
  const setup = { root, stateDir, workspaceDir, config, store, kernel };
  setups.push(setup);
  return setup;
}

/** The tool results the model was sent back, in call order (from the request after the tool calls). */
function toolResults(requestIndex: number): string[] {
  const body = llm.requests[requestIndex]?.body as { messages?: { role: string; content: unknown }[] };
  return (body.messages ?? [])
    .filter((message) => message.role === "tool")
    .map((message) =>
      typeof message.content === "string" ? message.content : JSON.stringify(message.content),
    );
}

/** What an operator does for a workspace a root gateway mounts read-write: give it to an ordinary user. */
function giveToSandboxUser(dir: string): void {
  chownSync(dir, SANDBOX_HOST_ID, SANDBOX_HOST_ID);
  for (const name of readdirSync(dir)) chownSync(join(dir, name), SANDBOX_HOST_ID, SANDBOX_HOST_ID);
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

describe("the sandbox config matrix through executeTurn", () => {
  const modes = ["off", "non-main", "all"] as const;
  const scopes = ["session", "agent", "shared"] as const;
  const accesses = ["none", "ro", "rw"] as const;
  const cases = modes.flatMap((mode) =>
    scopes.flatMap((scope) => accesses.map((workspaceAccess) => ({ mode, scope, workspaceAccess }))),
  );

  it.each(cases)(
    "mode $mode, scope $scope, access $workspaceAccess",
    async ({ mode, scope, workspaceAccess }) => {
      const setup = await setUp({ agents: { defaults: { sandbox: { mode, scope, workspaceAccess } } } });
      // A root gateway's sandbox runs as its working directory's owner and refuses root's (see "a root
      // gateway" below): an operator who mounts the agent workspace read-write gives it to an ordinary user.
      if (workspaceAccess === "rw" && process.getuid?.() === 0) giveToSandboxUser(setup.workspaceDir);
      for (const sessionKey of ["other", "main"]) {
        llm.clearRequests();
        llm.enqueue(
          {
            type: "response",
            toolCalls: [
              {
                name: "write",
                arguments: { path: `out-${sessionKey}.txt`, content: "written by the model\n" },
              },
              { name: "read", arguments: { path: "seed.txt" } },
              { name: "exec", arguments: { command: "pwd; cat /agent/seed.txt 2>&1 || true" } },
              { name: "write", arguments: { path: "/agent/planted.txt", content: "x" } },
            ],
          },
          reply("done"),
        );
        const prepared = await setup.kernel.prepareSession({ sessionKey });
        const outcome = await setup.kernel.executeTurn(prepared, { prompt: `turn in ${sessionKey}` });
        expect(outcome.status, outcome.result.errorMessage).toBe("ok");
        const resolvedKey = prepared.runtimeContext.sessionKey.value;
        const sandboxed = mode === "all" || (mode === "non-main" && sessionKey !== "main");
        const scopeKey = scope === "session" ? resolvedKey : scope === "agent" ? "agent:main" : "shared";
        const sandboxDir = sandboxWorkspaceDir(join(setup.stateDir, "sandboxes"), scopeKey);
        const landsInAgentWorkspace = !sandboxed || workspaceAccess === "rw";
        const expectedDir = landsInAgentWorkspace ? setup.workspaceDir : sandboxDir;
        const [written, read, exec, planted] = toolResults(1);

        expect(readFileSync(join(expectedDir, `out-${sessionKey}.txt`), "utf8")).toBe(
          "written by the model\n",
        );
        if (!landsInAgentWorkspace) {
          expect(readdirSync(setup.workspaceDir)).not.toContain(`out-${sessionKey}.txt`);
          expect(sandboxDir.startsWith(join(setup.stateDir, "sandboxes"))).toBe(true);
        }
        expect(written).toMatch(/Successfully wrote/);
        // `read seed.txt` sees the agent workspace only where it is the working directory.
        if (landsInAgentWorkspace) expect(read).toContain("seed from the agent workspace");
        else expect(read).not.toContain("seed from the agent workspace");
        // `exec` runs where the sandbox says, and sees /agent only with read-only access.
        expect(exec).toContain(sandboxed ? "/workspace" : setup.workspaceDir);
        if (sandboxed && workspaceAccess === "ro") expect(exec).toContain("seed from the agent workspace");
        else expect(exec).not.toContain("seed from the agent workspace");
        // Nothing can be written into the read-only agent workspace (nor, unsandboxed, outside the workspace).
        expect(planted).not.toMatch(/Successfully wrote/);
        expect(readdirSync(setup.workspaceDir)).not.toContain("planted.txt");
        // The run record holds the decision.
        const sandboxEvent = outcome.events.find((event) => event.data.phase === "sandbox");
        if (sandboxed) {
          expect(sandboxEvent?.data).toMatchObject({ engine: "bwrap", network: false, cwd: "/workspace" });
        } else {
          expect(sandboxEvent).toBeUndefined();
        }
        expect(outcome.decisions.runtime.sandbox).toMatchObject({ sandboxed, mode, scope, workspaceAccess });
      }
    },
  );

  it("scope decides who shares a sandbox workspace", async () => {
    for (const scope of ["session", "agent", "shared"] as const) {
      const setup = await setUp({ agents: { defaults: { sandbox: { mode: "all", scope } } } });
      for (const sessionKey of ["alpha", "beta"]) {
        llm.clearRequests();
        llm.enqueue(
          {
            type: "response",
            toolCalls: [{ name: "exec", arguments: { command: `ls; touch from-${sessionKey}` } }],
          },
          reply("done"),
        );
        const prepared = await setup.kernel.prepareSession({ sessionKey });
        await setup.kernel.executeTurn(prepared, { prompt: `turn ${sessionKey}` });
        const [listing] = toolResults(1);
        if (sessionKey === "beta") {
          if (scope === "session") expect(listing).not.toContain("from-alpha");
          else expect(listing).toContain("from-alpha");
        }
      }
    }
  });
});

describe("a root gateway", () => {
  it.runIf(process.getuid?.() === 0)(
    "refuses to sandbox a root-owned agent workspace read-write, before the model is called",
    async () => {
      const setup = await setUp({
        agents: { defaults: { sandbox: { mode: "all", workspaceAccess: "rw" } } },
      });
      llm.clearRequests();
      const prepared = await setup.kernel.prepareSession({ sessionKey: "rw-root" });
      const outcome = await setup.kernel.executeTurn(prepared, { prompt: "ls" });
      expect(outcome.status).toBe("error");
      expect(outcome.result.reason).toBe("sandbox_unavailable");
      expect(outcome.result.errorMessage).toMatch(
        /belongs to root, so its commands would run as root on the host/,
      );
      expect(llm.requests).toHaveLength(0);
    },
  );
});

describe("a parallel exec racing the file tools", () => {
  it("cannot make write, edit or read reach outside the view through a swapped link or a FIFO; nothing hangs", async () => {
    // The security review's attack: pi runs a message's tool calls in parallel, so an `exec` swaps a
    // directory for a link to a host directory while the file tools work on a path through it, with a FIFO
    // to hold them. The file tools now run inside the sandbox: the link leads nowhere there.
    const setup = await setUp({
      agents: { defaults: { sandbox: { mode: "all", scope: "session", timeoutSeconds: 10 } } },
    });
    const outside = join(setup.root, "outside"); // stand-in for /etc/cron.d, /root/.ssh, the state dir
    mkdirSync(outside);
    writeFileSync(join(outside, "x"), "host file\n");
    // `d` flips between the directory, a link to the host directory and nothing; what a write's `mkdir -p`
    // made meanwhile is moved aside. Then it stays a link.
    const flip = [
      "i=0; end=$((SECONDS + 2))",
      "while [ $SECONDS -lt $end ]; do",
      `  i=$((i + 1)); mv -T d d.old && ln -s ${outside} d && rm d`,
      "  if [ -e d ] || [ -L d ]; then mv -T d junk-$i; fi",
      "  mv -T d.old d 2>/dev/null || { mv -T d junk-$i-b; mv -T d.old d; }",
      "done 2>/dev/null",
      `mv -T d d.old && ln -s ${outside} d && echo swapped`,
    ].join("\n");
    const edit = { name: "edit", arguments: { path: "d/x", edits: [{ oldText: "host", newText: "pwned" }] } };
    llm.clearRequests();
    llm.enqueue(
      {
        type: "response",
        toolCalls: [{ name: "exec", arguments: { command: "mkdir d && mkfifo d/x && echo ready" } }],
      },
      {
        type: "response",
        toolCalls: [
          { name: "exec", arguments: { command: flip } },
          { name: "write", arguments: { path: "d/x", content: "first\n" } },
          {
            name: "write",
            arguments: { path: "d/x", content: "written by the gateway, outside the sandbox\n" },
          },
          edit,
          { name: "read", arguments: { path: "d/x" } },
          ...Array.from({ length: 6 }, (_, index) => ({
            name: "write",
            arguments: { path: `d/planted-${index}`, content: "* * * * * root id > /tmp/owned\n" },
          })),
        ],
      },
      {
        // `d` is a link to the host directory now.
        type: "response",
        toolCalls: [
          { name: "write", arguments: { path: "d/x", content: "through the link\n" } },
          edit,
          { name: "read", arguments: { path: "d/x" } },
          { name: "exec", arguments: { command: "ls -l d; cat d/x 2>&1; true" } },
        ],
      },
      reply("done"),
    );
    const started = performance.now();
    const prepared = await setup.kernel.prepareSession({ sessionKey: "racer" });
    const outcome = await setup.kernel.executeTurn(prepared, { prompt: "race" });
    expect(outcome.status, outcome.result.errorMessage).toBe("ok");
    // Nothing waited for the FIFO's other end: each call ended in well under the 10 s wall time.
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(readdirSync(outside)).toEqual(["x"]);
    expect(readFileSync(join(outside, "x"), "utf8")).toBe("host file\n");

    const racing = toolResults(2).slice(1);
    expect(racing[0]).toContain("swapped");
    // Each call either worked inside the sandbox (in a `d` that was a directory then) or was refused: the
    // FIFO as what it is, a path through the link as missing (the host directory does not exist inside).
    for (const result of racing.slice(1)) {
      expect(result).toMatch(
        // "not a regular file": the FIFO (or the directory `d` was just then) seen by the check that ran first; a
        // read may also find what a write of this batch put in a fresh `d` the loop had not moved back yet.
        /^(Successfully (wrote|replaced)|first\n|written by the gateway|.*(named pipe|not a regular file|does not exist|ENOENT|No such file|File exists))/,
      );
      expect(result).not.toContain("host file");
    }
    const afterSwap = toolResults(3).slice(-4);
    expect(afterSwap.slice(0, 3).join("\n")).not.toMatch(/Successfully|host file/);
    expect(afterSwap[3]).toContain("No such file");
    // What was written is in the sandbox workspace; the FIFO itself got nothing (no writer ever opened it).
    const sandboxDir = sandboxWorkspaceDir(
      join(setup.stateDir, "sandboxes"),
      prepared.runtimeContext.sessionKey.value,
    );
    expect(statSync(join(sandboxDir, "d.old", "x")).isFIFO()).toBe(true);
    const planted = filesUnder(sandboxDir).filter((file) => file.includes("planted-"));
    expect(planted).toHaveLength(
      racing.filter((result) => /wrote to \/workspace\/d\/planted/.test(result)).length,
    );
  });
});

describe("the secret canary", () => {
  const CANARY = `7431986520:AAH-canary-${process.pid}-k3y-Zq9xWv2Lr8Tn5Pm`;

  it.each([
    ["sandboxed", "all"],
    ["unsandboxed", "off"],
  ] as const)("no byte of the key is stored or sent when a %s model hunts for it", async (_label, mode) => {
    const previous = process.env.TELEGRAM_BOT_TOKEN;
    process.env.TELEGRAM_BOT_TOKEN = CANARY;
    try {
      const setup = await setUp(
        {
          channels: { telegram: { botToken: "${TELEGRAM_BOT_TOKEN}" } },
          // Even an explicit allowlist entry does not pass a variable whose value the config holds.
          tools: { exec: { envAllow: ["TELEGRAM_BOT_TOKEN"] } },
          agents: { defaults: { sandbox: { mode } } },
        },
        { TELEGRAM_BOT_TOKEN: CANARY },
      );
      // The config file as an operator would keep it, with the key written in it, outside the state dir.
      const configFile = join(setup.root, "config.json5");
      writeFileSync(configFile, `{ channels: { telegram: { botToken: "${CANARY}" } } }\n`);
      const hunting =
        mode === "all"
          ? `env; tr '\\0' '\\n' < /proc/self/environ; cat ${configFile}; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; grep -rs AAH ${setup.stateDir} /workspace /tmp; true`
          : "env; tr '\\0' '\\n' < /proc/self/environ; true";
      llm.clearRequests();
      llm.enqueue(
        {
          type: "response",
          toolCalls: [
            { name: "exec", arguments: { command: hunting } },
            { name: "read", arguments: { path: "/proc/self/environ" } },
            { name: "read", arguments: { path: configFile } },
          ],
        },
        reply("I found nothing."),
      );
      const prepared = await setup.kernel.prepareSession({ sessionKey: "hunt" });
      const outcome = await setup.kernel.executeTurn(prepared, { prompt: "find the bot token" });
      expect(outcome.status).toBe("ok");
      const [exec] = toolResults(1);
      expect(exec).toContain("PATH=");
      const sent = JSON.stringify(llm.requests.map((request) => request.body));
      expect(sent).not.toContain(CANARY);
      expect(JSON.stringify(outcome)).not.toContain(CANARY);
      await setup.store.close();
      setups.splice(setups.indexOf(setup), 1);
      const leaking = filesUnder(setup.stateDir).filter((file) => readFileSync(file).includes(CANARY));
      expect(leaking).toEqual([]);
      rmSync(setup.root, { recursive: true, force: true });
    } finally {
      if (previous === undefined) delete process.env.TELEGRAM_BOT_TOKEN;
      else process.env.TELEGRAM_BOT_TOKEN = previous;
    }
  });
});

describe("a sandboxed session whose engine is missing", () => {
  it("fails before the model is called, stores no message, and doctor reports it", async () => {
    const missing = createBwrapEngine({ bwrapPath: join(tmpdir(), "no-such-dir", "bwrap") });
    const setup = await setUp(
      { agents: { defaults: { sandbox: { mode: "all" } } } },
      {},
      {
        executorSettings: { transientRetryDelayMs: 0, sandboxEngines: { bwrap: missing } },
      },
    );
    llm.clearRequests();
    const prepared = await setup.kernel.prepareSession({ sessionKey: "needs-sandbox" });
    const outcome = await setup.kernel.executeTurn(prepared, { prompt: "run ls" });
    expect(outcome.status).toBe("error");
    expect(outcome.result.reason).toBe("sandbox_unavailable");
    expect(outcome.result.errorMessage).toMatch(/sandbox engine "bwrap" is unavailable: .*does not exist/);
    expect(outcome.result.errorMessage).toMatch(/apt-get install bubblewrap/);
    expect(llm.requests).toHaveLength(0);
    const run = await setup.store.runs.get(outcome.runId);
    expect(run).toMatchObject({ status: "failed", errorReason: "sandbox_unavailable" });
    const transcript = prepared.transcript;
    await setup.store.loadTranscript(transcript.agentId, transcript.sessionId);
    const messages = setup.store.hasTranscript(transcript.agentId, transcript.sessionId)
      ? setup.store
          .openTranscript(transcript.agentId, transcript.sessionId)
          .getBranch()
          .filter((entry) => entry.type === "message")
      : [];
    expect(messages).toEqual([]);

    const report = await runDoctor(setup.store, setup.config, { bwrap: missing });
    expect(report.problems.map((problem) => `${problem.where}: ${problem.problem}`).join("\n")).toMatch(
      /agent main \(sandbox.mode "all"\): its sandbox cannot start.*apt-get install bubblewrap/,
    );
    const healthy = await runDoctor(setup.store, setup.config);
    expect(healthy.security.sandboxes[0]?.status.available).toBe(true);
    expect(healthy.problems).toEqual([]);
  });
});
