// One attempt of a turn, up to what pi returned. Owns: resolving the attempt's model, credential and thinking
// level (what the recovery loop says it runs with), recording them in the transcript, the AgentSession's shape
// and its system prompt, taking the warm session for a first attempt when its shape matches or creating a
// hermetic one, what runs before every model request (the limits, then the held transcript writes: whatever
// the model is sent is stored first) and tool call, the attempt's ReplyStream and event bridge, sending the
// user message once (`prompt`) and continuing from the stored context after that (`agent.continue()`), and
// collecting the attempt's payloads, messages and usage. Does not own: what the attempt's end means for the
// turn (attempt-outcome.ts), recovery (recovery.ts), or keeping and releasing warm sessions (execute-turn.ts).
import {
  clampThinkLevel,
  secretOf,
  supportedThinkLevels,
  type ThinkLevel,
} from "@agent-kernel/runtime-resolver";
import type { Api, Model } from "@earendil-works/pi-ai";
import type { AgentSession, SessionManager, ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { PiSessionBinding } from "../session-manager/index.ts";
import { type ReplyPayload, ReplyStream, subscribeReplyCallbacks } from "../streaming/index.ts";
import type { ToolSandbox } from "../tools/index.ts";
import { promptSettingsOf } from "./agent-settings.ts";
import { type AttemptObservation, bridgeSession } from "./event-bridge.ts";
import { contextShapingFor, createHermeticSession, toPiThinkingLevel } from "./hermetic-session.ts";
import { missingCredential, ProviderAnswerWatch } from "./provider-answer.ts";
import type { Recovery } from "./recovery.ts";
import { storageFailureOf } from "./storage-failure.ts";
import { type BootstrapFile, kernelSystemPromptFor, systemPromptHash } from "./system-prompt.ts";
import type { AttemptTrace, RunTrace } from "./tracing.ts";
import { attachTurnImages, fitImagesToModel, NO_TURN_IMAGES } from "./turn-images.ts";
import { addUsage, type TurnScope } from "./turn-state.ts";
import { sandboxPromptFacts } from "./turn-tools.ts";
import { recordAttemptSettings } from "./turn-transcript.ts";
import type { PromptMode } from "./types.ts";
import {
  type AgentSessionShape,
  installRequestHook,
  type RequestHook,
  type WarmAgentSessions,
} from "./warm-agent-sessions.ts";

/** What the turn's attempts run on: the same for each of them. */
export interface AttemptInputs {
  readonly binding: PiSessionBinding;
  readonly warmAgentSessions: WarmAgentSessions;
  readonly mode: PromptMode;
  readonly tools: readonly ToolDefinition[];
  readonly toolSandbox: ToolSandbox;
  readonly bootstrapFiles: readonly BootstrapFile[];
  /** The session's skills catalog (its snapshot), listed in the prompt's Skills section. */
  readonly skillsPrompt?: string;
  readonly trace: RunTrace;
}

/** One attempt as pi left it. */
export interface AttemptRun {
  /** 0-based; the attempt records count from 1. */
  readonly index: number;
  readonly model: Model<Api>;
  readonly profileId: string | undefined;
  readonly level: ThinkLevel;
  readonly session: AgentSession;
  readonly shape: AgentSessionShape;
  readonly requestHook: RequestHook;
  readonly sessionManager: SessionManager;
  readonly startedAt: number;
  /** The attempt's ReplyStream's final list. */
  readonly payloads: readonly ReplyPayload[];
  readonly observation: AttemptObservation;
  /** What `prompt` or `continue` threw, if anything; or why nothing was sent (no credential). */
  readonly thrown: string | undefined;
  /** The wait (ms) the provider asked for when it refused the attempt's last request (`Retry-After`). */
  readonly retryAfterMs: number | undefined;
  /** The attempt's span: ended by the executor once the attempt is classified. */
  readonly trace: AttemptTrace;
}

const NO_UNSUBSCRIBE = (): void => {};

/** Each AgentSession's system prompt hash (pi renders the prompt anew, ≈ 10 KB, every time it is asked). */
const promptHashes = new WeakMap<AgentSession, string>();

/**
 * The sha256 of the whole system prompt `session` sends, worked out once per session: a session's prompt is
 * made from its shape (warm-agent-sessions.ts), which does not change while the session lives — a changed
 * prompt is a new session.
 */
function sessionPromptHash(session: AgentSession): string {
  let hash = promptHashes.get(session);
  if (hash === undefined) {
    hash = systemPromptHash(session.systemPrompt);
    promptHashes.set(session, hash);
  }
  return hash;
}

export class AttemptRunner {
  readonly #turn: TurnScope;
  readonly #inputs: AttemptInputs;
  readonly #toolNames: string[];
  /** Whether the user message was sent (by an attempt that started). */
  #prompted = false;

  constructor(turn: TurnScope, inputs: AttemptInputs) {
    this.#turn = turn;
    this.#inputs = inputs;
    this.#toolNames = inputs.tools.map((tool) => tool.name);
  }

  /** Runs attempt `index` with what `recovery` says; the session is the stopper's until the outcome ends it. */
  async run(index: number, recovery: Recovery): Promise<AttemptRun> {
    const { context, request, log, now, limits, stopper, state } = this.#turn;
    const { binding, mode, tools, toolSandbox, bootstrapFiles } = this.#inputs;
    const callbacks = request.callbacks;
    const sessionManager = binding.sessionManager;
    const model = context.models.resolveModel(recovery.candidate);
    const keepRecentTokens = Math.max(256, Math.min(20_000, Math.floor(model.contextWindow / 4)));
    const profileId = recovery.profileId;
    const profile = profileId === undefined ? undefined : recovery.profile(profileId);
    const level = clampThinkLevel(recovery.thinking, supportedThinkLevels(model));
    const attemptTrace = this.#inputs.trace.startAttempt(index, model, level, profileId);
    const credential = { profileId, secret: profile === undefined ? undefined : secretOf(profile) };
    // Awaited only when it is still being created (a process's first turn on it).
    const modelRuntime =
      context.models.readyRuntimeFor(model, credential) ??
      (await context.models.runtimeFor(model, credential));

    // Checked before anything is sent: pi's own check (in `prompt` only) answers with its `/login` text. A
    // configured key answers at once; only the ambient-credential check has to be awaited.
    const noCredential = modelRuntime.hasConfiguredAuth(model.provider)
      ? undefined
      : await missingCredential(modelRuntime, model, profileId);

    const hasMessages = recordAttemptSettings(sessionManager, model, level);
    const fresh: AgentSessionShape = {
      modelRuntime,
      model,
      thinkingLevel: toPiThinkingLevel(level),
      tools,
      // Built again only when something it says changed (a warm session's turns send the same prompt).
      systemPrompt: kernelSystemPromptFor(sessionManager, {
        mode,
        workspaceDir: toolSandbox.sandboxed ? toolSandbox.cwd : context.workspaceDir,
        ...(toolSandbox.sandboxed ? { sandbox: sandboxPromptFacts(toolSandbox) } : {}),
        toolNames: this.#toolNames,
        ...promptSettingsOf(context.config, context.agentId),
        skillsPrompt: this.#inputs.skillsPrompt,
        sessionKey: context.sessionKey,
        agentId: context.agentId,
        provider: model.provider,
        model: model.id,
        thinkingLevel: level,
      }),
      extraSystemPrompt: request.extraSystemPrompt,
      bootstrapFiles,
      keepRecentTokens,
    };
    const warm = index === 0 ? this.#inputs.warmAgentSessions.take(sessionManager, fresh) : undefined;
    // A warm session's shape equals this one (that is why it was taken): kept instead, so that an idle session
    // holds one system prompt (the one its AgentSession was made with), not that one and an equal copy.
    const shape = warm?.shape ?? fresh;
    const session =
      warm?.session ??
      (await createHermeticSession({
        ...shape,
        cwd: context.workspaceDir,
        thinkingLevel: hasMessages ? undefined : shape.thinkingLevel,
        sessionManager,
        contextShaping: contextShapingFor(context.config, sessionManager, now),
      }));
    stopper.session = session;
    attemptTrace.observe(session, warm !== undefined);
    // Whatever the model is about to be sent is stored first (see execute-turn.ts's header).
    const requestHook = warm?.requestHook ?? installRequestHook(session);
    requestHook.beforeRequest = () => {
      limits.beforeRequest();
      try {
        binding.flushWrites();
      } catch (error) {
        state.storeFailure ??= error instanceof Error ? error : new Error(String(error));
        throw state.storeFailure;
      }
      attemptTrace.modelCallStarted();
    };
    requestHook.beforeToolCall = () => limits.beforeToolCall();
    requestHook.endAfterTurn = (toolResults) => limits.endAfterTurn(toolResults);
    const answers = new ProviderAnswerWatch();
    requestHook.fetch = answers.fetch;
    const reply = new ReplyStream({
      // partial text is worked out only for a caller that shows it
      partials: callbacks?.onPartialReply !== undefined,
      ...(context.reply ?? {}),
      messagingToolSentTexts: () => state.messagingTexts,
    });
    // A caller with none of these callbacks (a turn whose reply is delivered whole) subscribes nothing.
    const unsubscribeCallbacks =
      callbacks?.onPartialReply || callbacks?.onBlockReply || callbacks?.onReasoningStream
        ? subscribeReplyCallbacks(reply, {
            ...(callbacks.onPartialReply ? { onPartialReply: callbacks.onPartialReply } : {}),
            ...(callbacks.onBlockReply ? { onBlockReply: callbacks.onBlockReply } : {}),
            ...(callbacks.onReasoningStream ? { onReasoningStream: callbacks.onReasoningStream } : {}),
          })
        : NO_UNSUBSCRIBE;
    const { observation, unsubscribe } = bridgeSession(session, { log, reply, callbacks, limits });
    // This turn's images go with this turn's requests only (turn-images.ts), fitted to this attempt's model.
    const imageBlocks =
      request.images === undefined || request.images.length === 0
        ? NO_TURN_IMAGES
        : await fitImagesToModel(request.images, model);
    if (imageBlocks.omitted > 0) {
      log.emit("lifecycle", {
        phase: "images_omitted",
        attempt: index + 1,
        count: imageBlocks.omitted,
        reason: imageBlocks.reason,
      });
    }
    const detachImages = attachTurnImages(session, request.prompt, imageBlocks);
    const startedAt = now();
    log.emit("lifecycle", {
      phase: "attempt_start",
      attempt: index + 1,
      provider: model.provider,
      model: model.id,
      thinkingLevel: level,
      ...(profileId === undefined ? {} : { authProfileId: profileId }),
      // The whole system prompt pi sends (preamble, extra prompt, project context): replay can tell it changed.
      systemPromptHash: sessionPromptHash(session),
      // What pictures this attempt's requests carry (their bytes are in no record: prompt-local).
      ...(imageBlocks.images.length === 0
        ? {}
        : { images: imageBlocks.images.map((image) => image.mimeType) }),
    });

    let thrown: string | undefined;
    try {
      if (stopper.cause !== undefined) {
        // Aborted before this attempt could start: nothing is sent.
      } else if (noCredential !== undefined) {
        // Nothing is sent, so the user message stays unsent for the next attempt (another model may have a key).
        thrown = noCredential;
      } else if (!this.#prompted) {
        request.steering?.attach(session);
        this.#prompted = true;
        await session.prompt(request.prompt, { expandPromptTemplates: false });
      } else {
        request.steering?.attach(session);
        await session.agent.continue();
      }
    } catch (error) {
      thrown = error instanceof Error ? error.message : String(error);
    } finally {
      request.steering?.detach();
      detachImages();
      limits.activity(false);
      unsubscribe();
    }
    const payloads = reply.finish();
    unsubscribeCallbacks();
    try {
      binding.flushWrites();
    } catch (error) {
      // The store cannot take the attempt's entries (a full disk, a read-only or damaged file): the attempt
      // still ends with what it got (its reply is shown, said to be unstored); any other refusal throws.
      if (storageFailureOf(error, context.store) === undefined) throw error;
      state.storeFailure ??= error instanceof Error ? error : new Error(String(error));
    }
    for (const message of observation.assistantMessages) state.usage = addUsage(state.usage, message);
    return {
      index,
      model,
      profileId,
      level,
      session,
      shape,
      requestHook,
      sessionManager,
      startedAt,
      payloads,
      observation,
      thrown,
      retryAfterMs: answers.retryAfterMs,
      trace: attemptTrace,
    };
  }
}
