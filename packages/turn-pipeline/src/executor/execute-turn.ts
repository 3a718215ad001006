// `executeTurn`: one prompt turn through pi, from the prepared inputs to a `TurnResult`. Owns: the run record
// (started, every attempt recorded, finished with status and reason), the transcript binding, the
// first-turn bootstrap record, tool wiring, one hermetic AgentSession per attempt (a warm session's first
// attempt may continue on the one its last turn answered with), the recovery loop driven by
// runtime-resolver's `planRecovery` (thinking fallback, overflow compaction ≤ 3, one transient retry,
// persisted cooldowns, profile rotation, model fallback), the turn timeout, the caller's AbortSignal, and
// ending the turn when one of its limits is hit (turn-limits.ts counts, watches the stream and cuts; the stall
// watchdog is part of it). A plain async function over explicit inputs: the kernel wraps it with lanes and a run
// registry. Does not own: deciding the model, profiles or policy (runtime-resolver, tool-policy), lanes,
// or delivery (the entry point).
//
// This file is the turn's outline; its parts live beside it: turn-stop.ts (the stop causes), turn-tools.ts
// (the sandbox preflight and the tools), turn-transcript.ts (the executor's own transcript reads and writes),
// attempt-run.ts (one attempt through pi), attempt-outcome.ts (what an attempt's end means for the turn),
// recovery.ts (the recovery loop's position and steps), run-record.ts (finishing the run and the result),
// turn-state.ts (what they share).
//
// Nothing is stored twice: the user message is sent once (`prompt`); every later attempt hides the failed
// assistant message from the context (a `context_edit`, as pi's own retry does) and continues from the
// stored context (`agent.continue()`), so the transcript holds one user message and every attempt's answer.
//
// When transcript entries become durable: the binding holds what pi appends (`deferWrites`) and stores it in
// one transaction right before every model request (so whatever a model is sent — the user message first of
// all — is stored before it is sent), at the end of every attempt, and at the end of the turn, before the run
// is finished. A first turn's bootstrap record, model and thinking entries, system message and user message
// are one commit; a turn with tool calls commits once per model request instead of once per tool result.
//
// A warm session's next turn runs on the AgentSession its last turn answered with when nothing it is made
// from changed (warm-agent-sessions.ts): pi's own interactive mode runs every prompt of a session that way.
import { randomUUID } from "node:crypto";
import { recordProfileSuccess } from "@agent-kernel/runtime-resolver";
import { SandboxUnavailableError } from "@agent-kernel/sandbox";
import { type PiSessionBinding, PiSessionBindingCache } from "../session-manager/index.ts";
import { buildSkillsSnapshot, resolveSessionSkills } from "../skills/index.ts";
import { withSkillFolders } from "../tools/tool-sandbox.ts";
import { agentConfigOf, turnLimitValuesOf } from "./agent-settings.ts";
import {
  classifyAttempt,
  endAnswered,
  endOnLimit,
  endOnStorageFailure,
  endStopped,
  endWithoutAttempt,
  recordFailure,
} from "./attempt-outcome.ts";
import { AttemptRunner } from "./attempt-run.ts";
import { TurnEventLog } from "./event-bridge.ts";
import { Recovery } from "./recovery.ts";
import { finishRun } from "./run-record.ts";
import { STORAGE_REASON, storageFailureOf } from "./storage-failure.ts";
import { RunTrace } from "./tracing.ts";
import { TurnLimits } from "./turn-limits.ts";
import { newTurnState, type TurnScope } from "./turn-state.ts";
import { TurnStopper } from "./turn-stop.ts";
import { prepareTurnSandbox, turnTools } from "./turn-tools.ts";
import {
  flushTranscript,
  recordedBootstrapFiles,
  resolveBootstrap,
  storeWhatIsHeld,
} from "./turn-transcript.ts";
import type { TurnContext, TurnRequest, TurnResult } from "./types.ts";
import { WarmAgentSessions } from "./warm-agent-sessions.ts";

/** OpenClaw's run-loop bound is 32..160 iterations; ours counts provider attempts. */
const MAX_ATTEMPTS = 32;

/**
 * The process's warm sessions: a turn continues from the pi manager the session's last turn left when the
 * store still holds exactly that (binding-cache.ts), instead of re-reading and re-indexing the transcript.
 */
const warmSessions = new PiSessionBindingCache({
  onDrop: (binding) => warmAgentSessions.drop(binding.sessionManager),
});
/** The AgentSession each warm binding's last turn answered with, while nothing it is made from changes. */
const warmAgentSessions = new WarmAgentSessions();

/** Runs one turn. Never throws for provider failures: they end in the result's status; bad inputs throw. */
export async function executeTurn(context: TurnContext, request: TurnRequest): Promise<TurnResult> {
  const now = context.now ?? Date.now;
  const runId = request.runId ?? randomUUID();
  const { store, runtime, config } = context;
  const log = new TurnEventLog(runId, now, request.callbacks?.onAgentEvent);
  const agentConfig = agentConfigOf(config, context.agentId);
  const mode = context.promptMode ?? "full";
  const firstCandidate = runtime.candidates[0] ?? {
    provider: runtime.model.value.provider,
    model: runtime.model.value.model,
    origin: "requested" as const,
  };

  await store.runs.start({
    runId,
    agentId: context.agentId,
    sessionKey: context.sessionKey,
    sessionId: context.sessionId,
    entryPoint: request.entryPoint,
    startedAt: now(),
    provider: firstCandidate.provider,
    model: firstCandidate.model,
    thinkingLevel: runtime.thinking.value,
  });
  log.emit("lifecycle", { phase: "start", entryPoint: request.entryPoint, sessionId: context.sessionId });
  const runTrace = RunTrace.start(runId, context, request, firstCandidate);

  // Stop causes: the caller's signal, the turn timeout, the stall watchdog. The first one wins. The turn
  // timeout is on the limits' watchdog timer (one timer a turn), not a timer of the stopper's own.
  const stopper = new TurnStopper(request.signal, 0);
  // A limit hit stops what pi is doing (the session is aborted) without a stop cause: the attempt then ends
  // as the limit's, not as a failure to recover from.
  const limits = new TurnLimits(
    turnLimitValuesOf(config, context.agentId, context.stallTimeoutMs),
    { onStall: () => stopper.stop("stalled"), onBreach: () => stopper.abortSession() },
    { ms: request.timeoutMs, onTimeout: () => stopper.stop("timeout") },
  );
  const state = newTurnState();
  const turn: TurnScope = { context, request, runId, now, log, limits, stopper, state };

  const bindingTarget = { agentId: context.agentId, sessionId: context.sessionId, cwd: context.workspaceDir };
  let binding: PiSessionBinding | undefined;
  // Set once no pi session of this turn can still write: only then may the binding serve the next turn.
  let settled = false;
  try {
    // A sandboxed session whose engine cannot start ends here: before anything is stored or sent, and never
    // by running its tools on the host instead.
    const toolSandbox = await prepareTurnSandbox(context, log);
    // PostgreSQL: loads (or refreshes) the transcript into memory, fenced by the session's lease when the
    // kernel holds one; the binding check below then sees other processes' entries. A no-op on SQLite.
    await store.loadTranscript(context.agentId, context.sessionId);
    const activeBinding = warmSessions.acquire(store, bindingTarget);
    binding = activeBinding;
    activeBinding.deferWrites();
    const sessionManager = activeBinding.sessionManager;
    const bootstrapFiles =
      recordedBootstrapFiles(sessionManager) ??
      (await resolveBootstrap(context, sessionManager, mode, agentConfig));
    // The session's skills: its recorded snapshot, or one taken now and recorded (skills/snapshot.ts).
    const skills = resolveSessionSkills(sessionManager, () =>
      buildSkillsSnapshot(config, context.workspaceDir, { stateDir: context.runtime.stateDir }),
    );
    // The listed skills' folders readable (read-only), the catalog naming them where the tools see them.
    const skillAccess = withSkillFolders(toolSandbox, skills);
    // The session's last tools while nothing they are made from changed (the same objects keep its AgentSession warm).
    const tools = turnTools(
      context,
      skillAccess.sandbox,
      state.messagingTexts,
      request.steering,
      sessionManager,
    );
    const recovery = new Recovery(turn, sessionManager, firstCandidate);
    const attempts = new AttemptRunner(turn, {
      binding: activeBinding,
      warmAgentSessions,
      mode,
      tools,
      toolSandbox: skillAccess.sandbox,
      bootstrapFiles,
      skillsPrompt: skillAccess.skillsPrompt,
      trace: runTrace,
    });

    for (let index = 0; index < MAX_ATTEMPTS; index++) {
      if (stopper.cause !== undefined && stopper.cause !== "stalled") break;
      stopper.cause = undefined;
      if (!limits.mayStartAttempt()) break;
      // The attempt's writes are stored before each of its model requests and once more when it ends.
      const run = await attempts.run(index, recovery);
      const outcome = classifyAttempt(turn, run);
      run.trace.end(outcome);
      // In this order: the store failing, a limit hit, an answer, the caller's abort or the timeout; else a
      // failure to recover from.
      if (endOnStorageFailure(turn, run, outcome)) break;
      if (endOnLimit(turn, run, outcome)) break;
      const failure = outcome.failure;
      if (failure === undefined) {
        endAnswered(turn, run, outcome);
        break;
      }
      if (endStopped(turn, run, outcome, failure)) break;
      const recovered = await recovery.recover(run, failure.message);
      if (!(await recordFailure(turn, run, outcome, failure, recovered))) break;
    }
    endWithoutAttempt(turn, MAX_ATTEMPTS);
    // The end of the turn: whatever is still held is stored.
    activeBinding.writeThrough();
    settled = true;
    if (state.status === "ok" && state.answered?.profileId !== undefined) {
      await recordProfileSuccess(store.auth, {
        agentId: context.agentId,
        profileId: state.answered.profileId,
        now: now(),
      });
    }
  } catch (error) {
    const stopCause = stopper.cause;
    const storage = storageFailureOf(error, store);
    state.status = stopCause === "timeout" ? "timeout" : stopCause === "aborted" ? "aborted" : "error";
    if (error instanceof SandboxUnavailableError) state.reason ??= "sandbox_unavailable";
    state.reason ??= stopCause ?? "internal";
    state.errorMessage = error instanceof Error ? error.message : String(error);
    // The store failed the turn (its transcript or state could not be read or written): said as such, with
    // the file and what to do, whatever the turn had got to; an answer already gathered stays in the result.
    if (storage !== undefined) {
      state.status = "error";
      state.reason = STORAGE_REASON;
      state.errorMessage = storage.message;
    }
    stopper.session?.dispose();
  } finally {
    request.steering?.end();
    stopper.clearTimer();
    limits.dispose();
    stopper.release();
    if (settled && binding !== undefined) {
      // Kept before the binding goes back: a cache that drops the binding disposes what is kept beside it.
      if (state.keepable !== undefined) warmAgentSessions.keep(binding.sessionManager, state.keepable);
      warmSessions.release(store, bindingTarget, binding);
    } else {
      state.keepable?.session.dispose();
      if (binding !== undefined) storeWhatIsHeld(binding);
    }
  }

  // The turn's transcript writes are durable only once flushed (PostgreSQL; instant on SQLite): a flush
  // refused (server gone, the session's lease lost) fails the turn instead of reporting an unstored answer.
  if (binding !== undefined) {
    try {
      await flushTranscript(store, binding.transcript);
    } catch (error) {
      const storage = storageFailureOf(error, store);
      state.status = "error";
      state.reason = storage === undefined ? "internal" : STORAGE_REASON;
      state.errorMessage =
        storage?.message ??
        `the transcript was not stored: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return runTrace.finish(state, finishRun(turn, firstCandidate));
}
