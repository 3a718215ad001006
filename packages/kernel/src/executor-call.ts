// The executor's side of one turn: its signature and settings, and the arguments the kernel calls it with.
// Owns: the `TurnContext` and `TurnRequest` made from a preparation and a turn, and the callbacks around the
// caller's — every event kept for the run, published on the kernel's stream (its fan-out timed as run-record
// work) and passed on; block replies handed to the delivery sink one after another, failures collected.
// Does not own: the store view the context carries (executor-store.ts), the turn's tool policy
// (run-decisions.ts), the final delivery or what a failed delivery means for the turn (kernel.ts).
import { performance } from "node:perf_hooks";
import type { SessionStore } from "@agent-kernel/session-store";
import type {
  ModelRuntimePool,
  ReplyPayload,
  SteerHandle,
  TurnCallbacks,
  TurnContext,
  TurnRequest,
  TurnResult,
} from "@agent-kernel/turn-pipeline";
import type { PhaseClock } from "./phase-clock.ts";
import type { RunRegistry } from "./run-registry.ts";
import type { AgentEventPayload, PreparedSession, TurnInput } from "./types.ts";

/** The turn executor's signature (turn-pipeline's `executeTurn`). */
export type TurnExecutor = (context: TurnContext, request: TurnRequest) => Promise<TurnResult>;

/** Executor settings every turn of this kernel gets (tests shorten the retry delay). */
export type ExecutorSettings = Partial<
  Pick<
    TurnContext,
    "stallTimeoutMs" | "transientRetryDelayMs" | "rateLimitRetries" | "exec" | "sandboxEngines"
  >
>;

/** Tools a kernel adds to a run, made for that run (they may close over its runId and preparation). */
export type TurnToolProvider = (run: {
  readonly prepared: PreparedSession;
  readonly turn: TurnInput;
  readonly runId: string;
}) => NonNullable<TurnContext["extraTools"]>;

/** What every executor call of one kernel shares (made once per kernel, not per turn). */
export interface ExecutorCallDeps {
  readonly registry: RunRegistry;
  /** The kernel's store view for the executor (executor-store.ts). */
  readonly store: SessionStore;
  /** The kernel's options, read on every call as the kernel's own code reads them. */
  readonly options: {
    readonly executorSettings?: ExecutorSettings | undefined;
    readonly now?: (() => number) | undefined;
    readonly turnTools?: TurnToolProvider | undefined;
  };
}

export interface ExecutorCall {
  readonly context: TurnContext;
  readonly request: TurnRequest;
  /** Every event of the run so far, as the executor streamed it. */
  readonly events: AgentEventPayload[];
  /** Block replies handed to the delivery sink so far; settles once they are sent or failed. */
  delivered(): Promise<void>;
  /** Why block replies failed to be delivered. */
  readonly deliveryErrors: readonly unknown[];
}

export function executorCall(
  deps: ExecutorCallDeps,
  prepared: PreparedSession,
  turn: TurnInput,
  runId: string,
  signal: AbortSignal,
  steering: SteerHandle,
  clock: PhaseClock,
  toolPolicy: TurnContext["toolPolicy"],
  models: ModelRuntimePool,
): ExecutorCall {
  const registry = deps.registry;
  const runtime = prepared.runtimeContext;
  const events: AgentEventPayload[] = [];
  const sink = turn.delivery;
  let deliveries: Promise<void> = Promise.resolve();
  const deliveryErrors: unknown[] = [];
  const deliver = (send: () => void | Promise<void>) => {
    deliveries = deliveries.then(send).catch((error: unknown) => {
      deliveryErrors.push(error);
    });
  };
  const callerCallbacks = turn.callbacks ?? {};
  const callbacks: TurnCallbacks = {
    ...callerCallbacks,
    onAgentEvent: (event) => {
      const fanOut = performance.now();
      events.push(event);
      registry.publish(event);
      clock.add("runRecordMs", performance.now() - fanOut);
      callerCallbacks.onAgentEvent?.(event);
    },
    ...(sink?.onBlockReply || callerCallbacks.onBlockReply
      ? {
          onBlockReply: (payload: ReplyPayload) => {
            callerCallbacks.onBlockReply?.(payload);
            if (sink?.onBlockReply) deliver(() => sink.onBlockReply?.(payload, { runId }));
          },
        }
      : {}),
  };
  const defaults = prepared.defaults;
  const context: TurnContext = {
    ...(deps.options.executorSettings ?? {}),
    config: prepared.config,
    store: deps.store,
    runtime,
    toolPolicy: toolPolicy,
    models: models,
    agentId: runtime.agentId.value,
    sessionKey: runtime.sessionKey.value,
    sessionId: prepared.transcript.sessionId,
    workspaceDir: runtime.workspaceDir.value,
    promptMode: defaults.promptMode,
    ...(sink?.messageTool ? { deliverySink: sink.messageTool } : {}),
    ...(deps.options.turnTools ? { extraTools: deps.options.turnTools({ prepared, turn, runId }) } : {}),
    reply: {
      reasoningMode: defaults.reasoningMode,
      enforceFinalTag: defaults.enforceFinalTag,
      ...(defaults.blockStreaming ? { blockStreaming: defaults.blockStreaming } : {}),
      ...(prepared.session.messageContext?.currentMessageId === undefined
        ? {}
        : { currentMessageId: prepared.session.messageContext.currentMessageId }),
    },
    ...(deps.options.now ? { now: deps.options.now } : {}),
  };
  const request: TurnRequest = {
    prompt: turn.prompt,
    ...(turn.images ? { images: turn.images } : {}),
    ...(turn.extraSystemPrompt === undefined ? {} : { extraSystemPrompt: turn.extraSystemPrompt }),
    timeoutMs: turn.timeoutMs ?? defaults.timeoutMs,
    runId,
    signal,
    entryPoint: defaults.entryPoint,
    callbacks,
    steering,
  };
  return { context, request, events, delivered: () => deliveries, deliveryErrors };
}
