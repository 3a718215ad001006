// The run registry and the kernel's one event stream. Owns: which runs are queued or running (by runId and by
// session), aborting one run or every run of a session, waiting for a run's outcome (also shortly after it
// ended), steering a message into a running run (through the turn's `SteerHandle`), and fanning every run's
// `AgentEventPayload` out to subscribers (a failing subscriber never breaks a run or another subscriber). Does not own: producing events (the executor; the kernel for runs that never
// reached it) or persisting them (the executor and the kernel write them to the store).
import type { SteerHandle } from "@agent-kernel/turn-pipeline";
import type { AgentEventPayload, TurnOutcome } from "./types.ts";

export type RunPhase = "queued" | "running";

export interface ActiveRun {
  readonly runId: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly entryPoint: string;
  readonly phase: RunPhase;
  readonly queuedAt: number;
  readonly startedAt?: number;
}

interface Entry {
  run: ActiveRun;
  readonly controller: AbortController;
  readonly done: Promise<TurnOutcome>;
  readonly resolve: (outcome: TurnOutcome) => void;
  readonly reject: (error: unknown) => void;
  readonly steering: SteerHandle | undefined;
}

export type EventListener = (event: AgentEventPayload) => void;

/** A runId that is already queued or running. */
export class DuplicateRunError extends Error {
  override readonly name = "DuplicateRunError";
}

/** How many ended runs `wait` still answers for. */
const RECENT_LIMIT = 256;

export class RunRegistry {
  readonly #active = new Map<string, Entry>();
  readonly #recent = new Map<string, TurnOutcome>();
  readonly #listeners = new Set<EventListener>();

  /** Registers a queued run; its signal aborts on `abort`/`abortSession`. */
  register(run: Omit<ActiveRun, "phase">, steering?: SteerHandle): AbortSignal {
    if (this.#active.has(run.runId)) {
      throw new DuplicateRunError(`run ${run.runId} is already ${this.#active.get(run.runId)?.run.phase}`);
    }
    let resolve!: (outcome: TurnOutcome) => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<TurnOutcome>((onResolve, onReject) => {
      resolve = onResolve;
      reject = onReject;
    });
    // Nobody may be waiting; an unobserved rejection must not crash the process.
    done.catch(() => {});
    const controller = new AbortController();
    this.#active.set(run.runId, {
      run: { ...run, phase: "queued" },
      controller,
      done,
      resolve,
      reject,
      steering,
    });
    return controller.signal;
  }

  markRunning(runId: string, startedAt: number): void {
    const entry = this.#active.get(runId);
    if (entry) entry.run = { ...entry.run, phase: "running", startedAt };
  }

  settle(runId: string, outcome: TurnOutcome): void {
    const entry = this.#active.get(runId);
    if (!entry) return;
    this.#active.delete(runId);
    this.#recent.set(runId, outcome);
    if (this.#recent.size > RECENT_LIMIT) {
      const oldest = this.#recent.keys().next().value;
      if (oldest !== undefined) this.#recent.delete(oldest);
    }
    entry.resolve(outcome);
  }

  fail(runId: string, error: unknown): void {
    const entry = this.#active.get(runId);
    if (!entry) return;
    this.#active.delete(runId);
    entry.reject(error);
  }

  get(runId: string): ActiveRun | undefined {
    return this.#active.get(runId)?.run;
  }

  /** Queued and running runs, oldest first; only those of one session when given. */
  list(filter?: { readonly agentId?: string; readonly sessionKey?: string }): ActiveRun[] {
    return [...this.#active.values()]
      .map((entry) => entry.run)
      .filter(
        (run) =>
          (filter?.agentId === undefined || run.agentId === filter.agentId) &&
          (filter?.sessionKey === undefined || run.sessionKey === filter.sessionKey),
      );
  }

  /** Aborts a queued or running run; false when no such run is active. */
  abort(runId: string, reason = "aborted"): boolean {
    const entry = this.#active.get(runId);
    if (!entry) return false;
    entry.controller.abort(reason);
    return true;
  }

  /** Aborts every queued and running run of a session; returns their runIds. */
  abortSession(
    ref: { readonly agentId?: string; readonly sessionKey: string },
    reason = "aborted",
  ): string[] {
    const runs = this.list(ref);
    for (const run of runs) this.abort(run.runId, reason);
    return runs.map((run) => run.runId);
  }

  /**
   * Steers `text` into a running run: resolves true once it is in the model's context within that run, false
   * when the run is unknown, still queued, ended, or past the point where steering applies (see `SteerHandle`).
   */
  steer(runId: string, text: string): Promise<boolean> {
    const entry = this.#active.get(runId);
    if (entry?.run.phase !== "running" || entry.steering === undefined) return Promise.resolve(false);
    return entry.steering.steer(text);
  }

  /** The run's outcome once it ends; undefined for a runId this kernel does not know (or forgot). */
  wait(runId: string): Promise<TurnOutcome> | undefined {
    const entry = this.#active.get(runId);
    if (entry) return entry.done;
    const recent = this.#recent.get(runId);
    return recent === undefined ? undefined : Promise.resolve(recent);
  }

  /** Every event of every run. Returns the unsubscribe function. */
  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(event: AgentEventPayload): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // One subscriber's failure must not reach the run or the other subscribers.
      }
    }
  }
}
