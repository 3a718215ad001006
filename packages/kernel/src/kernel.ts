// The kernel: the one path from an entry point to a turn. Owns: `prepareSession` with its prewarm cache,
// `executeTurn` — a run registered, queued in its session lane and under the global cap, the executor called
// with the prepared context (it creates the run record), the decisions made for the run stored as its event 0
// (in the executor's finishing transaction), the session metadata updated once, the outcome normalised with
// the kernel's own work per phase in its timings and handed to the delivery sink — plus aborting, steering,
// waiting and the one event stream (run-registry.ts). Does not own: the rules of resolution (prepare.ts and the packages below),
// the turn itself (turn-pipeline's executor), or delivery (entry points, through `DeliverySink`).
import { randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { defaultMaxConcurrent, type KernelConfig } from "@agent-kernel/config";
import { loadProfileUsage, type ProfileUsageStats } from "@agent-kernel/runtime-resolver";
import type {
  FinishRunInput,
  RunEvent,
  RunRecord,
  RunsApi,
  SessionRecord,
  SessionStore,
} from "@agent-kernel/session-store";
import type { SessionLease } from "@agent-kernel/session-store/postgres";
import { formatToolDecision, resolveToolPolicy } from "@agent-kernel/tool-policy";
import {
  executeTurn as executeTurnInPi,
  ModelRuntimePool,
  type ReplyPayload,
  SteerHandle,
  type TurnCallbacks,
  type TurnContext,
  type TurnRequest,
  type TurnResult,
} from "@agent-kernel/turn-pipeline";
import type { Provider } from "@earendil-works/pi-ai";
import { LaneScheduler, type LaneStats, LaneWaitAbortedError } from "./lanes.ts";
import {
  type AuthUsageReader,
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
import {
  type HeldSessionLease,
  LeaseWaitTimeoutError,
  type LeasingStore,
  leasingStoreOf,
  type SessionLeaseSettings,
  SessionLeases,
} from "./session-leases.ts";
import { updateSessionAfterRun } from "./session-update.ts";
import type {
  AgentEventPayload,
  KernelPhaseTimings,
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
  Pick<
    TurnContext,
    "stallTimeoutMs" | "transientRetryDelayMs" | "rateLimitRetries" | "exec" | "sandboxEngines"
  >
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
  /**
   * Cross-process lanes on a store with leases (PostgreSQL): each turn holds its session's lease while it
   * runs (session-leases.ts). Ignored on SQLite.
   */
  readonly sessionLeases?: SessionLeaseSettings | undefined;
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

type MeasuredPhase = "validateMs" | "bookkeepingMs" | "runRecordMs" | "sessionUpdateMs" | "outcomeMs";

/** What one `prepareSession` call cost, waiting for the `executeTurn` of the same preparation. */
interface PrepareWork {
  readonly ms: number;
  readonly cache: "hit" | "miss";
}

/** Unconsumed `prepareSession` costs kept per preparation (a caller may prepare without running). */
const PREPARE_WORK_LIMIT = 16;

/**
 * The kernel's own work on one turn, per phase (see `KernelPhaseTimings`): a phase is timed from `enter`
 * until the next `enter` or `pause`; the kernel pauses right before every await that is not its own work
 * (the lane, the executor, a store call's promise), so time other turns use meanwhile is never charged here.
 */
class PhaseClock {
  readonly phases: { -readonly [K in keyof KernelPhaseTimings]: KernelPhaseTimings[K] } = {
    prepareMs: 0,
    prepareCache: "none",
    validateMs: 0,
    bookkeepingMs: 0,
    runRecordMs: 0,
    sessionUpdateMs: 0,
    outcomeMs: 0,
  };
  #phase: MeasuredPhase | undefined;
  #since = 0;

  constructor(first: MeasuredPhase) {
    this.#phase = first;
    this.#since = performance.now();
  }

  enter(phase: MeasuredPhase): void {
    const now = performance.now();
    if (this.#phase !== undefined) this.phases[this.#phase] += now - this.#since;
    this.#phase = phase;
    this.#since = now;
  }

  pause(): void {
    if (this.#phase === undefined) return;
    this.phases[this.#phase] += performance.now() - this.#since;
    this.#phase = undefined;
  }

  /** A span timed elsewhere (the event fan-out, which runs inside the executor's time). */
  add(phase: MeasuredPhase, ms: number): void {
    this.phases[phase] += ms;
  }

  get totalMs(): number {
    const p = this.phases;
    return p.prepareMs + p.validateMs + p.bookkeepingMs + p.runRecordMs + p.sessionUpdateMs + p.outcomeMs;
  }
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

/** Methods of `target` bound to it, made once each (a view forwards to the real object's private state). */
function forwarding<T extends object>(target: T, override: (property: string | symbol) => unknown): T {
  const bound = new Map<string | symbol, unknown>();
  return new Proxy(target, {
    get(object, property) {
      const replaced = override(property);
      if (replaced !== undefined) return replaced;
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      let method = bound.get(property);
      if (method === undefined) {
        method = value.bind(object);
        bound.set(property, method);
      }
      return method;
    },
  });
}

/** Where the executor's run writes and transcript loads go while a turn holds its session's lease. */
interface LeaseRouting {
  /** The run's fenced runs API while its turn holds the lease, else undefined. */
  runsOf(runId: string): RunsApi | undefined;
  /** The lease held for a transcript (`agentId`, `sessionId`), else undefined. */
  leaseOf(agentId: string, sessionId: string): SessionLease | undefined;
}

/**
 * The store as the executor sees it: the same store, except that `runs.finish` of a run with pending
 * decisions also stores them as its event 0 — in the executor's one finishing transaction instead of a
 * transaction of their own. The decisions stay pending when that finish fails; the kernel then writes them.
 * With leases (`routing`, PostgreSQL), a run's writes go through its turn's fenced runs API and
 * `loadTranscript` of a session whose lease is held fences the transcript's flushes with it. One view per
 * kernel (not per turn): the executor keeps warm sessions per store object.
 */
function storeForExecutor(
  store: SessionStore,
  pending: Map<string, RunEvent>,
  routing: LeaseRouting | undefined,
): SessionStore {
  const runs = store.runs;
  const runsFor = (runId: string): RunsApi => routing?.runsOf(runId) ?? runs;
  const finish: RunsApi["finish"] = async (runId: string, input: FinishRunInput): Promise<RunRecord> => {
    const target = runsFor(runId);
    const decisions = pending.get(runId);
    if (decisions === undefined) return target.finish(runId, input);
    const finished = await target.finish(runId, { ...input, events: [decisions, ...(input.events ?? [])] });
    pending.delete(runId);
    return finished;
  };
  const runOverrides = new Map<string | symbol, unknown>([["finish", finish]]);
  const storeOverrides = new Map<string | symbol, unknown>();
  if (routing !== undefined) {
    const start: RunsApi["start"] = (input) => runsFor(input.runId).start(input);
    const update: RunsApi["update"] = (runId, change) => runsFor(runId).update(runId, change);
    const appendEvents: RunsApi["appendEvents"] = (runId, events) =>
      runsFor(runId).appendEvents(runId, events);
    runOverrides.set("start", start).set("update", update).set("appendEvents", appendEvents);
    const leasing = store as LeasingStore;
    const loadTranscript: SessionStore["loadTranscript"] = (agentId, sessionId) => {
      const lease = routing.leaseOf(agentId, sessionId);
      return lease === undefined
        ? leasing.loadTranscript(agentId, sessionId)
        : leasing.loadTranscript(agentId, sessionId, { lease });
    };
    storeOverrides.set("loadTranscript", loadTranscript);
  }
  const runsView = forwarding(runs, (property) => runOverrides.get(property));
  storeOverrides.set("runs", runsView);
  return forwarding(store, (property) => storeOverrides.get(property));
}

function transcriptKey(agentId: string, sessionId: string): string {
  return `${agentId}\u0000${sessionId}`;
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
  readonly #inflight = new Map<
    string,
    Promise<{ prepared: PreparedSession; row: SessionRecord; workMs: number }>
  >();
  readonly #prepareWork = new WeakMap<PreparedSession, PrepareWork[]>();
  /** Auth-usage reads under way per agent: concurrent preparations share one (see `#readAuthUsage`). */
  readonly #authReads = new Map<string, Promise<Readonly<Record<string, ProfileUsageStats>>>>();
  readonly #readAuthUsage: AuthUsageReader;
  /** Decisions (event 0) waiting for their run's finish; see `storeWithDecisionsOnFinish`. */
  readonly #pendingDecisions = new Map<string, RunEvent>();
  readonly #executorStore: SessionStore;
  /** Cross-process lanes, when the store has leases (PostgreSQL); undefined on SQLite. */
  readonly #leases: SessionLeases | undefined;
  /** Per run holding its session's lease: the fenced runs API its writes go through. */
  readonly #fencedRuns = new Map<string, RunsApi>();
  /** Per transcript (agentId, sessionId) whose session's lease a turn holds: that lease. */
  readonly #heldLeases = new Map<string, SessionLease>();
  #sessionWrites: Promise<void> = Promise.resolve();
  /** Per preparation: what every one of its turns records alike (the runtime record, the tool lines). */
  readonly #recorded = new WeakMap<
    PreparedSession,
    { runtime: Record<string, unknown>; toolLines: readonly string[] }
  >();
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
    const leasing = leasingStoreOf(options.store);
    this.#leases = leasing === undefined ? undefined : new SessionLeases(leasing, options.sessionLeases);
    this.#executorStore = storeForExecutor(
      this.#store,
      this.#pendingDecisions,
      this.#leases === undefined
        ? undefined
        : {
            runsOf: (runId) => this.#fencedRuns.get(runId),
            leaseOf: (agentId, sessionId) => this.#heldLeases.get(transcriptKey(agentId, sessionId)),
          },
    );
    // A read that is under way answers every preparation that starts meanwhile: with hundreds of turns
    // arriving at once they would otherwise queue hundreds of identical reads (one Kysely connection).
    // The answer is never older than the moment the first of them asked; by the time a queued turn runs
    // it is older than that anyway, and the executor reads the usage again when it picks a profile.
    this.#readAuthUsage = (agentId, now) => {
      const underWay = this.#authReads.get(agentId);
      if (underWay !== undefined) return underWay;
      const read = loadProfileUsage(this.#store.auth, agentId, now);
      this.#authReads.set(agentId, read);
      const done = () => this.#authReads.delete(agentId);
      void read.then(done, done);
      return read;
    };
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
    // Own work only (see `KernelPhaseTimings`): the clock stops before each await on the store.
    let since = performance.now();
    const input = validateSessionInput(raw);
    const config = input.config ?? this.#options.config;
    const now = this.#now();
    const reading = readSessionSnapshot(input, config, this.#options, now, this.#readAuthUsage);
    let workMs = performance.now() - since;
    const snapshot = await reading;
    since = performance.now();
    // A forced new session is a new preparation by definition: never a cached one (whose session id is the
    // old one), nor merged with a concurrent resolution of the same key.
    if (this.#prewarmLimit === 0 || input.runOptions?.forceNewSession === true) {
      const resolving = resolvePreparedSession(input, config, snapshot, this.#options, now);
      workMs += performance.now() - since;
      const resolved = await resolving;
      return this.#noted(resolved.prepared, workMs + resolved.workMs, "miss");
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
      return this.#noted(cached.prepared, workMs + performance.now() - since, "hit");
    }
    this.#misses += 1;
    const inflightKey = `${key}\u0000${configHash}`;
    let pending = this.#inflight.get(inflightKey);
    // Whoever starts the resolution is charged for it; a concurrent first turn only waits for it.
    let startedHere = false;
    if (pending === undefined) {
      workMs += performance.now() - since;
      pending = resolvePreparedSession(input, config, snapshot, this.#options, now);
      since = performance.now();
      startedHere = true;
      this.#inflight.set(inflightKey, pending);
      void pending.then(
        () => this.#inflight.delete(inflightKey),
        () => this.#inflight.delete(inflightKey),
      );
    }
    workMs += performance.now() - since;
    const resolved = await pending;
    since = performance.now();
    const { prepared, row } = resolved;
    this.#prewarm.delete(key);
    this.#prewarm.set(key, { configHash, authHash, sessionHash: sessionFingerprint(row, input), prepared });
    if (this.#prewarm.size > this.#prewarmLimit) {
      const oldest = this.#prewarm.keys().next().value;
      if (oldest !== undefined) this.#prewarm.delete(oldest);
    }
    workMs += performance.now() - since + (startedHere ? resolved.workMs : 0);
    return this.#noted(prepared, workMs, "miss");
  }

  /** Keeps what this `prepareSession` call cost for the next `executeTurn` of `prepared`. */
  #noted(prepared: PreparedSession, ms: number, cache: PrepareWork["cache"]): PreparedSession {
    let queue = this.#prepareWork.get(prepared);
    if (queue === undefined) {
      queue = [];
      this.#prepareWork.set(prepared, queue);
    }
    queue.push({ ms, cache });
    if (queue.length > PREPARE_WORK_LIMIT) queue.shift();
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

  /**
   * Steers `text` into a running turn (pi's steering: after the current model message and its tool batch,
   * before the next model call). `target` is a runId, or a session key whose running turn is meant (as
   * stored, `agent:<id>:<rest>`). Resolves true once the text is in that turn's model context; false when no
   * turn is running there, or the turn is past the point where steering applies (it was between attempts or
   * finishing): the caller then runs the message as a turn of its own.
   */
  steer(target: string, text: string): Promise<boolean> {
    const byRun = this.#registry.get(target);
    const run =
      byRun ?? this.#registry.list({ sessionKey: target }).find((active) => active.phase === "running");
    return run === undefined ? Promise.resolve(false) : this.#registry.steer(run.runId, text);
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
    const clock = new PhaseClock("validateMs");
    const turn = validateTurnInput(raw);
    clock.enter("bookkeepingMs");
    const prepareWork = this.#prepareWork.get(prepared)?.shift();
    if (prepareWork !== undefined) {
      clock.phases.prepareMs = prepareWork.ms;
      clock.phases.prepareCache = prepareWork.cache;
    }
    const started = performance.now();
    const runtime = prepared.runtimeContext;
    const runId = turn.runId ?? randomUUID();
    const sessionKey = runtime.sessionKey.value;
    const steering = new SteerHandle();
    const signal = this.#registry.register(
      {
        runId,
        agentId: runtime.agentId.value,
        sessionKey,
        sessionId: prepared.transcript.sessionId,
        entryPoint: prepared.defaults.entryPoint,
        queuedAt: this.#now(),
      },
      steering,
    );
    const onCallerAbort = () => this.#registry.abort(runId, "aborted by the caller");
    if (turn.signal?.aborted) onCallerAbort();
    turn.signal?.addEventListener("abort", onCallerAbort, { once: true });
    try {
      const running = this.#lanes
        .run(
          sessionKey,
          () => this.#runAdmitted(prepared, turn, runId, signal, started, clock, steering),
          signal,
        )
        .catch((error: unknown) => {
          if (error instanceof LaneWaitAbortedError)
            return this.#endedBeforeStart(prepared, turn, runId, started, clock, "aborted");
          if (error instanceof LeaseWaitTimeoutError)
            return this.#endedBeforeStart(prepared, turn, runId, started, clock, "timeout", error.message);
          throw error;
        });
      clock.pause();
      const outcome = await running;
      clock.enter("outcomeMs");
      this.#registry.settle(runId, outcome);
      turn.signal?.removeEventListener("abort", onCallerAbort);
      clock.pause();
      // The outcome's timings are final here (the phases object is this clock's; waiters read it later).
      (outcome.timings as { kernelMs: number }).kernelMs = clock.totalMs;
      return outcome;
    } catch (error) {
      this.#registry.fail(runId, error);
      turn.signal?.removeEventListener("abort", onCallerAbort);
      throw error;
    }
  }

  /**
   * Runs the kernel's session-metadata writes one after another. The store writes sessions through Kysely,
   * whose SQLite connection lock wakes every waiter on each release: hundreds of turns ending at once would
   * make that quadratic (measured: 2.5 s per 1000 concurrent turns). Waiting here costs one wake-up each.
   */
  #oneSessionWriteAtATime<T>(write: () => Promise<T>): Promise<T> {
    const written = this.#sessionWrites.then(write);
    this.#sessionWrites = written.then(
      () => undefined,
      () => undefined,
    );
    return written;
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

  /** What every turn of `prepared` records alike, made once per preparation (it is immutable). */
  #recordedFor(prepared: PreparedSession) {
    let recorded = this.#recorded.get(prepared);
    if (recorded === undefined) {
      recorded = {
        runtime: runtimeRecord(prepared),
        toolLines: prepared.toolDecisions.map(formatToolDecision),
      };
      this.#recorded.set(prepared, recorded);
    }
    return recorded;
  }

  #decisions(prepared: PreparedSession, queuedMs: number, toolLines: readonly string[]): RunDecisions {
    return {
      phase: "prepared",
      entryPoint: prepared.defaults.entryPoint,
      queuedMs: Math.round(queuedMs * 1000) / 1000,
      runtime: this.#recordedFor(prepared).runtime,
      toolPolicy: toolLines,
      defaults: prepared.defaults,
    };
  }

  /** The policy for this turn: re-resolved only when `ownerNumbers` changes who counts as the owner. */
  #policyFor(prepared: PreparedSession, turn: TurnInput) {
    const sender = prepared.session.messageContext?.senderId;
    if (turn.ownerNumbers === undefined || sender === undefined) {
      return { policy: prepared.toolPolicy, lines: this.#recordedFor(prepared).toolLines };
    }
    const isOwner = turn.ownerNumbers.includes(sender);
    if (prepared.toolPolicyContext.senderIsOwner === isOwner) {
      return { policy: prepared.toolPolicy, lines: this.#recordedFor(prepared).toolLines };
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

  /**
   * Runs an admitted turn; with leases (PostgreSQL), first waits for its session's lease (the cross-process
   * lane, within the turn's signal and timeout) and holds it until the turn's records are written. A lost
   * lease aborts the turn; its writes are refused by fencing anyway.
   */
  async #runAdmitted(
    prepared: PreparedSession,
    turn: TurnInput,
    runId: string,
    signal: AbortSignal,
    started: number,
    clock: PhaseClock,
    steering: SteerHandle,
  ): Promise<TurnOutcome> {
    if (this.#leases === undefined) {
      return this.#runTurn(prepared, turn, runId, signal, started, clock, steering);
    }
    const runtime = prepared.runtimeContext;
    const timeoutMs = turn.timeoutMs ?? prepared.defaults.timeoutMs;
    const held = await this.#leases.acquire(runtime.sessionKey.value, signal, timeoutMs);
    const key = transcriptKey(runtime.agentId.value, prepared.transcript.sessionId);
    const onLost = () => this.#registry.abort(runId, "lost the session's lease to another process");
    held.hold.lost.addEventListener("abort", onLost, { once: true });
    this.#fencedRuns.set(runId, held.runs);
    this.#heldLeases.set(key, held.lease);
    try {
      await this.#recoverTakenOverRuns(prepared, held);
      return await this.#runTurn(prepared, turn, runId, signal, started, clock, steering);
    } finally {
      held.hold.lost.removeEventListener("abort", onLost);
      this.#fencedRuns.delete(runId);
      if (this.#heldLeases.get(key) === held.lease) this.#heldLeases.delete(key);
      // A failed release only leaves the lease to expire after its TTL.
      await held.hold.release().catch(() => false);
    }
  }

  /**
   * A run of this session still `running` when its lease is ours was left by a holder that lost the lease,
   * most often a process that died mid-turn: the store marks it interrupted once its owner is known gone.
   */
  async #recoverTakenOverRuns(prepared: PreparedSession, held: HeldSessionLease): Promise<void> {
    const runtime = prepared.runtimeContext;
    const recent = await held.runs.listForSession(
      { agentId: runtime.agentId.value, sessionKey: runtime.sessionKey.value },
      { limit: 3 },
    );
    if (recent.some((run) => run.status === "running")) await this.#store.runs.recoverInterrupted();
  }

  async #runTurn(
    prepared: PreparedSession,
    turn: TurnInput,
    runId: string,
    signal: AbortSignal,
    started: number,
    clock: PhaseClock,
    steering: SteerHandle,
  ): Promise<TurnOutcome> {
    const admitted = performance.now();
    clock.enter("bookkeepingMs");
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
    const registry = this.#registry;
    const callbacks: TurnCallbacks = {
      ...callerCallbacks,
      onAgentEvent: (event) => {
        const fanOut = performance.now();
        events.push(event);
        registry.publish(event);
        clock.add("runRecordMs", performance.now() - fanOut);
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
      store: this.#executorStore,
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
      steering,
    };

    // The decisions become the run's event 0 in the executor's finishing transaction (nothing is written
    // before the turn starts, which keeps the path to the model short).
    this.#pendingDecisions.set(runId, { seq: 0, ts: this.#now(), stream: "lifecycle", data: decisions });
    clock.pause();
    const executorStarted = performance.now();
    let result: TurnResult;
    try {
      result = await this.#executor(context, request);
    } catch (error) {
      result = await this.#executorFailed(prepared, runId, events, error, signal);
    }
    const executorMs = performance.now() - executorStarted;
    clock.enter("runRecordMs");
    const unwritten = this.#pendingDecisions.get(runId);
    if (unwritten !== undefined) {
      // The run never finished through the executor (it threw, or its finish failed): stored on their own.
      this.#pendingDecisions.delete(runId);
      const storingDecisions = this.#store.runs.appendEvents(runId, [unwritten]);
      clock.pause();
      await storingDecisions;
    }
    clock.enter("sessionUpdateMs");
    clock.pause();
    const updated = await this.#oneSessionWriteAtATime(() => {
      clock.enter("sessionUpdateMs");
      const updating = updateSessionAfterRun(this.#store, prepared, result, this.#now(), clock);
      clock.pause();
      return updating;
    });
    clock.enter("sessionUpdateMs");
    let sessionMeta = updated?.meta;
    if (sessionMeta === undefined) {
      const reading = this.#store.sessions.get({
        agentId: runtime.agentId.value,
        sessionKey: runtime.sessionKey.value,
      });
      clock.pause();
      sessionMeta = (await reading)?.meta ?? {};
    }
    clock.pause();
    await deliveries;
    clock.enter("outcomeMs");
    const outcome = this.#outcome(
      runId,
      result,
      decisions,
      sessionMeta,
      started,
      admitted - started,
      executorMs,
      clock,
    );
    clock.pause();
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
    clock: PhaseClock,
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
      timings: {
        queuedMs,
        executorMs,
        totalMs,
        overheadMs: Math.max(0, totalMs - queuedMs - executorMs),
        // Final once `executeTurn` returns (it adds settling the run).
        kernelMs: clock.totalMs,
        phases: clock.phases,
      },
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
    // A lost lease aborts the turn (kernel's doing, not the caller's): that is a failure.
    const leaseLost = error instanceof Error && error.name === "LeaseLostError";
    const status = signal.aborted && !leaseLost ? "aborted" : "error";
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

  /**
   * The run ended before it reached the front of its lane: aborted while queued, or (with leases) its
   * session's lease stayed with another process past the turn's timeout. Recorded, never sent to a model.
   * Rare, so its store writes are timed as whole awaits (an upper bound) rather than split per segment.
   */
  async #endedBeforeStart(
    prepared: PreparedSession,
    turn: TurnInput,
    runId: string,
    started: number,
    clock: PhaseClock,
    how: "aborted" | "timeout",
    why?: string,
  ): Promise<TurnOutcome> {
    clock.enter("bookkeepingMs");
    const queuedMs = performance.now() - started;
    const { lines } = this.#policyFor(prepared, turn);
    const decisions = this.#decisions(prepared, queuedMs, lines);
    clock.enter("runRecordMs");
    await this.#startRunRecord(prepared, runId, decisions);
    const errorMessage =
      how === "aborted"
        ? "aborted while queued; the turn never started"
        : `timed out while queued; the turn never started: ${why ?? "the session stayed busy"}`;
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
        data: { phase: "end", status: how, reason: how, errorMessage },
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
    await this.#store.runs.finish(runId, {
      status: how === "aborted" ? "aborted" : "timed_out",
      errorReason: how,
      errorMessage,
    });
    const result: TurnResult = {
      runId,
      status: how,
      reason: how,
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
    clock.enter("sessionUpdateMs");
    const row = await this.#store.sessions.get({
      agentId: prepared.runtimeContext.agentId.value,
      sessionKey: prepared.runtimeContext.sessionKey.value,
    });
    clock.enter("outcomeMs");
    const outcome = this.#outcome(runId, result, decisions, row?.meta ?? {}, started, queuedMs, 0, clock);
    clock.pause();
    await turn.delivery?.onFinal?.([], outcome);
    return outcome;
  }
}

/** A kernel over one store and config: `prepareSession` → `executeTurn` → `TurnOutcome`. */
export function createKernel(options: KernelOptions): Kernel {
  return new Kernel(options);
}
