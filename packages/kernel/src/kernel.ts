// The kernel: the one path from an entry point to a turn. Owns: `prepareSession` with its prewarm cache,
// `executeTurn` — a run registered, queued in its session lane and under the global cap, the executor called
// with the prepared context (it creates the run record), the decisions made for the run stored as its event 0,
// the session metadata updated once, the outcome normalised and handed to the delivery sink — plus aborting, waiting and the one
// event stream (run-registry.ts). Does not own: the rules of resolution (prepare.ts and the packages below),
// the turn itself (turn-pipeline's executor), or delivery (entry points, through `DeliverySink`).
import { randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { defaultMaxConcurrent, type KernelConfig } from "@agent-kernel/config";
import type { SessionRecord, SessionStore } from "@agent-kernel/session-store";
import { formatToolDecision, resolveToolPolicy } from "@agent-kernel/tool-policy";
import {
  executeTurn as executeTurnInPi,
  ModelRuntimePool,
  type ReplyPayload,
  type TurnCallbacks,
  type TurnContext,
  type TurnRequest,
  type TurnResult,
} from "@agent-kernel/turn-pipeline";
import type { Provider } from "@earendil-works/pi-ai";
import { LaneScheduler, type LaneStats, LaneWaitAbortedError } from "./lanes.ts";
import {
  configFingerprint,
  hashOf,
  inputFingerprint,
  isStoredSessionStale,
  type PrepareDeps,
  readSessionSnapshot,
  resolvePreparedSession,
  sessionFingerprint,
} from "./prepare.ts";
import { type ActiveRun, type EventListener, RunRegistry } from "./run-registry.ts";
import { updateSessionAfterRun } from "./session-update.ts";
import type {
  AgentEventPayload,
  PreparedSession,
  RunDecisions,
  SessionKernelInput,
  TurnInput,
  TurnOutcome,
} from "./types.ts";
import { validateSessionInput, validateTurnInput } from "./validate.ts";

/** The turn executor's signature (turn-pipeline's `executeTurn`). */
export type TurnExecutor = (context: TurnContext, request: TurnRequest) => Promise<TurnResult>;

/** Executor settings every turn of this kernel gets (tests shorten the retry delay). */
export type ExecutorSettings = Partial<
  Pick<TurnContext, "stallTimeoutMs" | "transientRetryDelayMs" | "rateLimitRetries" | "exec">
>;

export interface KernelOptions extends PrepareDeps {
  /** Shared pi model runtimes for `config`; default a new pool. */
  readonly models?: ModelRuntimePool | undefined;
  /** Providers every new pool registers natively (pi's faux provider in tests and benchmarks). */
  readonly nativeProviders?: readonly Provider[] | undefined;
  /** Default turn-pipeline's `executeTurn`. A seam for tests of the kernel's own behaviour. */
  readonly executor?: TurnExecutor | undefined;
  /** Turns at once across sessions; default `agents.defaults.maxConcurrent`, else max(8, 4 × CPUs). */
  readonly maxConcurrent?: number | undefined;
  /** Reuse preparations while config and session are unchanged (default on, 1000 entries). */
  readonly prewarm?: boolean | { readonly maxEntries: number } | undefined;
  readonly executorSettings?: ExecutorSettings | undefined;
}

export interface KernelStats {
  readonly prewarm: { readonly hits: number; readonly misses: number; readonly entries: number };
  readonly lanes: LaneStats;
}

interface PrewarmEntry {
  readonly configHash: string;
  readonly sessionHash: string;
  readonly authHash: string;
  readonly prepared: PreparedSession;
}

const EMPTY_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, costUsd: 0 } as const;

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The runtime decisions as stored: JSON-safe, secret-free (profiles carry only `hasSecret`). */
function runtimeRecord(prepared: PreparedSession): Record<string, unknown> {
  const runtime = prepared.runtimeContext;
  const model = runtime.piModel.value;
  return {
    agentId: runtime.agentId,
    sessionKey: runtime.sessionKey,
    sessionId: runtime.sessionId,
    workspaceDir: runtime.workspaceDir,
    agentDir: runtime.agentDir,
    model: runtime.model,
    piModel: {
      source: runtime.piModel.source,
      provider: model.provider,
      id: model.id,
      api: model.api,
      contextWindow: model.contextWindow,
    },
    candidates: runtime.candidates,
    authProfile: runtime.authProfile,
    thinking: runtime.thinking,
    contextTokens: runtime.contextTokens,
    timeoutMs: runtime.timeoutMs,
    queue: runtime.queue,
    sandbox: runtime.sandbox,
    notes: runtime.notes,
  };
}

export class Kernel {
  readonly #options: KernelOptions;
  readonly #store: SessionStore;
  readonly #executor: TurnExecutor;
  readonly #lanes: LaneScheduler;
  readonly #registry = new RunRegistry();
  readonly #pools = new WeakMap<KernelConfig, ModelRuntimePool>();
  readonly #prewarm = new Map<string, PrewarmEntry>();
  readonly #prewarmLimit: number;
  /** Preparations under way, so concurrent first turns of one session resolve it once. */
  readonly #inflight = new Map<string, Promise<{ prepared: PreparedSession; row: SessionRecord }>>();
  #hits = 0;
  #misses = 0;

  constructor(options: KernelOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#executor = options.executor ?? executeTurnInPi;
    this.#lanes = new LaneScheduler(
      options.maxConcurrent ??
        options.config.agents.defaults.maxConcurrent ??
        defaultMaxConcurrent(availableParallelism()),
    );
    this.#prewarmLimit =
      options.prewarm === false ? 0 : typeof options.prewarm === "object" ? options.prewarm.maxEntries : 1000;
    if (options.models) this.#pools.set(options.config, options.models);
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  stats(): KernelStats {
    return {
      prewarm: { hits: this.#hits, misses: this.#misses, entries: this.#prewarm.size },
      lanes: this.#lanes.stats(),
    };
  }

  // ── prepareSession ────────────────────────────────────────────────────────────────────────────────────

  /**
   * Validates the input and resolves identity, runtime, tool policy and defaults. With prewarming on, a
   * preparation is reused while the config's content, the session's resolution-relevant fields and its
   * auth-profile state are unchanged (and, without a caller's sessionId, while the session is not stale).
   */
  async prepareSession(raw: SessionKernelInput): Promise<PreparedSession> {
    const input = validateSessionInput(raw);
    const config = input.config ?? this.#options.config;
    const now = this.#now();
    const snapshot = await readSessionSnapshot(input, config, this.#options, now);
    if (this.#prewarmLimit === 0) {
      return (await resolvePreparedSession(input, config, snapshot, this.#options, now)).prepared;
    }
    const key = `${snapshot.agentId}\u0000${snapshot.sessionKey}\u0000${inputFingerprint(input)}`;
    const configHash = configFingerprint(config);
    const authHash = hashOf(snapshot.authUsage);
    const cached = this.#prewarm.get(key);
    if (
      cached !== undefined &&
      snapshot.row !== undefined &&
      cached.configHash === configHash &&
      cached.authHash === authHash &&
      cached.sessionHash === sessionFingerprint(snapshot.row, input) &&
      (input.sessionId !== undefined || !isStoredSessionStale(config, snapshot.row, now))
    ) {
      this.#hits += 1;
      // Refresh its place in the LRU order.
      this.#prewarm.delete(key);
      this.#prewarm.set(key, cached);
      return cached.prepared;
    }
    this.#misses += 1;
    const inflightKey = `${key}\u0000${configHash}`;
    let pending = this.#inflight.get(inflightKey);
    if (pending === undefined) {
      pending = resolvePreparedSession(input, config, snapshot, this.#options, now);
      this.#inflight.set(inflightKey, pending);
      void pending.then(
        () => this.#inflight.delete(inflightKey),
        () => this.#inflight.delete(inflightKey),
      );
    }
    const { prepared, row } = await pending;
    this.#prewarm.delete(key);
    this.#prewarm.set(key, { configHash, authHash, sessionHash: sessionFingerprint(row, input), prepared });
    if (this.#prewarm.size > this.#prewarmLimit) {
      const oldest = this.#prewarm.keys().next().value;
      if (oldest !== undefined) this.#prewarm.delete(oldest);
    }
    return prepared;
  }

  /** Drops every cached preparation (e.g. after editing auth-profiles.json, which the cache cannot see). */
  clearPrewarm(): void {
    this.#prewarm.clear();
  }

  // ── runs ──────────────────────────────────────────────────────────────────────────────────────────────

  /** Every event of every run of this kernel. Returns the unsubscribe function. */
  subscribe(listener: EventListener): () => void {
    return this.#registry.subscribe(listener);
  }

  activeRuns(filter?: { readonly agentId?: string; readonly sessionKey?: string }): ActiveRun[] {
    return this.#registry.list(filter);
  }

  abort(runId: string): boolean {
    return this.#registry.abort(runId, "aborted by the caller");
  }

  abortSession(ref: { readonly agentId?: string; readonly sessionKey: string }): string[] {
    return this.#registry.abortSession(ref, "aborted by the caller");
  }

  /** The outcome of a queued, running or recently ended run; undefined for an unknown runId. */
  wait(runId: string): Promise<TurnOutcome> | undefined {
    return this.#registry.wait(runId);
  }

  // ── executeTurn ───────────────────────────────────────────────────────────────────────────────────────

  /**
   * Runs one turn of a prepared session: after the session's earlier turns (FIFO) and within the global
   * cap. Provider failures, timeouts and aborts end in the outcome's status; invalid input throws
   * `KernelInputError`, and a store failure throws.
   */
  async executeTurn(prepared: PreparedSession, raw: TurnInput): Promise<TurnOutcome> {
    const turn = validateTurnInput(raw);
    const started = performance.now();
    const runtime = prepared.runtimeContext;
    const runId = turn.runId ?? randomUUID();
    const sessionKey = runtime.sessionKey.value;
    const signal = this.#registry.register({
      runId,
      agentId: runtime.agentId.value,
      sessionKey,
      sessionId: prepared.transcript.sessionId,
      entryPoint: prepared.defaults.entryPoint,
      queuedAt: this.#now(),
    });
    const onCallerAbort = () => this.#registry.abort(runId, "aborted by the caller");
    if (turn.signal?.aborted) onCallerAbort();
    turn.signal?.addEventListener("abort", onCallerAbort, { once: true });
    try {
      const outcome = await this.#lanes
        .run(sessionKey, () => this.#runAdmitted(prepared, turn, runId, signal, started), signal)
        .catch((error: unknown) => {
          if (error instanceof LaneWaitAbortedError)
            return this.#abortedWhileQueued(prepared, turn, runId, started);
          throw error;
        });
      this.#registry.settle(runId, outcome);
      return outcome;
    } catch (error) {
      this.#registry.fail(runId, error);
      throw error;
    } finally {
      turn.signal?.removeEventListener("abort", onCallerAbort);
    }
  }

  #poolFor(config: KernelConfig): ModelRuntimePool {
    let pool = this.#pools.get(config);
    if (!pool) {
      pool = new ModelRuntimePool({
        config,
        ...(this.#options.nativeProviders ? { nativeProviders: this.#options.nativeProviders } : {}),
      });
      this.#pools.set(config, pool);
    }
    return pool;
  }

  #decisions(prepared: PreparedSession, queuedMs: number, toolLines: readonly string[]): RunDecisions {
    return {
      phase: "prepared",
      entryPoint: prepared.defaults.entryPoint,
      queuedMs: Math.round(queuedMs * 1000) / 1000,
      runtime: runtimeRecord(prepared),
      toolPolicy: toolLines,
      defaults: prepared.defaults,
    };
  }

  /** The policy for this turn: re-resolved only when `ownerNumbers` changes who counts as the owner. */
  #policyFor(prepared: PreparedSession, turn: TurnInput) {
    const sender = prepared.session.messageContext?.senderId;
    if (turn.ownerNumbers === undefined || sender === undefined) {
      return { policy: prepared.toolPolicy, lines: prepared.toolDecisions.map(formatToolDecision) };
    }
    const isOwner = turn.ownerNumbers.includes(sender);
    if (prepared.toolPolicyContext.senderIsOwner === isOwner) {
      return { policy: prepared.toolPolicy, lines: prepared.toolDecisions.map(formatToolDecision) };
    }
    const policy = resolveToolPolicy(prepared.config, {
      ...prepared.toolPolicyContext,
      senderIsOwner: isOwner,
    });
    return {
      policy,
      lines: policy.explain(prepared.toolDecisions.map((decision) => decision.tool)).map(formatToolDecision),
    };
  }

  async #startRunRecord(prepared: PreparedSession, runId: string, decisions?: RunDecisions): Promise<void> {
    const runtime = prepared.runtimeContext;
    await this.#store.runs.start({
      runId,
      agentId: runtime.agentId.value,
      sessionKey: runtime.sessionKey.value,
      sessionId: prepared.transcript.sessionId,
      entryPoint: prepared.defaults.entryPoint,
      startedAt: this.#now(),
      provider: runtime.model.value.provider,
      model: runtime.model.value.model,
      thinkingLevel: runtime.thinking.value,
    });
    if (decisions === undefined) return;
    await this.#store.runs.appendEvents(runId, [
      { seq: 0, ts: this.#now(), stream: "lifecycle", data: decisions },
    ]);
  }

  async #runAdmitted(
    prepared: PreparedSession,
    turn: TurnInput,
    runId: string,
    signal: AbortSignal,
    started: number,
  ): Promise<TurnOutcome> {
    const admitted = performance.now();
    this.#registry.markRunning(runId, this.#now());
    const runtime = prepared.runtimeContext;
    const { policy, lines } = this.#policyFor(prepared, turn);
    const decisions = this.#decisions(prepared, admitted - started, lines);

    const events: AgentEventPayload[] = [];
    const sink = turn.delivery;
    let deliveries: Promise<void> = Promise.resolve();
    const deliveryErrors: unknown[] = [];
    const deliver = (send: () => void | Promise<void>) => {
      deliveries = deliveries.then(send).catch((error: unknown) => {
        deliveryErrors.push(error);
      });
    };
    const callerCallbacks = turn.callbacks ?? {};
    const callbacks: TurnCallbacks = {
      ...callerCallbacks,
      onAgentEvent: (event) => {
        events.push(event);
        this.#registry.publish(event);
        callerCallbacks.onAgentEvent?.(event);
      },
      ...(sink?.onBlockReply || callerCallbacks.onBlockReply
        ? {
            onBlockReply: (payload: ReplyPayload) => {
              callerCallbacks.onBlockReply?.(payload);
              if (sink?.onBlockReply) deliver(() => sink.onBlockReply?.(payload, { runId }));
            },
          }
        : {}),
    };
    const defaults = prepared.defaults;
    const context: TurnContext = {
      ...(this.#options.executorSettings ?? {}),
      config: prepared.config,
      store: this.#store,
      runtime,
      toolPolicy: policy,
      models: this.#poolFor(prepared.config),
      agentId: runtime.agentId.value,
      sessionKey: runtime.sessionKey.value,
      sessionId: prepared.transcript.sessionId,
      workspaceDir: runtime.workspaceDir.value,
      promptMode: defaults.promptMode,
      ...(sink?.messageTool ? { deliverySink: sink.messageTool } : {}),
      reply: {
        reasoningMode: defaults.reasoningMode,
        enforceFinalTag: defaults.enforceFinalTag,
        ...(defaults.blockStreaming ? { blockStreaming: defaults.blockStreaming } : {}),
        ...(prepared.session.messageContext?.currentMessageId === undefined
          ? {}
          : { currentMessageId: prepared.session.messageContext.currentMessageId }),
      },
      ...(this.#options.now ? { now: this.#options.now } : {}),
    };
    const request: TurnRequest = {
      prompt: turn.prompt,
      ...(turn.images ? { images: turn.images } : {}),
      ...(turn.extraSystemPrompt === undefined ? {} : { extraSystemPrompt: turn.extraSystemPrompt }),
      timeoutMs: turn.timeoutMs ?? defaults.timeoutMs,
      runId,
      signal,
      entryPoint: defaults.entryPoint,
      callbacks,
    };

    const executorStarted = performance.now();
    let result: TurnResult;
    try {
      result = await this.#executor(context, request);
    } catch (error) {
      result = await this.#executorFailed(prepared, runId, events, error, signal);
    }
    const executorMs = performance.now() - executorStarted;
    // The executor created the run record; the decisions go in as its event 0 (nothing to write before the
    // turn starts keeps the path to the model short).
    await this.#store.runs.appendEvents(runId, [
      { seq: 0, ts: this.#now(), stream: "lifecycle", data: decisions },
    ]);
    const updated = await updateSessionAfterRun(this.#store, prepared, result, this.#now());
    const sessionMeta =
      updated?.meta ??
      (
        await this.#store.sessions.get({
          agentId: runtime.agentId.value,
          sessionKey: runtime.sessionKey.value,
        })
      )?.meta ??
      {};
    await deliveries;
    const outcome = this.#outcome(
      runId,
      result,
      decisions,
      sessionMeta,
      started,
      admitted - started,
      executorMs,
    );
    if (sink?.onFinal) await sink.onFinal(outcome.result.payloads, outcome);
    if (deliveryErrors.length > 0) {
      throw new AggregateError(deliveryErrors, `run ${runId}: the delivery sink failed on a block reply`);
    }
    return outcome;
  }

  #outcome(
    runId: string,
    result: TurnResult,
    decisions: RunDecisions,
    sessionMeta: TurnOutcome["sessionMeta"],
    started: number,
    queuedMs: number,
    executorMs: number,
  ): TurnOutcome {
    const totalMs = performance.now() - started;
    return {
      runId,
      status: result.status,
      result,
      events: result.events,
      ...(result.fallback ? { fallback: result.fallback } : {}),
      decisions,
      sessionMeta,
      timings: { queuedMs, executorMs, totalMs, overheadMs: Math.max(0, totalMs - queuedMs - executorMs) },
    };
  }

  /** The executor threw (a store failure, a bug): end the run as failed with what it streamed so far. */
  async #executorFailed(
    prepared: PreparedSession,
    runId: string,
    events: AgentEventPayload[],
    error: unknown,
    signal: AbortSignal,
  ): Promise<TurnResult> {
    const message = errorText(error);
    const status = signal.aborted ? "aborted" : "error";
    const end: AgentEventPayload = {
      runId,
      seq: (events.at(-1)?.seq ?? 0) + 1,
      ts: this.#now(),
      stream: "lifecycle",
      data: { phase: "end", status, reason: "internal", errorMessage: message },
    };
    events.push(end);
    this.#registry.publish(end);
    try {
      // The executor may have thrown before it created the record; starting it again changes nothing.
      await this.#startRunRecord(prepared, runId);
      await this.#store.runs.appendEvents(
        runId,
        events.map(({ seq, ts, stream, data }) => ({ seq, ts, stream, data })),
      );
      await this.#store.runs.finish(runId, {
        status: status === "aborted" ? "aborted" : "failed",
        errorReason: "internal",
        errorMessage: message,
      });
    } catch {
      // The record may already be final (the executor finished it before throwing); the outcome says why.
    }
    return {
      runId,
      status,
      reason: "internal",
      errorMessage: message,
      payloads: [],
      assistantText: "",
      partial: false,
      usage: EMPTY_USAGE,
      attempts: [],
      compactions: 0,
      messagingToolTexts: [],
      events: [...events],
    };
  }

  /** The run was aborted before it reached the front of its lane: recorded, never sent to a model. */
  async #abortedWhileQueued(
    prepared: PreparedSession,
    turn: TurnInput,
    runId: string,
    started: number,
  ): Promise<TurnOutcome> {
    const queuedMs = performance.now() - started;
    const { lines } = this.#policyFor(prepared, turn);
    const decisions = this.#decisions(prepared, queuedMs, lines);
    await this.#startRunRecord(prepared, runId, decisions);
    const errorMessage = "aborted while queued; the turn never started";
    const ts = this.#now();
    const events: AgentEventPayload[] = [
      {
        runId,
        seq: 1,
        ts,
        stream: "lifecycle",
        data: {
          phase: "start",
          entryPoint: prepared.defaults.entryPoint,
          sessionId: prepared.transcript.sessionId,
        },
      },
      {
        runId,
        seq: 2,
        ts,
        stream: "lifecycle",
        data: { phase: "end", status: "aborted", reason: "aborted", errorMessage },
      },
    ];
    for (const event of events) {
      this.#registry.publish(event);
      turn.callbacks?.onAgentEvent?.(event);
    }
    await this.#store.runs.appendEvents(
      runId,
      events.map(({ seq, ts: at, stream, data }) => ({ seq, ts: at, stream, data })),
    );
    await this.#store.runs.finish(runId, { status: "aborted", errorReason: "aborted", errorMessage });
    const result: TurnResult = {
      runId,
      status: "aborted",
      reason: "aborted",
      errorMessage,
      payloads: [],
      assistantText: "",
      partial: false,
      usage: EMPTY_USAGE,
      attempts: [],
      compactions: 0,
      messagingToolTexts: [],
      events,
    };
    const row = await this.#store.sessions.get({
      agentId: prepared.runtimeContext.agentId.value,
      sessionKey: prepared.runtimeContext.sessionKey.value,
    });
    const outcome = this.#outcome(runId, result, decisions, row?.meta ?? {}, started, queuedMs, 0);
    await turn.delivery?.onFinal?.([], outcome);
    return outcome;
  }
}

/** A kernel over one store and config: `prepareSession` → `executeTurn` → `TurnOutcome`. */
export function createKernel(options: KernelOptions): Kernel {
  return new Kernel(options);
}
