// The store as the executor sees it. Owns: the view that stores a run's pending decisions (event 0) in the
// executor's finishing transaction, and lease routing — a run's writes through its turn's fenced runs API and
// a held session's transcript loaded with its lease. Does not own: acquiring, renewing or
// releasing leases (session-leases.ts; the kernel holds one per turn), what the decisions are
// (run-decisions.ts), or writing decisions the executor never stored (the kernel does, after the run).
import type {
  FinishRunInput,
  RunEvent,
  RunRecord,
  RunsApi,
  SessionLease,
  SessionStore,
} from "@agent-kernel/session-store";
import type { HeldSessionLease, LeasingStore } from "./session-leases.ts";

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
export interface LeaseRouting {
  /** The run's fenced runs API while its turn holds the lease, else undefined. */
  runsOf(runId: string): RunsApi | undefined;
  /** The lease held for a transcript (`agentId`, `sessionId`), else undefined. */
  leaseOf(agentId: string, sessionId: string): SessionLease | undefined;
}

function transcriptKey(agentId: string, sessionId: string): string {
  return `${agentId}\u0000${sessionId}`;
}

/** The leases the kernel's turns hold right now, by run and by transcript: the routing the view reads. */
export class LeaseRoutes implements LeaseRouting {
  /** Per run holding its session's lease: the fenced runs API its writes go through. */
  readonly #fencedRuns = new Map<string, RunsApi>();
  /** Per transcript (agentId, sessionId) whose session's lease a turn holds: that lease. */
  readonly #heldLeases = new Map<string, SessionLease>();

  runsOf(runId: string): RunsApi | undefined {
    return this.#fencedRuns.get(runId);
  }

  leaseOf(agentId: string, sessionId: string): SessionLease | undefined {
    return this.#heldLeases.get(transcriptKey(agentId, sessionId));
  }

  /** Routes `runId` and its transcript through `held` until the returned function is called. */
  route(runId: string, agentId: string, sessionId: string, held: HeldSessionLease): () => void {
    const key = transcriptKey(agentId, sessionId);
    this.#fencedRuns.set(runId, held.runs);
    this.#heldLeases.set(key, held.lease);
    return () => {
      this.#fencedRuns.delete(runId);
      if (this.#heldLeases.get(key) === held.lease) this.#heldLeases.delete(key);
    };
  }
}

/**
 * The store as the executor sees it: the same store, except that `runs.finish` of a run with pending
 * decisions also stores them as its event 0 — in the executor's one finishing transaction instead of a
 * transaction of their own. The decisions stay pending when that finish fails; the kernel then writes them.
 * With leases (`routing`), a run's writes go through its turn's fenced runs API and
 * `loadTranscript` of a session whose lease is held fences the transcript's flushes with it. One view per
 * kernel (not per turn): the executor keeps warm sessions per store object.
 */
export function storeForExecutor(
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
