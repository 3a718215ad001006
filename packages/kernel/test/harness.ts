// Test and benchmark harness for the kernel: a temp state dir with a real SQLite store and workspace, a config
// whose models are pi's faux provider (registered natively, so turns run through the real executor and pi
// without a network), and a kernel over them. Also a scripted faux model: each call is answered by the
// handler registered for the turn's prompt, so concurrent turns of many sessions get their own answers, and
// gates that hold a model call until a test releases it.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KernelConfig, parseConfig } from "@agent-kernel/config";
import { openSessionStore, type SqliteSessionStore } from "@agent-kernel/session-store";
import {
  type AssistantMessage,
  type FauxProviderHandle,
  type FauxResponseFactory,
  fauxAssistantMessage,
  fauxProvider,
  type SimpleStreamOptions,
} from "@earendil-works/pi-ai";
import { createKernel, type Kernel, type KernelOptions } from "../src/index.ts";

export interface KernelHarness {
  readonly root: string;
  readonly stateDir: string;
  readonly workspaceDir: string;
  readonly config: KernelConfig;
  readonly store: SqliteSessionStore;
  readonly faux: FauxProviderHandle;
  readonly model: ScriptedModel;
  readonly kernel: Kernel;
  /** A config with the same settings plus `extra` (for invalidation tests). */
  configWith(extra: Record<string, unknown>): KernelConfig;
  close(): Promise<void>;
}

type Handler = (options: SimpleStreamOptions | undefined) => AssistantMessage | Promise<AssistantMessage>;

/** Answers each model call by the text of the turn's user message (the context's last). */
export class ScriptedModel {
  readonly #handlers = new Map<string, Handler[]>();
  /** Prompts in the order their model calls started. */
  readonly calls: string[] = [];
  #fallback: Handler = () => fauxAssistantMessage("ok");

  /** The next call for `prompt` is answered by `handler` (queued per prompt). */
  on(prompt: string, handler: Handler): this {
    const list = this.#handlers.get(prompt) ?? [];
    list.push(handler);
    this.#handlers.set(prompt, list);
    return this;
  }

  otherwise(handler: Handler): this {
    this.#fallback = handler;
    return this;
  }

  readonly factory: FauxResponseFactory = (context, options) => {
    const user = context.messages.findLast((message) => message.role === "user");
    const content = user?.content;
    const prompt =
      typeof content === "string"
        ? content
        : (content ?? []).map((block) => (block.type === "text" ? block.text : "")).join("");
    this.calls.push(prompt);
    const handler = this.#handlers.get(prompt)?.shift() ?? this.#fallback;
    return handler(options);
  };
}

/** A model call held until `release()`, or until the request's signal aborts (then pi reports it aborted). */
export class Gate {
  readonly #started: Promise<void>;
  #markStarted!: () => void;
  #release!: () => void;
  readonly #released: Promise<void>;
  readonly answer: string;
  startedCount = 0;

  constructor(answer = "done") {
    this.answer = answer;
    this.#started = new Promise((resolve) => {
      this.#markStarted = resolve;
    });
    this.#released = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  /** Resolves once the model call began. */
  get started(): Promise<void> {
    return this.#started;
  }

  release(): void {
    this.#release();
  }

  readonly handler: Handler = async (options) => {
    this.startedCount += 1;
    this.#markStarted();
    const signal = options?.signal;
    await new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      signal?.addEventListener("abort", () => resolve(), { once: true });
      void this.#released.then(resolve);
    });
    return fauxAssistantMessage(this.answer);
  };
}

export function fauxConfigObject(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const agents = (extra.agents ?? {}) as { defaults?: Record<string, unknown> };
  return {
    ...extra,
    models: {
      providers: {
        faux: {
          baseUrl: "http://127.0.0.1:9/v1",
          api: "openai-completions",
          models: [
            { id: "faux-1", reasoning: true, contextWindow: 100_000, maxTokens: 8192 },
            { id: "faux-2", reasoning: true, contextWindow: 50_000, maxTokens: 8192 },
          ],
        },
      },
    },
    tools: { profile: "coding", ...((extra.tools as object | undefined) ?? {}) },
    agents: { ...agents, defaults: { model: "faux/faux-1", ...(agents.defaults ?? {}) } },
  };
}

export interface HarnessOptions {
  readonly config?: Record<string, unknown>;
  readonly kernel?: Partial<KernelOptions>;
}

export async function createKernelHarness(options: HarnessOptions = {}): Promise<KernelHarness> {
  const root = mkdtempSync(join(tmpdir(), "kernel-"));
  const stateDir = join(root, "state");
  const workspaceDir = join(root, "workspace");
  mkdirSync(workspaceDir, { recursive: true });
  const build = (extra: Record<string, unknown>) => {
    const object = fauxConfigObject({ ...(options.config ?? {}), ...extra });
    const agents = object.agents as { defaults: Record<string, unknown> };
    return parseConfig(
      {
        ...object,
        store: { stateDir },
        agents: { ...agents, defaults: { ...agents.defaults, workspace: workspaceDir } },
      },
      { env: {} },
    );
  };
  const config = build({});
  const store = await openSessionStore({ stateDir });
  const faux = fauxProvider({
    provider: "faux",
    models: [
      { id: "faux-1", reasoning: true, contextWindow: 100_000, maxTokens: 8192 },
      { id: "faux-2", reasoning: true, contextWindow: 50_000, maxTokens: 8192 },
    ],
    tokenSize: { min: 64, max: 64 },
  });
  const model = new ScriptedModel();
  // The faux provider consumes one response per call; a large supply of the dispatcher never runs out.
  faux.setResponses(Array.from({ length: 100_000 }, () => model.factory));
  const kernel = createKernel({
    config,
    store,
    nativeProviders: [faux.provider],
    paths: { env: {}, homeDir: root, cwd: root },
    executorSettings: { transientRetryDelayMs: 0 },
    ...(options.kernel ?? {}),
  });
  return {
    root,
    stateDir,
    workspaceDir,
    config,
    store,
    faux,
    model,
    kernel,
    configWith: build,
    async close() {
      await store.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
