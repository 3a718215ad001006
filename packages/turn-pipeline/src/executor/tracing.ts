// The turn's OpenTelemetry spans, through `@opentelemetry/api`: one `agent_kernel.run` span per run, one
// `agent_kernel.attempt` span per attempt under it, and under each attempt one `chat {model}` span per model
// request and one `execute_tool {tool}` span per tool call. Owns: the span names, their attributes (run id,
// agent, session, entry point; provider, model and thinking level; usage and finish reason; tool name and
// outcome; the run's final status and reason), error statuses, and parenting every span explicitly (pi's loop
// crosses async boundaries where the active context is not the turn's, so no span relies on it). Does not own:
// registering an SDK or exporter (the operator's process does, before turns run), or deciding any outcome
// (attempt-outcome.ts and the executor report what they decided).
//
// Cost when nothing is registered: none past one look at the API's global provider. `ProxyTracerProvider`'s
// public `getDelegateTracer` says whether an SDK registered a provider; without one, the run and its attempts
// get a trace that records nothing and makes no span (the API's no-op spans would record nothing either, but
// making them and their contexts cost ≈ 15 µs a warm turn). Checked at every run's start, so a provider
// registered later is used from the next run on. A non-recording attempt neither subscribes to the session's
// events nor opens model or tool spans.

import type { ModelCandidate, ThinkLevel } from "@agent-kernel/runtime-resolver";
import type { Api, AssistantMessage, Model } from "@earendil-works/pi-ai";
import type { AgentSession, AgentSessionEvent } from "@earendil-works/pi-coding-agent";
import {
  type Attributes,
  type Context,
  context as otelContext,
  ProxyTracerProvider,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { AttemptOutcome } from "./attempt-outcome.ts";
import type { TurnState } from "./turn-state.ts";
import type { TurnContext, TurnRequest } from "./types.ts";

/** The instrumentation scope of every span here (an operator's sampler or processor can select on it). */
export const TRACER_NAME = "@agent-kernel/turn-pipeline";

/** The attribute keys of the turn's spans (`gen_ai.*` follow OpenTelemetry's GenAI conventions). */
export const TRACE_ATTRIBUTES = {
  runId: "agent_kernel.run.id",
  agentId: "gen_ai.agent.id",
  sessionKey: "agent_kernel.session.key",
  sessionId: "gen_ai.conversation.id",
  entryPoint: "agent_kernel.entry_point",
  runStatus: "agent_kernel.run.status",
  runReason: "agent_kernel.run.reason",
  attemptIndex: "agent_kernel.attempt.index",
  attemptOutcome: "agent_kernel.attempt.outcome",
  attemptWarm: "agent_kernel.attempt.warm_session",
  authProfileId: "agent_kernel.auth_profile.id",
  thinkingLevel: "agent_kernel.thinking.level",
  operation: "gen_ai.operation.name",
  provider: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolOutcome: "agent_kernel.tool.outcome",
} as const;

const A = TRACE_ATTRIBUTES;

/** True when no SDK registered a tracer provider: every span would be a no-op. */
function noTracerRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider && provider.getDelegateTracer(TRACER_NAME) === undefined;
}

/** The run's span; attempts are started from it and it is ended once, with the turn's final state. */
export class RunTrace {
  /** Shared by every run while no tracer provider is registered: it holds no state. */
  static readonly #untraced = new RunTrace();
  readonly #tracer: Tracer | undefined;
  readonly #span: Span | undefined;
  readonly #context: Context | undefined;
  readonly #runId: string;
  #attempt: AttemptTrace | undefined;

  /**
   * Starts the run span of `runId` under whatever span is active where the turn starts (an operator's, if
   * any); `candidate` is the model the run starts with.
   */
  static start(
    runId: string,
    context: TurnContext,
    request: TurnRequest,
    candidate: ModelCandidate,
  ): RunTrace {
    if (noTracerRegistered()) return RunTrace.#untraced;
    return new RunTrace(trace.getTracer(TRACER_NAME), runId, {
      [A.runId]: runId,
      [A.agentId]: context.agentId,
      [A.sessionKey]: context.sessionKey,
      [A.sessionId]: context.sessionId,
      [A.entryPoint]: request.entryPoint,
      [A.provider]: candidate.provider,
      [A.requestModel]: candidate.model,
    });
  }

  /** Without arguments: the trace of a run while no provider is registered (no span, no state). */
  private constructor(tracer?: Tracer, runId = "", attributes: Attributes = {}) {
    this.#runId = runId;
    if (tracer === undefined) return;
    this.#tracer = tracer;
    const parent = otelContext.active();
    this.#span = tracer.startSpan("agent_kernel.run", { kind: SpanKind.INTERNAL, attributes }, parent);
    this.#context = trace.setSpan(parent, this.#span);
  }

  /** Starts attempt `index` (0-based; the span says 1-based, as the attempt records do). */
  startAttempt(
    index: number,
    model: Model<Api>,
    level: ThinkLevel,
    profileId: string | undefined,
  ): AttemptTrace {
    if (this.#tracer === undefined || this.#context === undefined) {
      untracedAttempt ??= new UntracedAttempt();
      return untracedAttempt;
    }
    this.#attempt?.endUnfinished("the next attempt started before this one was classified");
    const attributes: Attributes = {
      [A.runId]: this.#runId,
      [A.attemptIndex]: index + 1,
      [A.provider]: model.provider,
      [A.requestModel]: model.id,
      [A.thinkingLevel]: level,
    };
    if (profileId !== undefined) attributes[A.authProfileId] = profileId;
    const attempt = new AttemptTrace(this.#tracer, this.#context, this.#runId, model, attributes);
    this.#attempt = attempt;
    return attempt;
  }

  /**
   * Ends the run span once `finishing` (the run record's last write) settles, with the turn's final status
   * and reason; a run that did not finish (`finishing` rejected) ends in error. Returns what `finishing` gave.
   */
  async finish<T>(state: TurnState, finishing: Promise<T>): Promise<T> {
    const span = this.#span;
    if (span === undefined) return finishing;
    this.#attempt?.endUnfinished(state.errorMessage ?? "the turn ended before the attempt was classified");
    this.#attempt = undefined;
    try {
      const result = await finishing;
      if (span.isRecording()) {
        span.setAttribute(A.runStatus, state.status);
        if (state.reason !== undefined) span.setAttribute(A.runReason, state.reason);
        if (state.answered !== undefined) {
          span.setAttribute(A.responseModel, `${state.answered.provider}/${state.answered.model}`);
        }
        // An abort is the caller's decision, not a failure of the run.
        if (state.status === "error" || state.status === "timeout") {
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message:
              `${state.status} (${state.reason ?? "unclassified"}): ${state.errorMessage ?? ""}`.trim(),
          });
        }
      }
      return result;
    } catch (error) {
      span.setAttribute(A.runStatus, "not_recorded");
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  }
}

/** One attempt's span and the model and tool spans under it. */
export class AttemptTrace {
  readonly #tracer: Tracer;
  readonly #span: Span;
  readonly #context: Context;
  readonly #runId: string;
  readonly #model: Model<Api>;
  readonly #tools = new Map<string, Span>();
  #modelCall: Span | undefined;
  #unsubscribe: (() => void) | undefined;
  #ended = false;

  constructor(tracer: Tracer, parent: Context, runId: string, model: Model<Api>, attributes: Attributes) {
    this.#tracer = tracer;
    this.#runId = runId;
    this.#model = model;
    this.#span = tracer.startSpan("agent_kernel.attempt", { kind: SpanKind.INTERNAL, attributes }, parent);
    this.#context = trace.setSpan(parent, this.#span);
  }

  /**
   * Follows the attempt's session: each assistant message ends the open model call, each tool execution is a
   * span. Nothing is subscribed when the attempt is not recorded. Ends with the attempt.
   */
  observe(session: AgentSession, warm: boolean): void {
    if (!this.#span.isRecording()) return;
    this.#span.setAttribute(A.attemptWarm, warm);
    this.#unsubscribe?.();
    this.#unsubscribe = session.subscribe((event: AgentSessionEvent) => {
      switch (event.type) {
        case "message_end":
          if (event.message.role === "assistant") this.#endModelCall(event.message as AssistantMessage);
          return;
        case "tool_execution_start":
          this.#startTool(event.toolCallId, event.toolName);
          return;
        case "tool_execution_end":
          this.#endTool(event.toolCallId, event.isError, event.result);
          return;
        default:
          return;
      }
    });
  }

  /** A model request is about to be sent (the request hook's `beforeRequest` has let it through). */
  modelCallStarted(): void {
    if (!this.#span.isRecording()) return;
    this.#modelCall?.end();
    this.#modelCall = this.#tracer.startSpan(
      `chat ${this.#model.id}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [A.runId]: this.#runId,
          [A.operation]: "chat",
          [A.provider]: this.#model.provider,
          [A.requestModel]: this.#model.id,
        },
      },
      this.#context,
    );
  }

  /** Ends the attempt span as classified: an error status with the failure's message when it failed. */
  end(outcome: AttemptOutcome): void {
    if (this.#ended) return;
    const failure = outcome.failure;
    this.#span.setAttribute(A.attemptOutcome, failure === undefined ? "ok" : "error");
    if (failure !== undefined) this.#span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    this.#close("the attempt ended");
  }

  /** Ends an attempt the executor never classified (it threw, or the turn ended first). */
  endUnfinished(message: string): void {
    if (this.#ended) return;
    this.#span.setAttribute(A.attemptOutcome, "error");
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message });
    this.#close(message);
  }

  #close(message: string): void {
    this.#ended = true;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    // What pi left open (a request refused or aborted before its message ended, a tool cut off) ends here.
    if (this.#modelCall !== undefined) {
      this.#modelCall.setStatus({ code: SpanStatusCode.ERROR, message: `no response: ${message}` });
      this.#modelCall.end();
      this.#modelCall = undefined;
    }
    for (const span of this.#tools.values()) {
      span.setAttribute(A.toolOutcome, "unfinished");
      span.setStatus({ code: SpanStatusCode.ERROR, message: `unfinished: ${message}` });
      span.end();
    }
    this.#tools.clear();
    this.#span.end();
  }

  #endModelCall(message: AssistantMessage): void {
    const span = this.#modelCall;
    if (span === undefined) return;
    this.#modelCall = undefined;
    span.setAttribute(A.responseModel, message.model);
    span.setAttribute(A.finishReasons, [message.stopReason]);
    if (message.usage !== undefined) {
      span.setAttribute(A.inputTokens, message.usage.input);
      span.setAttribute(A.outputTokens, message.usage.output);
    }
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: message.errorMessage ?? `assistant ${message.stopReason}`,
      });
    }
    span.end();
  }

  #startTool(toolCallId: string, toolName: string): void {
    this.#tools.get(toolCallId)?.end();
    this.#tools.set(
      toolCallId,
      this.#tracer.startSpan(
        `execute_tool ${toolName}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            [A.runId]: this.#runId,
            [A.operation]: "execute_tool",
            [A.toolName]: toolName,
            [A.toolCallId]: toolCallId,
          },
        },
        this.#context,
      ),
    );
  }

  #endTool(toolCallId: string, isError: boolean, result: unknown): void {
    const span = this.#tools.get(toolCallId);
    if (span === undefined) return;
    this.#tools.delete(toolCallId);
    span.setAttribute(A.toolOutcome, isError ? "error" : "ok");
    if (isError) span.setStatus({ code: SpanStatusCode.ERROR, message: firstText(result) });
    span.end();
  }
}

/**
 * The attempt of a run traced by no provider (`RunTrace`'s untraced run): shared, it holds no state and every
 * call returns at once. Made at the first untraced run (the no-op tracer then makes its no-op span).
 */
class UntracedAttempt extends AttemptTrace {
  constructor() {
    super(trace.getTracer(TRACER_NAME), otelContext.active(), "", { id: "", provider: "" } as Model<Api>, {});
  }
  override observe(): void {}
  override modelCallStarted(): void {}
  override end(): void {}
  override endUnfinished(): void {}
}
let untracedAttempt: AttemptTrace | undefined;

function recordError(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

/** The start of a tool result's text: what an error status says (a tool's output can be large). */
function firstText(result: unknown): string {
  const content = (result as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return "tool error";
  for (const block of content as { type?: string; text?: string }[]) {
    if (block.type === "text" && block.text) return block.text.slice(0, 500);
  }
  return "tool error";
}
