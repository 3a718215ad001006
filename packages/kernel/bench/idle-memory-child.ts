// The measuring side of idle-memory.bench.ts, one measurement per process (`node --expose-gc
// --conditions=@agent-kernel/source idle-memory-child.ts <kernel|pi|pi-short>`): prints the heap per idle
// session in KiB as JSON. A process of its own per figure: in one process, what an earlier case compiled or
// cached (bytecode V8 flushes later, the process-wide read cache) moves the next case's heap by megabytes.
// Does not own: the suite, its cases and target (idle-memory.bench.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyToolPolicy, buildDefaultTools, buildKernelSystemPrompt } from "@agent-kernel/turn-pipeline";
import { fauxAssistantMessage, InMemoryCredentialStore } from "@earendil-works/pi-ai";
import { createKernelHarness, type KernelHarness } from "../test/harness.ts";

const SESSIONS = 150;
const TURNS = 2;
/** Sessions × turns run first, untimed: 256 ended runs fill the run registry's recent list. */
const FILL_SESSIONS = 64;
const FILL_TURNS = 4;

// pi's coding-agent package is a dependency of turn-pipeline, not of the kernel: loaded from there (its own
// types are not visible here, hence the few it needs spelled out below).
const piCodingAgent = new URL(
  "node_modules/@earendil-works/pi-coding-agent/dist/index.js",
  new URL(".", import.meta.resolve("@agent-kernel/turn-pipeline/package.json")),
);

interface PiSession {
  prompt(text: string, options: { expandPromptTemplates: boolean }): Promise<void>;
  dispose(): void;
}

interface PiCodingAgent {
  createAgentSession(options: Record<string, unknown>): Promise<{ session: PiSession }>;
  createExtensionRuntime(): unknown;
  ModelRuntime: {
    create(options: Record<string, unknown>): Promise<{
      registerNativeProvider(provider: unknown): void;
      refresh(options: Record<string, unknown>): Promise<void>;
    }>;
  };
  SessionManager: { inMemory(cwd: string): unknown };
  SettingsManager: { inMemory(settings: Record<string, unknown>): unknown };
}

const pi = (await import(piCodingAgent.href)) as PiCodingAgent;

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("idle-memory bench: run it with --expose-gc (the bench runner does)");
  gc();
  gc();
}

/** Heap used once the last turns' timers ran and a full GC collected what nothing holds. */
async function settledHeap(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 100));
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

const perSessionKiB = (before: number, after: number) => (after - before) / SESSIONS / 1024;

async function kernelHarness(): Promise<KernelHarness> {
  const h = await createKernelHarness({ config: { agents: { defaults: { skipBootstrap: true } } } });
  h.model.otherwise(() => fauxAssistantMessage("A short answer."));
  return h;
}

async function kernelSessions(h: KernelHarness, prefix: string, count: number, turns: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      for (let turn = 0; turn < turns; turn++) {
        const prepared = await h.kernel.prepareSession({ sessionKey: `${prefix}-${index}` });
        const outcome = await h.kernel.executeTurn(prepared, { prompt: `turn ${turn}`, timeoutMs: 0 });
        if (outcome.status !== "ok") throw new Error(`kernel turn failed: ${outcome.result.errorMessage}`);
      }
    }),
  );
}

interface PiState {
  readonly h: KernelHarness;
  readonly cwd: string;
  readonly create: (index: number) => Promise<PiSession>;
  readonly sessions: PiSession[];
  readonly heapBefore: number;
}

/** pi's AgentSessions as the kernel's sessions get them: same tools, same model, the prompt `promptFor` gives. */
async function piState(
  promptFor: (sessionKey: string, toolNames: readonly string[]) => string,
): Promise<PiState> {
  const h = await kernelHarness();
  const cwd = mkdtempSync(join(tmpdir(), "idle-pi-"));
  const runtime = await pi.ModelRuntime.create({
    credentials: new InMemoryCredentialStore(),
    modelsPath: null,
    refreshOnCreate: false,
  });
  runtime.registerNativeProvider(h.faux.provider);
  await runtime.refresh({ allowNetwork: false, providers: ["faux"] });
  const prepared = await h.kernel.prepareSession({ sessionKey: "tools" });
  const tools = applyToolPolicy(
    buildDefaultTools({ workspaceDir: cwd, agentId: "main", store: h.store }),
    prepared.toolPolicy,
  );
  const toolNames = tools.map((tool) => tool.name);
  const create = async (index: number): Promise<PiSession> => {
    const systemPrompt = promptFor(`agent:main:idle-${index}`, toolNames);
    const { session } = await pi.createAgentSession({
      cwd,
      agentDir: join(cwd, "unused"),
      modelRuntime: runtime,
      model: h.faux.getModel("faux-1"),
      thinkingLevel: "off",
      settingsManager: pi.SettingsManager.inMemory({
        retry: { enabled: false },
        compaction: { enabled: false },
        cacheWarming: "off",
      }),
      sessionManager: pi.SessionManager.inMemory(cwd),
      resourceLoader: {
        getExtensions: () => ({ extensions: [], errors: [], runtime: pi.createExtensionRuntime() }),
        getSkills: () => ({ skills: [], diagnostics: [] }),
        getPrompts: () => ({ prompts: [], diagnostics: [] }),
        getThemes: () => ({ themes: [], diagnostics: [] }),
        getAgentsFiles: () => ({ agentsFiles: [] }),
        getSystemPrompt: () => systemPrompt,
        getSystemPromptSource: () => undefined,
        getAppendSystemPrompt: () => [],
        getAppendSystemPromptSources: () => [],
        extendResources: () => {},
        reload: async () => {},
      },
      customTools: [...tools],
      tools: toolNames,
    });
    for (let turn = 0; turn < TURNS; turn++)
      await session.prompt(`turn ${turn}`, { expandPromptTemplates: false });
    return session;
  };
  // The first sessions load and compile what every later one shares: not charged to the measured ones.
  const warmUp = await Promise.all(Array.from({ length: 8 }, (_, index) => create(-1 - index)));
  for (const session of warmUp) session.dispose();
  return { h, cwd, create, sessions: [], heapBefore: await settledHeap() };
}

/** The kernel's prompt for a session, as the executor builds it (the same text size in both figures). */
function kernelPrompt(sessionKey: string, toolNames: readonly string[]): string {
  return buildKernelSystemPrompt({
    mode: "full",
    workspaceDir: "/tmp/workspace",
    toolNames,
    sessionKey,
    agentId: "main",
    provider: "faux",
    model: "faux-1",
    thinkingLevel: "off",
  });
}

async function measurePi(
  promptFor: (sessionKey: string, toolNames: readonly string[]) => string,
): Promise<number> {
  const state = await piState(promptFor);
  for (let index = 0; index < SESSIONS; index++) state.sessions.push(await state.create(index));
  const figure = perSessionKiB(state.heapBefore, await settledHeap());
  for (const session of state.sessions) session.dispose();
  await state.h.close();
  rmSync(state.cwd, { recursive: true, force: true });
  return figure;
}

async function measureKernel(): Promise<number> {
  const h = await kernelHarness();
  await kernelSessions(h, "fill", FILL_SESSIONS, FILL_TURNS);
  const heapBefore = await settledHeap();
  await kernelSessions(h, "idle", SESSIONS, TURNS);
  const figure = perSessionKiB(heapBefore, await settledHeap());
  await h.close();
  return figure;
}

const mode = process.argv[2];
const kib =
  mode === "kernel"
    ? await measureKernel()
    : mode === "pi"
      ? await measurePi(kernelPrompt)
      : mode === "pi-short"
        ? await measurePi(() => "You are a personal assistant running inside an agent gateway.")
        : undefined;
if (kib === undefined) {
  console.error(`idle-memory-child: expected kernel, pi or pi-short, got ${mode}`);
  process.exit(2);
}
console.log(JSON.stringify({ kib }));
