// The kernel: the one path from an entry point to a turn. Owns: `prepareSession` (its prewarm cache in
// prepare-cache.ts), `executeTurn` — a run registered, queued in its session lane and under the global cap
// (with leases, also holding its session's lease), the executor called with the prepared context (it creates
// the run record; executor-call.ts), the decisions made for the run (run-decisions.ts) stored as its event 0
// (in the executor's finishing transaction: executor-store.ts), the session metadata updated once (group-committed: session-writes.ts), the
// outcome normalised (run-outcome.ts) with the kernel's own work per phase in its timings (phase-clock.ts)
// and handed to the delivery sink — plus aborting, steering, waiting and the one event stream
// (run-registry.ts). Does not own: the rules of resolution (prepare.ts and the packages below), the turn
// itself (turn-pipeline's executor), or delivery (entry points, through `DeliverySink`).
import { randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { defaultMaxConcurrent, type KernelConfig } from "@agent-kernel/config";
import { type RunEvent, RunEventJson, type SessionStore } from "@agent-kernel/session-store";
import {
  executeTurn as executeTurnInPi,
  ModelRuntimePool,
  SteerHandle,
  type TurnResult,
} from "@agent-kernel/turn-pipeline";
import type { Provider } from "@earendil-works/pi-ai";
import {
  type ExecutorCallDeps,
  type ExecutorSettings,
  executorCall,
  type TurnExecutor,
  type TurnToolProvider,
} from "./executor-call.ts";
import { LeaseRoutes, storeForExecutor } from "./executor-store.ts";
import { LaneScheduler, type LaneStats, LaneWaitAbortedError } from "./lanes.ts";
import { PhaseClock } from "./phase-clock.ts";
import type { PrepareDeps } from "./prepare.ts";
import { PreparationCache } from "./prepare-cache.ts";
import { RunDecisionMaker } from "./run-decisions.ts";
import { endedBeforeStart, executorFailed, type RunEndingDeps, turnOutcome } from "./run-outcome.ts";
import { type ActiveRun, type EventListener, RunRegistry } from "./run-registry.ts";
import {
  type HeldSessionLease,
  LeaseWaitTimeoutError,
  leasingStoreOf,
  type SessionLeaseSettings,
  SessionLeases,
} from "./session-leases.ts";
import { SessionWrites } from "./session-writes.ts";
import type { PreparedSession, SessionKernelInput, TurnInput, TurnOutcome } from "./types.ts";
import { validateTurnInput } from "./validate.ts";

export type { ExecutorSettings, TurnExecutor, TurnToolProvider } from "./executor-call.ts";

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
   * Cross-process lanes: each turn holds its session's lease (SQLite's control plane or PostgreSQL) while
   * it runs (session-leases.ts).
   */
  readonly sessionLeases?: SessionLeaseSettings | undefined;
  /** Tools added to every turn of this kernel, made per run (subagents.ts: `sessions_spawn`, `sessions_send`). */
  readonly turnTools?: TurnToolProvider | undefined;
}

export interface KernelStats {
  readonly prewarm: { readonly hits: number; readonly misses: number; readonly entries: number };
  readonly lanes: LaneStats;
}

export class Kernel {
  readonly #options: KernelOptions;
  readonly #store: SessionStore;
  readonly #executor: TurnExecutor;
  readonly #lanes: LaneScheduler;
  readonly #registry = new RunRegistry();
  readonly #pools = new WeakMap<KernelConfig, ModelRuntimePool>();
  readonly #preparations: PreparationCache;
  readonly #decisions = new RunDecisionMaker();
  /** What runs ending outside the executor need (run-outcome.ts). */
  readonly #endings: RunEndingDeps;
  /** Decisions (event 0) waiting for their run's finish; see `storeForExecutor`. */
  readonly #pendingDecisions = new Map<string, RunEvent>();
  /** What every executor call shares, the store view for the executor among it (executor-store.ts). */
  readonly #executorCallDeps: ExecutorCallDeps;
  /** Cross-process lanes, when the store has leases (both of ours do; a store of a third party may not). */
  readonly #leases: SessionLeases | undefined;
  /** The leases this kernel's turns hold: where their runs write and their transcripts load. */
  readonly #leaseRoutes = new LeaseRoutes();
  /** The session-metadata writes after runs: group-committed where the store can (session-writes.ts). */
  readonly #sessionWrites: SessionWrites;
  /** The store's flush, one function: leases let go together share one run of it (session-leases.ts). */
  readonly #flushStore = (): Promise<void> => this.#store.flush();

  constructor(options: KernelOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#executor = options.executor ?? executeTurnInPi;
    this.#lanes = new LaneScheduler(
      options.maxConcurrent ??
        options.config.agents.defaults.maxConcurrent ??
        defaultMaxConcurrent(availableParallelism()),
    );
    this.#preparations = new PreparationCache(options, options.prewarm);
    if (options.models) this.#pools.set(options.config, options.models);
    const leasing = leasingStoreOf(options.store);
    this.#leases = leasing === undefined ? undefined : new SessionLeases(leasing, options.sessionLeases);
    this.#executorCallDeps = {
      registry: this.#registry,
      store: storeForExecutor(
        this.#store,
        this.#pendingDecisions,
        this.#leases === undefined ? undefined : this.#leaseRoutes,
      ),
      options,
    };
    this.#sessionWrites = new SessionWrites(this.#store, () => this.#now());
    this.#endings = {
      store: this.#store,
      registry: this.#registry,
      decisions: this.#decisions,
      now: () => this.#now(),
    };
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  stats(): KernelStats {
    return { prewarm: this.#preparations.stats(), lanes: this.#lanes.stats() };
  }

  // ── prepareSession ────────────────────────────────────────────────────────────────────────────────────

  /**
   * Validates the input and resolves identity, runtime, tool policy and defaults. With prewarming on, a
   * preparation is reused while the config's content, the session's resolution-relevant fields and its
   * auth-profile state are unchanged (and, without a caller's sessionId, while the session is not stale).
   */
  prepareSession(raw: SessionKernelInput): Promise<PreparedSession> {
    return this.#preparations.prepare(raw);
  }

  /** Drops every cached preparation (e.g. after editing auth-profiles.json, which the cache cannot see). */
  clearPrewarm(): void {
    this.#preparations.clear();
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
    const prepareWork = this.#preparations.takeWork(prepared);
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
      const endings = this.#endings;
      const running = this.#lanes
        .run(
          sessionKey,
          () => this.#runAdmitted(prepared, turn, runId, signal, started, clock, steering),
          signal,
        )
        .catch((error: unknown) => {
          if (error instanceof LaneWaitAbortedError)
            return endedBeforeStart(endings, prepared, turn, runId, started, clock, "aborted");
          if (error instanceof LeaseWaitTimeoutError)
            return endedBeforeStart(endings, prepared, turn, runId, started, clock, "timeout", error.message);
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

  /**
   * Runs an admitted turn; with leases, first waits for its session's lease (the cross-process lane, within
   * the turn's signal and timeout) and holds it until the turn's records are written and readable by other
   * processes. A lost lease aborts the turn; its writes are refused by fencing anyway.
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
    const onLost = () => this.#registry.abort(runId, "lost the session's lease to another process");
    held.hold.lost.addEventListener("abort", onLost, { once: true });
    const unroute = this.#leaseRoutes.route(
      runId,
      runtime.agentId.value,
      prepared.transcript.sessionId,
      held,
    );
    try {
      await this.#recoverTakenOverRuns(prepared, held);
      return await this.#runTurn(prepared, turn, runId, signal, started, clock, steering);
    } finally {
      held.hold.lost.removeEventListener("abort", onLost);
      unroute();
      // Kept for this process's next turn of the session, or let go (session-leases.ts): the next holder
      // reads the session from the store, so the flush comes first (SQLite folds its journals there).
      await this.#leases.keep(runtime.sessionKey.value, held, this.#flushStore);
    }
  }

  /**
   * A run of this session still `running` when its lease is ours was left by a holder that lost the lease,
   * most often a process that died mid-turn: the store marks it interrupted once its owner is known gone.
   */
  async #recoverTakenOverRuns(prepared: PreparedSession, held: HeldSessionLease): Promise<void> {
    // A lease its last holder released left nothing running (SQLite tells; PostgreSQL cannot: it checks).
    if (held.lease.tookOver === false) return;
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
    const { policy, lines } = this.#decisions.policyFor(prepared, turn);
    const sink = turn.delivery;
    const call = executorCall(
      this.#executorCallDeps,
      prepared,
      turn,
      runId,
      signal,
      steering,
      clock,
      policy,
      this.#poolFor(prepared.config),
    );
    const decisions = this.#decisions.decisions(prepared, admitted - started, lines, {
      parentRunId: turn.parentRunId,
      policy,
      extraTools: call.context.extraTools,
    });

    // The decisions become the run's event 0 in the executor's finishing transaction (nothing is written
    // before the turn starts, which keeps the path to the model short).
    // Stored as the JSON text made from the preparation's shared parts (run-decisions.ts), not serialised again.
    this.#pendingDecisions.set(runId, {
      seq: 0,
      ts: this.#now(),
      stream: "lifecycle",
      data: new RunEventJson(this.#decisions.json(prepared, decisions)),
    });
    clock.pause();
    const executorStarted = performance.now();
    let result: TurnResult;
    try {
      result = await this.#executor(call.context, call.request);
    } catch (error) {
      try {
        result = await executorFailed(this.#endings, prepared, runId, call.events, error, signal);
      } catch (storageFailure) {
        // A store that cannot record the run is rethrown to the caller: nothing will write these any more.
        this.#pendingDecisions.delete(runId);
        throw storageFailure;
      }
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
    const updated = await this.#sessionWrites.afterRun(prepared, result, clock);
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
    await call.delivered();
    clock.enter("outcomeMs");
    const outcome = turnOutcome(
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
    if (call.deliveryErrors.length > 0) {
      throw new AggregateError(
        call.deliveryErrors,
        `run ${runId}: the delivery sink failed on a block reply`,
      );
    }
    return outcome;
  }
}

/** A kernel over one store and config: `prepareSession` → `executeTurn` → `TurnOutcome`. */
export function createKernel(options: KernelOptions): Kernel {
  return new Kernel(options);
}
