// The recovery loop's position and steps. Owns: where the loop is (the model candidate in the chain, its
// auth-profile order and the profile in use, the thinking level and the levels tried, the one transient retry
// and the same-model retries), what the next attempt runs with, and applying a failed attempt's plan from
// runtime-resolver's `planRecovery`, the first step that applies: thinking fallback, overflow compaction,
// transient retry (after a wait), persisted cooldowns, profile rotation, model fallback, or none (surface).
// Before those: a rate limit or overload whose response said how long to wait (`Retry-After`) is retried on
// the same model after that wait when there is nothing to fall back to (no other profile, no other model),
// the wait bounded (60 s, what is left of the turn's timeout, 3 waits a turn); with a fallback left the
// chain moves on at once, as before.
// Does not own: deciding the plan (runtime-resolver), telling a failure from an answer or a stop, and what a
// failed attempt records (attempt-outcome.ts), or running attempts (attempt-run.ts).
import {
  AuthProfileStore,
  type FailoverReason,
  loadProfileUsage,
  type ModelCandidate,
  normalizeThinkLevel,
  planRecovery,
  type RecoveryStep,
  recordProfileFailure,
  type ThinkLevel,
} from "@agent-kernel/runtime-resolver";
import type { SessionManager } from "@earendil-works/pi-coding-agent";
import type { AttemptRun } from "./attempt-run.ts";
import type { TurnScope } from "./turn-state.ts";
import { omitFailedAssistant } from "./turn-transcript.ts";

export const DEFAULT_TRANSIENT_RETRY_DELAY_MS = 2_500;
/** Reasons that get the one same-model retry before the chain moves on. */
const TRANSIENT_REASONS: ReadonlySet<string> = new Set(["server_error", "overloaded", "timeout"]);
/** Reasons whose `Retry-After` is honoured when nothing is left to fall back to. */
const RETRY_AFTER_REASONS: ReadonlySet<string> = new Set(["rate_limit", "overloaded"]);
/** The longest `Retry-After` waited for; a longer one fails the turn at once (pi-ai's own bound). */
export const MAX_RETRY_AFTER_MS = 60_000;
/** How many `Retry-After` waits one turn makes before the failure surfaces. */
export const MAX_RETRY_AFTER_WAITS = 3;

interface CandidateState {
  readonly candidate: ModelCandidate;
  readonly order: readonly string[];
}

/** What the loop did about a failed attempt. */
export interface Recovered {
  /** The step taken (`lower_thinking:<level>`, `compact_and_retry`, ...); undefined: the failure surfaces. */
  readonly action: string | undefined;
  /** The failover reason, `stalled`, or `unclassified`. */
  readonly reason: string;
  /** The stall watchdog ended the attempt. */
  readonly stalled: boolean;
}

export class Recovery {
  readonly #turn: TurnScope;
  readonly #sessionManager: SessionManager;
  readonly #chain: readonly ModelCandidate[];
  #loadedProfiles: AuthProfileStore | undefined;
  #candidateIndex = 0;
  #current: CandidateState;
  #profileIndex = 0;
  #rotations = 0;
  #thinking: ThinkLevel;
  readonly #attemptedThinking = new Set<string>();
  #sameRetries = 0;
  #transientRetried = false;
  #retryAfterWaits = 0;
  /** When the turn's timeout clock started (the loop is created as the turn starts). */
  readonly #startedAt: number;

  /** Starts at the first candidate with the runtime's profile order and thinking level. */
  constructor(turn: TurnScope, sessionManager: SessionManager, firstCandidate: ModelCandidate) {
    const runtime = turn.context.runtime;
    this.#turn = turn;
    this.#sessionManager = sessionManager;
    this.#chain = runtime.candidates.length > 0 ? runtime.candidates : [firstCandidate];
    this.#current = { candidate: firstCandidate, order: runtime.authProfile.order };
    this.#thinking = runtime.thinking.value;
    this.#startedAt = turn.now();
  }

  /** The model the next attempt runs. */
  get candidate(): ModelCandidate {
    return this.#current.candidate;
  }

  /** The auth profile the next attempt runs with, if any. */
  get profileId(): string | undefined {
    return this.#current.order[this.#profileIndex];
  }

  /** The thinking level the next attempt asks for (clamped to what its model supports). */
  get thinking(): ThinkLevel {
    return this.#thinking;
  }

  /** An auth profile. Read from disk only when a profile is in play: a turn without profiles never needs the file. */
  profile(profileId: string): ReturnType<AuthProfileStore["get"]> {
    return this.#profiles().get(profileId);
  }

  /** Plans the failed attempt's recovery, reports the failure and applies the first step that applies. */
  async recover(run: AttemptRun, failure: string): Promise<Recovered> {
    const { context, log, now, stopper, state } = this.#turn;
    const { model, profileId, level, session } = run;
    const stalled = stopper.cause === "stalled";
    const plan = planRecovery({
      message: failure,
      provider: model.provider,
      attemptedThinking: this.#attemptedThinking,
      overflowCompactions: state.compactions,
    });
    const failoverReason: FailoverReason | null = stalled ? "timeout" : plan.reason;
    log.emit("error", {
      attempt: run.index + 1,
      reason: stalled ? "stalled" : (failoverReason ?? "unclassified"),
      message: failure,
    });

    const reason = stalled ? "stalled" : (failoverReason ?? "unclassified");
    const wait = this.#retryAfterWait(run, failoverReason);
    if (wait !== undefined) {
      this.#retryAfterWaits += 1;
      log.emit("lifecycle", { phase: "retry_wait", attempt: run.index + 1, reason, waitMs: wait });
      await sleep(wait, stopper.signal);
      return { action: `retry_after:${wait}ms`, reason, stalled };
    }

    // Decide the next step: the plan's steps in order, the first that applies.
    let action: string | undefined;
    // A refused transcript write is not the provider's fault: no other model or profile can fix it.
    const recoverySteps: readonly RecoveryStep[] =
      state.storeFailure !== undefined
        ? []
        : failoverReason !== null && TRANSIENT_REASONS.has(failoverReason) && !this.#transientRetried
          ? [{ kind: "retry_same", maxAttempts: 1 }, ...plan.steps]
          : plan.steps;
    for (const step of recoverySteps) {
      if (step.kind === "lower_thinking") {
        this.#attemptedThinking.add(level);
        this.#thinking = step.level;
        action = `lower_thinking:${step.level}`;
        break;
      }
      if (step.kind === "compact_and_retry") {
        omitFailedAssistant(this.#sessionManager);
        // The bridge is unsubscribed by now: the loop reports its own compaction.
        log.emit("compaction", { phase: "start", reason: "overflow" });
        try {
          const compacted = await session.compact();
          state.compactions += 1;
          log.emit("compaction", {
            phase: "end",
            reason: "overflow",
            tokensBefore: compacted.tokensBefore,
          });
          action = "compact_and_retry";
          break;
        } catch (error) {
          log.emit("compaction", {
            phase: "failed",
            errorMessage: error instanceof Error ? error.message : String(error),
          });
          continue;
        }
      }
      if (step.kind === "retry_same") {
        const transient =
          failoverReason !== null && TRANSIENT_REASONS.has(failoverReason) && !this.#transientRetried;
        if (transient) {
          this.#transientRetried = true;
          action = "transient_retry";
          await sleep(context.transientRetryDelayMs ?? DEFAULT_TRANSIENT_RETRY_DELAY_MS, stopper.signal);
          break;
        }
        const limit = Math.min(step.maxAttempts, context.rateLimitRetries ?? 0);
        if (this.#sameRetries < limit) {
          this.#sameRetries += 1;
          action = "retry_same";
          await sleep(context.transientRetryDelayMs ?? DEFAULT_TRANSIENT_RETRY_DELAY_MS, stopper.signal);
          break;
        }
        continue;
      }
      if (step.kind === "cool_down") {
        if (profileId !== undefined) {
          await recordProfileFailure(context.store.auth, {
            agentId: context.agentId,
            profileId,
            reason: step.reason,
            now: now(),
            modelId: model.id,
            cooldowns: context.config.auth.cooldowns,
          });
          log.emit("lifecycle", { phase: "cooldown", authProfileId: profileId, reason: step.reason });
        }
        continue;
      }
      if (step.kind === "rotate_profile") {
        const limit = step.maxRotations ?? Number.POSITIVE_INFINITY;
        if (this.#profileIndex + 1 < this.#current.order.length && this.#rotations < limit) {
          this.#profileIndex += 1;
          this.#rotations += 1;
          this.#attemptedThinking.clear();
          this.#sameRetries = 0;
          action = `rotate_profile:${this.#current.order[this.#profileIndex]}`;
          break;
        }
        continue;
      }
      if (step.kind === "fallback_model") {
        if (this.#candidateIndex + 1 < this.#chain.length) {
          this.#candidateIndex += 1;
          const next = this.#chain[this.#candidateIndex] as ModelCandidate;
          this.#current = { candidate: next, order: await this.#orderFor(next) };
          this.#profileIndex = 0;
          this.#rotations = 0;
          this.#sameRetries = 0;
          this.#attemptedThinking.clear();
          this.#thinking = normalizeThinkLevel(context.runtime.thinking.value) ?? "off";
          action = `fallback_model:${next.provider}/${next.model}`;
          break;
        }
        continue;
      }
      // surface: nothing left to try.
      break;
    }
    return { action, reason, stalled };
  }

  /**
   * The wait the refusing provider asked for, when the loop honours it: a rate limit or overload, no other
   * profile or model to move to, within the bounds; undefined: the plan's steps decide.
   */
  #retryAfterWait(run: AttemptRun, reason: FailoverReason | null): number | undefined {
    const { request, now, state, stopper } = this.#turn;
    const asked = run.retryAfterMs;
    if (asked === undefined || reason === null || !RETRY_AFTER_REASONS.has(reason)) return undefined;
    if (state.storeFailure !== undefined || stopper.cause !== undefined) return undefined;
    if (this.#retryAfterWaits >= MAX_RETRY_AFTER_WAITS || asked > MAX_RETRY_AFTER_MS) return undefined;
    const fallbackLeft =
      this.#profileIndex + 1 < this.#current.order.length || this.#candidateIndex + 1 < this.#chain.length;
    if (fallbackLeft) return undefined;
    // A wait the turn's timeout would cut short only delays the same failure.
    if (request.timeoutMs !== undefined && now() - this.#startedAt + asked >= request.timeoutMs)
      return undefined;
    return asked;
  }

  #profiles(): AuthProfileStore {
    this.#loadedProfiles ??= AuthProfileStore.load(
      this.#turn.context.config,
      this.#turn.context.runtime.agentDir.value,
    );
    return this.#loadedProfiles;
  }

  /** A fallback candidate's profile order (the first candidate's is the runtime's). */
  async #orderFor(candidate: ModelCandidate): Promise<readonly string[]> {
    const { context, now } = this.#turn;
    return this.#profiles().resolveOrder({
      provider: candidate.provider,
      usage: await loadProfileUsage(context.store.auth, context.agentId, now()),
      now: now(),
      forModel: candidate.model,
    });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
