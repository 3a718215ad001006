// What an attempt's end means for the turn. Owns: the attempt's failure, if any (a stop, a refused transcript
// write, what pi threw, a failed or missing assistant message), its attempt record and `attempt_end` event,
// and how each outcome leaves the turn: a limit hit ends it with the limit's reason (what was delivered kept,
// the user's line last); an answer ends it ok (a first attempt's session may be kept warm); the caller's abort
// or the turn timeout ends it stopped (partial text kept); a failure is recorded with the recovery step taken
// and the fallback chain stored, or ends the turn when no step is left. Also how the turn ends when the loop
// stops with no attempt ending it. Does not own: choosing or applying recovery steps (recovery.ts), running
// the attempt (attempt-run.ts) or finishing the run (run-record.ts).
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { ReplyPayload } from "../streaming/index.ts";
import type { AttemptRun } from "./attempt-run.ts";
import { assistantText } from "./event-bridge.ts";
import type { Recovered } from "./recovery.ts";
import { recordFallbackChain } from "./run-record.ts";
import { STORAGE_REASON, storageFailureOf } from "./storage-failure.ts";
import type { TurnScope } from "./turn-state.ts";
import { stopMessage } from "./turn-stop.ts";
import { omitFailedAssistant } from "./turn-transcript.ts";

/** What every record of the attempt starts with. */
interface AttemptBase {
  readonly index: number;
  readonly provider: string;
  readonly model: string;
  readonly authProfileId?: string;
  readonly thinkingLevel: string;
  readonly startedAt: number;
  readonly durationMs: number;
}

export interface AttemptOutcome {
  readonly base: AttemptBase;
  /** The attempt's last assistant message. */
  readonly last: AssistantMessage | undefined;
  readonly lastFailed: boolean;
  /** Undefined: the attempt answered. */
  readonly failure: AttemptFailure | undefined;
}

export interface AttemptFailure {
  readonly message: string;
  /** What earlier messages of this attempt delivered; the failed message's error payload goes. */
  readonly kept: readonly ReplyPayload[];
  /** The text the attempt got to: the turn's text when the failure ends it. */
  readonly partialText: string;
}

/** Reads how the attempt ended: answered, or why not. */
export function classifyAttempt(turn: TurnScope, run: AttemptRun): AttemptOutcome {
  const { now, limits, stopper, state } = turn;
  const stopCause = stopper.cause;
  const { observation } = run;
  const last = observation.assistantMessages.at(-1);
  const lastFailed = last !== undefined && (last.stopReason === "error" || last.stopReason === "aborted");
  const failure =
    stopCause !== undefined
      ? stopCause === "stalled"
        ? `LLM request timed out: no data from the stream for ${limits.values.streamIdleMs} ms`
        : (last?.errorMessage ?? `turn ${stopCause}`)
      : state.storeFailure !== undefined
        ? state.storeFailure.message
        : run.thrown !== undefined
          ? run.thrown
          : lastFailed
            ? (last.errorMessage ?? `assistant ${last.stopReason}`)
            : last === undefined
              ? "the model returned no message"
              : undefined;
  const durationMs = now() - run.startedAt;
  const base = {
    index: run.index + 1,
    provider: run.model.provider,
    model: run.model.id,
    ...(run.profileId === undefined ? {} : { authProfileId: run.profileId }),
    thinkingLevel: run.level,
    startedAt: run.startedAt,
    durationMs,
  };
  if (failure === undefined) return { base, last, lastFailed, failure: undefined };
  return {
    base,
    last,
    lastFailed,
    failure: {
      message: failure,
      kept: run.payloads.filter((payload) => !payload.isError),
      partialText: last && lastFailed ? assistantText(last) : observation.streamingText.trim(),
    },
  };
}

/**
 * The store could not take the attempt's transcript writes (a full disk, a read-only or damaged file): no
 * recovery step helps and the binding refuses further writes, so the turn ends here with reason `storage`,
 * whatever else happened. What the attempt delivered is kept — a reply the model produced was paid for and is
 * shown, said to be unstored by the entry point. Returns whether it ended the turn.
 */
export function endOnStorageFailure(turn: TurnScope, run: AttemptRun, outcome: AttemptOutcome): boolean {
  const { context, log, stopper, state } = turn;
  const failure =
    state.storeFailure === undefined ? undefined : storageFailureOf(state.storeFailure, context.store);
  if (failure === undefined) return false;
  const { base, last, lastFailed } = outcome;
  const ended = { outcome: "error", reason: STORAGE_REASON, action: "stop" } as const;
  state.attempts.push({ ...base, ...ended, error: failure.message });
  log.emit("lifecycle", { phase: "attempt_end", ...base, ...ended });
  state.payloads.push(...run.payloads.filter((payload) => !payload.isError));
  state.finalText =
    last !== undefined && !lastFailed ? assistantText(last) : run.observation.streamingText.trim();
  state.partial = last === undefined || lastFailed;
  state.status = "error";
  state.reason = STORAGE_REASON;
  state.errorMessage = failure.message;
  run.session.dispose();
  stopper.session = undefined;
  return true;
}

/**
 * A limit hit ends the turn with its own reason (turn-limits.ts) unless the caller or the timeout stopped it:
 * what the attempt delivered is kept and the user's one line is the last payload (a cut reply already ends
 * with it). Returns whether it ended the turn.
 */
export function endOnLimit(turn: TurnScope, run: AttemptRun, outcome: AttemptOutcome): boolean {
  const { log, limits, stopper, state } = turn;
  const breach = limits.breach;
  if (breach === undefined || stopper.cause === "timeout" || stopper.cause === "aborted") return false;
  const { base, last, lastFailed } = outcome;
  const ended = { outcome: "error", reason: breach.reason, action: "stop" } as const;
  state.attempts.push({ ...base, ...ended, error: breach.message });
  log.emit("lifecycle", { phase: "attempt_end", ...base, ...ended });
  state.payloads.push(...run.payloads.filter((payload) => !payload.isError));
  if (!breach.inReply) state.payloads.push({ text: breach.notice });
  state.finalText =
    last !== undefined && !lastFailed ? assistantText(last) : run.observation.streamingText.trim();
  state.partial = true;
  state.status = "error";
  state.reason = breach.reason;
  state.errorMessage = breach.message;
  run.session.dispose();
  stopper.session = undefined;
  return true;
}

/** The attempt answered: the turn ends ok; a first attempt's session is kept for the session's next turn. */
export function endAnswered(turn: TurnScope, run: AttemptRun, outcome: AttemptOutcome): void {
  const { log, stopper, state } = turn;
  const { base, last } = outcome;
  state.attempts.push({ ...base, outcome: "ok" });
  state.payloads.push(...run.payloads);
  state.finalText = last ? assistantText(last) : "";
  state.status = "ok";
  state.answered = { provider: run.model.provider, model: run.model.id, profileId: run.profileId };
  log.emit("lifecycle", { phase: "attempt_end", ...base, outcome: "ok" });
  if (run.index === 0)
    state.keepable = { session: run.session, shape: run.shape, requestHook: run.requestHook };
  else run.session.dispose();
  stopper.session = undefined;
}

/** The caller's abort or the turn timeout ends the turn with what the attempt got to. Returns whether it did. */
export function endStopped(
  turn: TurnScope,
  run: AttemptRun,
  outcome: AttemptOutcome,
  failure: AttemptFailure,
): boolean {
  const { request, log, stopper, state } = turn;
  const stopCause = stopper.cause;
  if (stopCause !== "timeout" && stopCause !== "aborted") return false;
  const { base } = outcome;
  const ended = stopCause === "timeout" ? "timeout" : "aborted";
  state.attempts.push({ ...base, outcome: ended, reason: stopCause, action: "stop", error: failure.message });
  log.emit("lifecycle", { phase: "attempt_end", ...base, outcome: ended, reason: stopCause });
  state.payloads.push(...failure.kept);
  state.finalText = failure.partialText;
  state.partial = failure.partialText.length > 0;
  state.status = stopCause === "timeout" ? "timeout" : "aborted";
  state.reason = stopCause;
  state.errorMessage = stopMessage(stopCause, request.timeoutMs);
  run.session.dispose();
  stopper.session = undefined;
  return true;
}

/**
 * Records the failed attempt with what the recovery loop did and stores the fallback chain so far. With no
 * step left the failure ends the turn; otherwise the next attempt goes on without the failed message in its
 * context. Returns whether the loop goes on.
 */
export async function recordFailure(
  turn: TurnScope,
  run: AttemptRun,
  outcome: AttemptOutcome,
  failure: AttemptFailure,
  recovered: Recovered,
): Promise<boolean> {
  const { log, stopper, state } = turn;
  const { base } = outcome;
  const { action, reason, stalled } = recovered;
  state.attempts.push({
    ...base,
    outcome: stalled ? "timeout" : "error",
    reason,
    action: action ?? "surface",
    error: failure.message,
  });
  log.emit("lifecycle", {
    phase: "attempt_end",
    ...base,
    outcome: stalled ? "timeout" : "error",
    reason,
    action: action ?? "surface",
  });
  await recordFallbackChain(turn);

  if (action === undefined) {
    state.payloads.push(...run.payloads);
    state.finalText = failure.partialText;
    state.partial = failure.partialText.length > 0;
    state.status = stalled ? "timeout" : "error";
    state.reason = reason;
    state.errorMessage = failure.message;
    run.session.dispose();
    stopper.session = undefined;
    return false;
  }
  state.payloads.push(...failure.kept);
  if (action !== "compact_and_retry") omitFailedAssistant(run.sessionManager);
  run.session.dispose();
  stopper.session = undefined;
  return true;
}

/**
 * The loop ended with no attempt ending the turn: stopped by the caller or the timeout before an attempt
 * could start, the model calls spent by failed attempts (the turn ends as the limit's), or the attempt limit.
 */
export function endWithoutAttempt(turn: TurnScope, maxAttempts: number): void {
  const { request, limits, stopper, state } = turn;
  const stopCause = stopper.cause;
  if (
    state.status !== "ok" &&
    state.reason === undefined &&
    (stopCause === "timeout" || stopCause === "aborted")
  ) {
    state.status = stopCause === "timeout" ? "timeout" : "aborted";
    state.reason = stopCause;
    state.errorMessage = stopMessage(stopCause, request.timeoutMs);
  }
  if (state.status !== "ok" && state.reason === undefined && limits.breach !== undefined) {
    state.reason = limits.breach.reason;
    state.errorMessage = limits.breach.message;
    state.payloads.push({ text: limits.breach.notice });
  }
  if (state.attempts.length >= maxAttempts && state.status !== "ok" && state.reason === undefined) {
    state.reason = "attempt_limit";
    state.errorMessage = `gave up after ${maxAttempts} attempts`;
  }
}
