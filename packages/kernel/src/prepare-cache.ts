// The kernel's `prepareSession` with its prewarm cache. Owns: reusing a preparation while the config's
// content, the session's resolution-relevant fields and its auth-profile state are unchanged (an LRU of
// `maxEntries`), resolving concurrent first preparations of one session once, sharing auth-usage reads among
// concurrent preparations, the hit/miss counts, and what each call cost (handed to the next `executeTurn` of
// the same preparation for its `prepareMs`). Does not own: the rules of resolution or the fingerprints
// (prepare.ts), input validation (validate.ts), or running turns (kernel.ts).
import { performance } from "node:perf_hooks";
import { loadProfileUsage, type ProfileUsageStats } from "@agent-kernel/runtime-resolver";
import type { SessionRecord, SessionStore } from "@agent-kernel/session-store";
import {
  type AuthUsageReader,
  configFingerprint,
  fingerprintText,
  inputFingerprintText,
  isStoredSessionStale,
  type PrepareDeps,
  readSessionSnapshot,
  resolvePreparedSession,
  sessionFingerprintText,
} from "./prepare.ts";
import type { PreparedSession, SessionKernelInput } from "./types.ts";
import { validateSessionInput } from "./validate.ts";

/** The auth usage as compared between preparations: most agents have none recorded (then no walk at all). */
function authUsageText(usage: Readonly<Record<string, unknown>>): string {
  for (const _profile in usage) return fingerprintText(usage);
  return "{}";
}

interface PrewarmEntry {
  readonly configHash: string;
  readonly sessionText: string;
  readonly authText: string;
  readonly prepared: PreparedSession;
}

/** What one `prepareSession` call cost, waiting for the `executeTurn` of the same preparation. */
export interface PrepareWork {
  readonly ms: number;
  readonly cache: "hit" | "miss";
}

/** Unconsumed `prepareSession` costs kept per preparation (a caller may prepare without running). */
const PREPARE_WORK_LIMIT = 16;

/** Prewarming as `KernelOptions.prewarm` sets it: on by default with 1000 entries. */
export type PrewarmSetting = boolean | { readonly maxEntries: number } | undefined;

export class PreparationCache {
  readonly #deps: PrepareDeps;
  readonly #store: SessionStore;
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
  #hits = 0;
  #misses = 0;

  constructor(deps: PrepareDeps, prewarm: PrewarmSetting) {
    this.#deps = deps;
    this.#store = deps.store;
    this.#prewarmLimit = prewarm === false ? 0 : typeof prewarm === "object" ? prewarm.maxEntries : 1000;
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

  stats(): { readonly hits: number; readonly misses: number; readonly entries: number } {
    return { hits: this.#hits, misses: this.#misses, entries: this.#prewarm.size };
  }

  /** Takes the oldest unconsumed cost of a `prepareSession` call that returned `prepared`. */
  takeWork(prepared: PreparedSession): PrepareWork | undefined {
    return this.#prepareWork.get(prepared)?.shift();
  }

  /** Drops every cached preparation. */
  clear(): void {
    this.#prewarm.clear();
  }

  /** `Kernel.prepareSession` (see there). */
  async prepare(raw: SessionKernelInput): Promise<PreparedSession> {
    // Own work only (see `KernelPhaseTimings`): the clock stops before each await on the store.
    let since = performance.now();
    const input = validateSessionInput(raw);
    const config = input.config ?? this.#deps.config;
    const now = (this.#deps.now ?? Date.now)();
    const reading = readSessionSnapshot(input, config, this.#deps, now, this.#readAuthUsage);
    let workMs = performance.now() - since;
    const snapshot = await reading;
    since = performance.now();
    // A forced new session is a new preparation by definition: never a cached one (whose session id is the
    // old one), nor merged with a concurrent resolution of the same key.
    if (this.#prewarmLimit === 0 || input.runOptions?.forceNewSession === true) {
      const resolving = resolvePreparedSession(input, config, snapshot, this.#deps, now);
      workMs += performance.now() - since;
      const resolved = await resolving;
      return this.#noted(resolved.prepared, workMs + resolved.workMs, "miss");
    }
    const key = `${snapshot.agentId}\u0000${snapshot.sessionKey}\u0000${inputFingerprintText(input)}`;
    const configHash = configFingerprint(config);
    const authText = authUsageText(snapshot.authUsage);
    const cached = this.#prewarm.get(key);
    if (
      cached !== undefined &&
      snapshot.row !== undefined &&
      cached.configHash === configHash &&
      cached.authText === authText &&
      cached.sessionText === sessionFingerprintText(snapshot.row, input) &&
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
      pending = resolvePreparedSession(input, config, snapshot, this.#deps, now);
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
    this.#prewarm.set(key, {
      configHash,
      authText,
      sessionText: sessionFingerprintText(row, input),
      prepared,
    });
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
}
