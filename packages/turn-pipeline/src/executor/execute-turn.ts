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
import { resolveAgentConfig } from "@agent-kernel/config";
import {
  AuthProfileStore,
  clampThinkLevel,
  type FailoverReason,
  loadProfileUsage,
  type ModelCandidate,
  normalizeThinkLevel,
  planRecovery,
  type RecoveryStep,
  recordProfileFailure,
  recordProfileSuccess,
  secretOf,
  supportedThinkLevels,
  type ThinkLevel,
} from "@agent-kernel/runtime-resolver";
import { SandboxUnavailableError } from "@agent-kernel/sandbox";
import type { FallbackAttempt, FinalRunStatus } from "@agent-kernel/session-store";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { AgentSession, SessionManager } from "@earendil-works/pi-coding-agent";
import { type PiSessionBinding, PiSessionBindingCache } from "../session-manager/index.ts";
import { type ReplyPayload, ReplyStream, subscribeReplyCallbacks } from "../streaming/index.ts";
import { DefaultToolCache, prepareToolSandbox, type ToolSandbox } from "../tools/index.ts";
import { assistantText, bridgeSession, TurnEventLog } from "./event-bridge.ts";
import { createHermeticSession, toPiThinkingLevel } from "./hermetic-session.ts";
import { toStoredRunEvents } from "./run-event-storage.ts";
import {
  BOOTSTRAP_ENTRY_TYPE,
  type BootstrapFile,
  buildKernelSystemPrompt,
  loadBootstrapFiles,
  recordedBootstrap,
} from "./system-prompt.ts";
import { resolveTurnLimits, TurnLimits } from "./turn-limits.ts";
import type { AttemptRecord, TurnContext, TurnRequest, TurnResult, TurnStatus, TurnUsage } from "./types.ts";
import {
  type AgentSessionShape,
  installRequestHook,
  type WarmAgentSession,
  WarmAgentSessions,
} from "./warm-agent-sessions.ts";

export const DEFAULT_TRANSIENT_RETRY_DELAY_MS = 2_500;
/** OpenClaw's run-loop bound is 32..160 iterations; ours counts provider attempts. */
const MAX_ATTEMPTS = 32;
/** Reasons that get the one same-model retry before the chain moves on. */
const TRANSIENT_REASONS: ReadonlySet<string> = new Set(["server_error", "overloaded", "timeout"]);

type StopCause = "timeout" | "aborted" | "stalled";

/**
 * The process's warm sessions: a turn continues from the pi manager the session's last turn left when the
 * store still holds exactly that (binding-cache.ts), instead of re-reading and re-indexing the transcript.
 */
const warmSessions = new PiSessionBindingCache({
  onDrop: (binding) => warmAgentSessions.drop(binding.sessionManager),
});
/** The AgentSession each warm binding's last turn answered with, while nothing it is made from changes. */
const warmAgentSessions = new WarmAgentSessions();
/** The default tools of every (store, workspace, agent, exec limits, policy), built and wrapped once. */
const defaultTools = new DefaultToolCache();

interface CandidateState {
  readonly candidate: ModelCandidate;
  readonly order: readonly string[];
}

const STATUS_TO_RUN: Readonly<Record<TurnStatus, FinalRunStatus>> = {
  ok: "succeeded",
  error: "failed",
  aborted: "aborted",
  timeout: "timed_out",
};

function addUsage(total: TurnUsage, message: AssistantMessage): TurnUsage {
  const usage = message.usage;
  return {
    input: total.input + (usage?.input ?? 0),
    output: total.output + (usage?.output ?? 0),
    cacheRead: total.cacheRead + (usage?.cacheRead ?? 0),
    cacheWrite: total.cacheWrite + (usage?.cacheWrite ?? 0),
    total: total.total + (usage?.totalTokens ?? 0),
    costUsd: total.costUsd + (usage?.cost?.total ?? 0),
  };
}

/** The latest model and thinking level the transcript records on the active branch. */
function recordedSettings(sessionManager: SessionManager): {
  model?: { provider: string; modelId: string };
  thinkingLevel?: string;
  hasMessages: boolean;
  hasUserMessage: boolean;
} {
  const out: ReturnType<typeof recordedSettings> = { hasMessages: false, hasUserMessage: false };
  for (const entry of sessionManager.getBranch()) {
    if (entry.type === "model_change") out.model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "thinking_level_change") out.thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "message") {
      out.hasMessages = true;
      if (entry.message.role === "user") out.hasUserMessage = true;
    }
  }
  return out;
}

/** Hides the attempt's failed assistant message from the next request's context (kept in the transcript). */
function omitFailedAssistant(sessionManager: SessionManager): void {
  const leaf = sessionManager.getLeafEntry();
  if (leaf?.type !== "message" || leaf.message.role !== "assistant") return;
  const stop = (leaf.message as AssistantMessage).stopReason;
  if (stop === "error" || stop === "aborted") sessionManager.appendContextEdit(leaf.id, null);
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

/** Runs one turn. Never throws for provider failures: they end in the result's status; bad inputs throw. */
export async function executeTurn(context: TurnContext, request: TurnRequest): Promise<TurnResult> {
  const now = context.now ?? Date.now;
  const runId = request.runId ?? randomUUID();
  const { store, runtime, config } = context;
  const callbacks = request.callbacks;
  const log = new TurnEventLog(runId, now, callbacks?.onAgentEvent);
  const agentConfig = resolveAgentConfig(config, context.agentId);
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

  // Stop causes: the caller's signal, the turn timeout, the stall watchdog. The first one wins.
  const runAbort = new AbortController();
  let stopCause: StopCause | undefined;
  let currentSession: AgentSession | undefined;
  const stop = (cause: StopCause) => {
    if (stopCause === undefined || (stopCause === "stalled" && cause !== "stalled")) stopCause = cause;
    if (cause !== "stalled") runAbort.abort(cause);
    void currentSession?.abort();
  };
  const onCallerAbort = () => stop("aborted");
  if (request.signal?.aborted) stopCause = "aborted";
  request.signal?.addEventListener("abort", onCallerAbort, { once: true });
  const turnTimer = request.timeoutMs > 0 ? setTimeout(() => stop("timeout"), request.timeoutMs) : undefined;
  // A limit hit stops what pi is doing (the session is aborted) without a stop cause: the attempt then ends
  // as the limit's, not as a failure to recover from.
  const limits = new TurnLimits(resolveTurnLimits(config, context.agentId, context.stallTimeoutMs), {
    onStall: () => stop("stalled"),
    onBreach: () => void currentSession?.abort(),
  });
  const stallMs = limits.values.streamIdleMs;

  const messagingTexts: string[] = [];
  const attempts: AttemptRecord[] = [];
  const payloads: ReplyPayload[] = [];
  let usage: TurnUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, costUsd: 0 };
  let finalText = "";
  let partial = false;
  let status: TurnStatus = "error";
  let reason: string | undefined;
  let errorMessage: string | undefined;
  let compactions = 0;
  let answered: { provider: string; model: string; profileId?: string | undefined } | undefined;
  // A transcript write refused before a model request: what the attempt reports (pi only sees its effects).
  let storeFailure: Error | undefined;
  // The session of a turn answered at its first attempt: kept for the session's next turn once settled.
  let keepable: WarmAgentSession | undefined;

  const bindingTarget = { agentId: context.agentId, sessionId: context.sessionId, cwd: context.workspaceDir };
  let binding: PiSessionBinding | undefined;
  // Set once no pi session of this turn can still write: only then may the binding serve the next turn.
  let settled = false;
  try {
    // A sandboxed session whose engine cannot start ends here: before anything is stored or sent, and never
    // by running its tools on the host instead.
    const toolSandbox = await prepareToolSandbox({
      config,
      sandbox: runtime.sandbox,
      engines: context.sandboxEngines,
    });
    if (toolSandbox.sandboxed) log.emit("lifecycle", { phase: "sandbox", ...sandboxDecision(toolSandbox) });
    // PostgreSQL: loads (or refreshes) the transcript into memory, fenced by the session's lease when the
    // kernel holds one; the binding check below then sees other processes' entries. A no-op on SQLite.
    await store.loadTranscript(context.agentId, context.sessionId);
    const activeBinding = warmSessions.acquire(store, bindingTarget);
    binding = activeBinding;
    activeBinding.deferWrites();
    const sessionManager = activeBinding.sessionManager;
    const bootstrapFiles = await resolveBootstrap(context, sessionManager, mode, agentConfig);
    const tools = defaultTools.toolsFor(
      {
        workspaceDir: context.workspaceDir,
        agentId: context.agentId,
        store,
        messageSink: context.deliverySink,
        onMessageSent: (text) => messagingTexts.push(text),
        execTimeoutSeconds: context.exec?.timeoutSeconds,
        execMaxOutputBytes: context.exec?.maxOutputBytes,
        sandbox: toolSandbox,
      },
      context.toolPolicy,
    );
    const toolNames = tools.map((tool) => tool.name);

    // Read from disk only when a profile is in play: a turn without profiles never needs the file.
    let loadedProfiles: AuthProfileStore | undefined;
    const profiles = (): AuthProfileStore => {
      loadedProfiles ??= AuthProfileStore.load(config, runtime.agentDir.value);
      return loadedProfiles;
    };
    const orderFor = async (candidate: ModelCandidate, index: number): Promise<readonly string[]> => {
      if (index === 0) return runtime.authProfile.order;
      return profiles().resolveOrder({
        provider: candidate.provider,
        usage: await loadProfileUsage(store.auth, context.agentId, now()),
        now: now(),
        forModel: candidate.model,
      });
    };
    const chain = runtime.candidates.length > 0 ? runtime.candidates : [firstCandidate];
    let candidateIndex = 0;
    let current: CandidateState = { candidate: firstCandidate, order: await orderFor(firstCandidate, 0) };
    let profileIndex = 0;
    let rotations = 0;
    let thinking: ThinkLevel = runtime.thinking.value;
    const attemptedThinking = new Set<string>();
    let sameRetries = 0;
    let transientRetried = false;
    let prompted = false;

    for (let index = 0; index < MAX_ATTEMPTS; index++) {
      if (stopCause !== undefined && stopCause !== "stalled") break;
      stopCause = undefined;
      if (!limits.mayStartAttempt()) break;
      const model = context.models.resolveModel(current.candidate);
      const keepRecentTokens = Math.max(256, Math.min(20_000, Math.floor(model.contextWindow / 4)));
      const profileId = current.order[profileIndex];
      const profile = profileId === undefined ? undefined : profiles().get(profileId);
      const level = clampThinkLevel(thinking, supportedThinkLevels(model));
      const modelRuntime = await context.models.runtimeFor(model, {
        profileId,
        secret: profile === undefined ? undefined : secretOf(profile),
      });

      // Make the transcript say which model and level this attempt runs with (pi records them itself only
      // for a session with no messages), so a restored session resumes with what actually ran.
      const recorded = recordedSettings(sessionManager);
      if (recorded.hasMessages) {
        if (recorded.model?.provider !== model.provider || recorded.model.modelId !== model.id)
          sessionManager.appendModelChange(model.provider, model.id);
        if (recorded.thinkingLevel !== toPiThinkingLevel(level))
          sessionManager.appendThinkingLevelChange(toPiThinkingLevel(level));
      }
      const shape: AgentSessionShape = {
        modelRuntime,
        model,
        thinkingLevel: toPiThinkingLevel(level),
        tools,
        systemPrompt: buildKernelSystemPrompt({
          mode,
          workspaceDir: toolSandbox.sandboxed ? toolSandbox.cwd : context.workspaceDir,
          ...(toolSandbox.sandboxed ? { sandbox: sandboxPromptFacts(toolSandbox) } : {}),
          toolNames,
          agentId: context.agentId,
          provider: model.provider,
          model: model.id,
          thinkingLevel: level,
        }),
        extraSystemPrompt: request.extraSystemPrompt,
        bootstrapFiles,
        keepRecentTokens,
      };
      const warm = index === 0 ? warmAgentSessions.take(sessionManager, shape) : undefined;
      const session =
        warm?.session ??
        (await createHermeticSession({
          ...shape,
          cwd: context.workspaceDir,
          thinkingLevel: recorded.hasMessages ? undefined : shape.thinkingLevel,
          sessionManager,
        }));
      currentSession = session;
      // Whatever the model is about to be sent is stored first (see the header).
      const requestHook = warm?.requestHook ?? installRequestHook(session);
      requestHook.beforeRequest = () => {
        limits.beforeRequest();
        try {
          activeBinding.flushWrites();
        } catch (error) {
          storeFailure ??= error instanceof Error ? error : new Error(String(error));
          throw storeFailure;
        }
      };
      requestHook.beforeToolCall = () => limits.beforeToolCall();
      requestHook.endAfterTurn = (toolResults) => limits.endAfterTurn(toolResults);
      const reply = new ReplyStream({
        // partial text is worked out only for a caller that shows it
        partials: callbacks?.onPartialReply !== undefined,
        ...(context.reply ?? {}),
        messagingToolSentTexts: () => messagingTexts,
      });
      const unsubscribeCallbacks = subscribeReplyCallbacks(reply, {
        ...(callbacks?.onPartialReply ? { onPartialReply: callbacks.onPartialReply } : {}),
        ...(callbacks?.onBlockReply ? { onBlockReply: callbacks.onBlockReply } : {}),
        ...(callbacks?.onReasoningStream ? { onReasoningStream: callbacks.onReasoningStream } : {}),
      });
      const { observation, unsubscribe } = bridgeSession(session, { log, reply, callbacks, limits });
      const startedAt = now();
      log.emit("lifecycle", {
        phase: "attempt_start",
        attempt: index + 1,
        provider: model.provider,
        model: model.id,
        thinkingLevel: level,
        ...(profileId === undefined ? {} : { authProfileId: profileId }),
      });

      let thrown: string | undefined;
      try {
        if (stopCause !== undefined) {
          // Aborted before this attempt could start: nothing is sent.
        } else if (!prompted) {
          request.steering?.attach(session);
          prompted = true;
          await session.prompt(request.prompt, {
            expandPromptTemplates: false,
            ...(request.images && request.images.length > 0 ? { images: [...request.images] } : {}),
          });
        } else {
          request.steering?.attach(session);
          await session.agent.continue();
        }
      } catch (error) {
        thrown = error instanceof Error ? error.message : String(error);
      } finally {
        request.steering?.detach();
        limits.activity(false);
        unsubscribe();
      }
      const attemptPayloads = reply.finish();
      unsubscribeCallbacks();
      activeBinding.flushWrites();
      for (const message of observation.assistantMessages) usage = addUsage(usage, message);
      const last = observation.assistantMessages.at(-1);
      const lastFailed = last !== undefined && (last.stopReason === "error" || last.stopReason === "aborted");
      const failure =
        stopCause !== undefined
          ? stopCause === "stalled"
            ? `LLM request timed out: no data from the stream for ${stallMs} ms`
            : (last?.errorMessage ?? `turn ${stopCause}`)
          : storeFailure !== undefined
            ? storeFailure.message
            : thrown !== undefined
              ? thrown
              : lastFailed
                ? (last.errorMessage ?? `assistant ${last.stopReason}`)
                : last === undefined
                  ? "the model returned no message"
                  : undefined;
      const durationMs = now() - startedAt;
      const base = {
        index: index + 1,
        provider: model.provider,
        model: model.id,
        ...(profileId === undefined ? {} : { authProfileId: profileId }),
        thinkingLevel: level,
        startedAt,
        durationMs,
      };

      // A limit hit ends the turn with its own reason (turn-limits.ts): what the attempt delivered is kept and
      // the user's one line is the last payload (a cut reply already ends with it).
      const breach = limits.breach;
      if (breach !== undefined && stopCause !== "timeout" && stopCause !== "aborted") {
        const ended = { outcome: "error", reason: breach.reason, action: "stop" } as const;
        attempts.push({ ...base, ...ended, error: breach.message });
        log.emit("lifecycle", { phase: "attempt_end", ...base, ...ended });
        payloads.push(...attemptPayloads.filter((payload) => !payload.isError));
        if (!breach.inReply) payloads.push({ text: breach.notice });
        finalText =
          last !== undefined && !lastFailed ? assistantText(last) : observation.streamingText.trim();
        partial = true;
        status = "error";
        reason = breach.reason;
        errorMessage = breach.message;
        session.dispose();
        currentSession = undefined;
        break;
      }

      if (failure === undefined) {
        attempts.push({ ...base, outcome: "ok" });
        payloads.push(...attemptPayloads);
        finalText = last ? assistantText(last) : "";
        status = "ok";
        answered = { provider: model.provider, model: model.id, profileId };
        log.emit("lifecycle", { phase: "attempt_end", ...base, outcome: "ok" });
        if (index === 0) keepable = { session, shape, requestHook };
        else session.dispose();
        currentSession = undefined;
        break;
      }

      // Keep what earlier messages of this attempt delivered; the failed message's error payload goes.
      const kept = attemptPayloads.filter((payload) => !payload.isError);
      const partialText = last && lastFailed ? assistantText(last) : observation.streamingText.trim();

      if (stopCause === "timeout" || stopCause === "aborted") {
        const outcome = stopCause === "timeout" ? "timeout" : "aborted";
        attempts.push({ ...base, outcome, reason: stopCause, action: "stop", error: failure });
        log.emit("lifecycle", { phase: "attempt_end", ...base, outcome, reason: stopCause });
        payloads.push(...kept);
        finalText = partialText;
        partial = partialText.length > 0;
        status = stopCause === "timeout" ? "timeout" : "aborted";
        reason = stopCause;
        errorMessage =
          stopCause === "timeout" ? `turn timed out after ${request.timeoutMs} ms` : "aborted by the caller";
        session.dispose();
        currentSession = undefined;
        break;
      }

      const stalled = stopCause === "stalled";
      const plan = planRecovery({
        message: failure,
        provider: model.provider,
        attemptedThinking,
        overflowCompactions: compactions,
      });
      const failoverReason: FailoverReason | null = stalled ? "timeout" : plan.reason;
      log.emit("error", {
        attempt: index + 1,
        reason: stalled ? "stalled" : (failoverReason ?? "unclassified"),
        message: failure,
      });

      // Decide the next step: the plan's steps in order, the first that applies.
      let action: string | undefined;
      // A refused transcript write is not the provider's fault: no other model or profile can fix it.
      const recoverySteps: readonly RecoveryStep[] =
        storeFailure !== undefined
          ? []
          : failoverReason !== null && TRANSIENT_REASONS.has(failoverReason) && !transientRetried
            ? [{ kind: "retry_same", maxAttempts: 1 }, ...plan.steps]
            : plan.steps;
      for (const step of recoverySteps) {
        if (step.kind === "lower_thinking") {
          attemptedThinking.add(level);
          thinking = step.level;
          action = `lower_thinking:${step.level}`;
          break;
        }
        if (step.kind === "compact_and_retry") {
          omitFailedAssistant(sessionManager);
          // The bridge is unsubscribed by now: the loop reports its own compaction.
          log.emit("compaction", { phase: "start", reason: "overflow" });
          try {
            const compacted = await session.compact();
            compactions += 1;
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
            failoverReason !== null && TRANSIENT_REASONS.has(failoverReason) && !transientRetried;
          if (transient) {
            transientRetried = true;
            action = "transient_retry";
            await sleep(context.transientRetryDelayMs ?? DEFAULT_TRANSIENT_RETRY_DELAY_MS, runAbort.signal);
            break;
          }
          const limit = Math.min(step.maxAttempts, context.rateLimitRetries ?? 0);
          if (sameRetries < limit) {
            sameRetries += 1;
            action = "retry_same";
            await sleep(context.transientRetryDelayMs ?? DEFAULT_TRANSIENT_RETRY_DELAY_MS, runAbort.signal);
            break;
          }
          continue;
        }
        if (step.kind === "cool_down") {
          if (profileId !== undefined) {
            await recordProfileFailure(store.auth, {
              agentId: context.agentId,
              profileId,
              reason: step.reason,
              now: now(),
              modelId: model.id,
              cooldowns: config.auth.cooldowns,
            });
            log.emit("lifecycle", { phase: "cooldown", authProfileId: profileId, reason: step.reason });
          }
          continue;
        }
        if (step.kind === "rotate_profile") {
          const limit = step.maxRotations ?? Number.POSITIVE_INFINITY;
          if (profileIndex + 1 < current.order.length && rotations < limit) {
            profileIndex += 1;
            rotations += 1;
            attemptedThinking.clear();
            sameRetries = 0;
            action = `rotate_profile:${current.order[profileIndex]}`;
            break;
          }
          continue;
        }
        if (step.kind === "fallback_model") {
          if (candidateIndex + 1 < chain.length) {
            candidateIndex += 1;
            const next = chain[candidateIndex] as ModelCandidate;
            current = { candidate: next, order: await orderFor(next, candidateIndex) };
            profileIndex = 0;
            rotations = 0;
            sameRetries = 0;
            attemptedThinking.clear();
            thinking = normalizeThinkLevel(runtime.thinking.value) ?? "off";
            action = `fallback_model:${next.provider}/${next.model}`;
            break;
          }
          continue;
        }
        // surface: nothing left to try.
        break;
      }

      const recoveryReason = stalled ? "stalled" : (failoverReason ?? "unclassified");
      attempts.push({
        ...base,
        outcome: stalled ? "timeout" : "error",
        reason: recoveryReason,
        action: action ?? "surface",
        error: failure,
      });
      log.emit("lifecycle", {
        phase: "attempt_end",
        ...base,
        outcome: stalled ? "timeout" : "error",
        reason: recoveryReason,
        action: action ?? "surface",
      });
      await store.runs.update(runId, { fallbackChain: attempts.map(toFallbackAttempt) });

      if (action === undefined) {
        payloads.push(...attemptPayloads);
        finalText = partialText;
        partial = partialText.length > 0;
        status = stalled ? "timeout" : "error";
        reason = recoveryReason;
        errorMessage = failure;
        session.dispose();
        currentSession = undefined;
        break;
      }
      payloads.push(...kept);
      if (action !== "compact_and_retry") omitFailedAssistant(sessionManager);
      session.dispose();
      currentSession = undefined;
    }
    if (status !== "ok" && reason === undefined && (stopCause === "timeout" || stopCause === "aborted")) {
      status = stopCause === "timeout" ? "timeout" : "aborted";
      reason = stopCause;
      errorMessage =
        stopCause === "timeout" ? `turn timed out after ${request.timeoutMs} ms` : "aborted by the caller";
    }
    // Model calls spent by failed attempts: no attempt started, the turn ends as the limit's.
    if (status !== "ok" && reason === undefined && limits.breach !== undefined) {
      reason = limits.breach.reason;
      errorMessage = limits.breach.message;
      payloads.push({ text: limits.breach.notice });
    }
    if (attempts.length >= MAX_ATTEMPTS && status !== "ok" && reason === undefined) {
      reason = "attempt_limit";
      errorMessage = `gave up after ${MAX_ATTEMPTS} attempts`;
    }
    activeBinding.writeThrough();
    settled = true;
    if (status === "ok" && answered?.profileId !== undefined) {
      await recordProfileSuccess(store.auth, {
        agentId: context.agentId,
        profileId: answered.profileId,
        now: now(),
      });
    }
  } catch (error) {
    status = stopCause === "timeout" ? "timeout" : stopCause === "aborted" ? "aborted" : "error";
    if (error instanceof SandboxUnavailableError) reason ??= "sandbox_unavailable";
    reason ??= stopCause ?? "internal";
    errorMessage = error instanceof Error ? error.message : String(error);
    currentSession?.dispose();
  } finally {
    request.steering?.end();
    if (turnTimer) clearTimeout(turnTimer);
    limits.dispose();
    request.signal?.removeEventListener("abort", onCallerAbort);
    if (settled && binding !== undefined) {
      // Kept before the binding goes back: a cache that drops the binding disposes what is kept beside it.
      if (keepable !== undefined) warmAgentSessions.keep(binding.sessionManager, keepable);
      warmSessions.release(store, bindingTarget, binding);
    } else {
      keepable?.session.dispose();
      if (binding !== undefined) storeWhatIsHeld(binding);
    }
  }

  // The turn's transcript writes are durable only once flushed (PostgreSQL; instant on SQLite): a flush
  // refused (server gone, the session's lease lost) fails the turn instead of reporting an unstored answer.
  if (binding !== undefined) {
    try {
      await flushTranscript(store, binding.transcript);
    } catch (error) {
      status = "error";
      reason = "internal";
      errorMessage = `the transcript was not stored: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  log.emit("lifecycle", {
    phase: "end",
    status,
    ...(reason === undefined ? {} : { reason }),
    ...(errorMessage === undefined ? {} : { errorMessage }),
  });
  const fallback =
    answered && (answered.provider !== firstCandidate.provider || answered.model !== firstCandidate.model)
      ? { provider: answered.provider, model: answered.model }
      : undefined;
  const lastAttempt = attempts.at(-1);
  // The events and the final status in one write (one transaction on SQLite); see run-event-storage.ts for
  // what is stored of the events.
  await store.runs.finish(runId, {
    events: toStoredRunEvents(log.events, context.runEventStorage ?? "coalesce-deltas"),
    status: STATUS_TO_RUN[status],
    endedAt: now(),
    ...(lastAttempt ? { provider: lastAttempt.provider, model: lastAttempt.model } : {}),
    ...(lastAttempt ? { thinkingLevel: lastAttempt.thinkingLevel } : {}),
    ...(lastAttempt?.authProfileId === undefined ? {} : { authProfileId: lastAttempt.authProfileId }),
    fallbackChain: attempts.map(toFallbackAttempt),
    usage: {
      input: usage.input,
      output: usage.output,
      cacheRead: usage.cacheRead,
      cacheWrite: usage.cacheWrite,
      total: usage.total,
    },
    costUsd: usage.costUsd,
    ...(reason === undefined ? {} : { errorReason: reason }),
    ...(errorMessage === undefined ? {} : { errorMessage }),
  });

  return {
    runId,
    status,
    ...(reason === undefined ? {} : { reason }),
    ...(errorMessage === undefined ? {} : { errorMessage }),
    payloads,
    assistantText: finalText,
    partial,
    usage,
    ...(answered ? { provider: answered.provider, model: answered.model } : {}),
    ...(answered?.profileId === undefined ? {} : { authProfileId: answered.profileId }),
    attempts,
    ...(fallback ? { fallback } : {}),
    compactions,
    messagingToolTexts: messagingTexts,
    events: log.events,
  };
}

/** What the run record says of a sandboxed turn's tools: engine, mounts, network, limits. */
function sandboxDecision(sandbox: ToolSandbox): Record<string, unknown> {
  const status = sandbox.status?.available ? sandbox.status : undefined;
  return {
    engine: sandbox.engine.name,
    ...(status
      ? { version: status.version, processLimit: status.processLimit, memoryLimit: status.memoryLimit }
      : {}),
    ...(status && status.warnings.length > 0 ? { warnings: status.warnings } : {}),
    cwd: sandbox.cwd,
    mounts: sandbox.mounts.map((mount) => ({ ...mount })),
    network: sandbox.network,
    limits: { ...sandbox.limits },
  };
}

/** What the model is told of its sandbox. */
function sandboxPromptFacts(sandbox: ToolSandbox): { mounts: string[]; network: boolean } {
  return {
    mounts: sandbox.mounts.map((mount) => `${mount.path} (${mount.writable ? "read-write" : "read-only"})`),
    network: sandbox.network,
  };
}

/**
 * A turn that ended in an internal error still stores what pi appended, as the write-through mirror would
 * have; if the store refuses, the binding is out of sync and the next turn reopens the session from the store.
 */
function storeWhatIsHeld(binding: PiSessionBinding): void {
  try {
    binding.writeThrough();
  } catch {
    // The turn already ends in an error; the transcript keeps what was stored before.
  }
}

/** The transcript's own flush where it has one (PostgreSQL), so another session's failure never fails this turn. */
function flushTranscript(
  store: TurnContext["store"],
  transcript: PiSessionBinding["transcript"],
): Promise<void> {
  return "flush" in transcript && typeof transcript.flush === "function"
    ? (transcript.flush as () => Promise<void>).call(transcript)
    : store.flush();
}

function toFallbackAttempt(attempt: AttemptRecord): FallbackAttempt {
  return {
    provider: attempt.provider,
    model: attempt.model,
    ...(attempt.authProfileId === undefined ? {} : { authProfileId: attempt.authProfileId }),
    ...(attempt.reason === undefined ? {} : { reason: attempt.reason }),
    ...(attempt.error === undefined ? {} : { error: attempt.error }),
  };
}

/** First turn: read the files and record them; later turns: replay the record (no disk read). */
async function resolveBootstrap(
  context: TurnContext,
  sessionManager: SessionManager,
  mode: "full" | "minimal",
  agentConfig: ReturnType<typeof resolveAgentConfig>,
): Promise<readonly BootstrapFile[]> {
  const branch = sessionManager.getBranch();
  const recorded = recordedBootstrap(branch as never);
  if (recorded !== undefined) return recorded;
  const firstTurn = !branch.some((entry) => entry.type === "message" && entry.message.role === "user");
  if (!firstTurn || agentConfig?.skipBootstrap) return [];
  const files = await loadBootstrapFiles(context.workspaceDir, {
    maxChars: agentConfig?.bootstrapMaxChars ?? 20_000,
    mode,
  });
  sessionManager.appendCustomEntry(BOOTSTRAP_ENTRY_TYPE, { files });
  return files;
}
