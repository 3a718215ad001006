// The kernel's public shapes (DESIGN §3): what an entry point passes in (`SessionKernelInput`, `TurnInput`),
// what `prepareSession` returns (`PreparedSession`) and what `executeTurn` returns (`TurnOutcome`).
// Owns only shapes; validation lives in validate.ts, behaviour in prepare.ts and kernel.ts. Does not own the
// executor's shapes (`TurnResult`, `AgentEventPayload`: turn-pipeline) or config shapes (config).
//
// Adapted from DESIGN §3, because the resolver already knows better:
// - `agentId`, `sessionId` and `workspaceDir` are optional. runtime-resolver derives the agent from the key or
//   the default agent, the workspace from the agent's config, and the kernel takes the sessionId from the
//   stored session (a new one when there is none or it is stale under `session.reset`), so every entry point
//   gets the same rules instead of re-implementing them.
// - `TurnInput.timeoutMs` is optional: absent, the run's resolved timeout (`runOptions.timeoutSeconds`, else
//   the agent's `timeoutSeconds`) applies.
// - `TurnInput` also carries the non-data parts of a turn: the caller's AbortSignal, the stream subscribers
//   and the delivery sink.
// - `TurnOutcome` names the run, its status, the decisions recorded for it and its timings besides the
//   executor's result.
import type { KernelConfig, QUEUE_MODES } from "@agent-kernel/config";
import type { RuntimeContext, RuntimeRequest, SessionIdentityInput } from "@agent-kernel/runtime-resolver";
import type { SessionMeta } from "@agent-kernel/session-store";
import type { ToolDecision, ToolPolicy, ToolPolicyContext } from "@agent-kernel/tool-policy";
import type {
  AgentEventPayload,
  BlockChunking,
  CoalesceSettings,
  DeliverySink as MessageToolSink,
  PromptMode,
  ReasoningMode,
  ReplyPayload,
  TurnCallbacks,
  TurnResult,
  TurnStatus,
} from "@agent-kernel/turn-pipeline";
import type { ImageContent } from "@earendil-works/pi-ai";

export type { AgentEventPayload, TurnStatus };
/** The executor's result, named as in the kernel proposal. */
export type AgentRuntimeResult = TurnResult;

/** Who is talking and where: routing facts the tool policy and the session metadata use. */
export interface MessageContext {
  /** Channel id (`telegram`, `slack`, `webchat`, `cli`). */
  readonly channel?: string | undefined;
  readonly accountId?: string | undefined;
  readonly chatType?: "direct" | "group" | "channel" | undefined;
  /** The sender, for `tools.bySender` and owner checks. */
  readonly senderId?: string | undefined;
  /** False for a sender who is not the owner: owner-only tools are removed. */
  readonly senderIsOwner?: boolean | undefined;
  /** The group or channel id, for `channels.<id>.groups.<group>.tools`. */
  readonly groupId?: string | undefined;
  readonly threadId?: string | undefined;
  /** The reply target, recorded as the session's last route. */
  readonly to?: string | undefined;
  /** The inbound message id (reply threading). */
  readonly currentMessageId?: string | undefined;
}

/** What this run asks for beyond the config (CLI flags, directives, a cron payload). */
/** The per-run requests runtime-resolver decides on (`model`, `thinking`, `thinkingStrict`, `cronPayload`, `timeoutSeconds`), plus the kernel's own. */
export interface RunOptions
  extends Pick<RuntimeRequest, "model" | "thinking" | "thinkingStrict" | "cronPayload" | "timeoutSeconds"> {
  /** `agent`, `auto-reply`, `followup`, `cron`, `hybrid-planner`, ... Default `agent`. */
  readonly entryPoint?: string | undefined;
  readonly queueMode?: (typeof QUEUE_MODES)[number] | undefined;
  /** Start a new sessionId whatever the reset rules say (`/new`, cron isolated runs). */
  readonly forceNewSession?: boolean | undefined;
  readonly sandboxRequired?: boolean | undefined;
  /** `minimal` for subagents and the planner. Default `full`. */
  readonly promptMode?: PromptMode | undefined;
  readonly enforceFinalTag?: boolean | undefined;
  /** Use the session's stored context window before the 200k fallback (follow-up runs). */
  readonly useSessionContextTokens?: boolean | undefined;
}

/** Identity as runtime-resolver takes it (agentId, sessionKey, sessionId, workspaceDir, agentDir; all optional). */
export interface SessionKernelInput extends SessionIdentityInput {
  /** This run's config; default the kernel's. Treated as an immutable value. */
  readonly config?: KernelConfig | undefined;
  readonly messageContext?: MessageContext | undefined;
  readonly runOptions?: RunOptions | undefined;
}

/** Shared defaults every entry point gets, from the agent's config. */
export interface NormalizedDefaults {
  readonly entryPoint: string;
  /** 0 = no turn timeout. */
  readonly timeoutMs: number;
  readonly reasoningMode: ReasoningMode;
  readonly verboseLevel: string;
  readonly promptMode: PromptMode;
  readonly enforceFinalTag: boolean;
  /** Absent: block streaming is off (only partials and the final list). */
  readonly blockStreaming?: {
    readonly chunking: BlockChunking;
    readonly breakMode: "text_end" | "message_end";
    readonly coalesce: CoalesceSettings;
  };
  readonly contextTokens: number;
}

export interface PreparedSession {
  /** The validated input. */
  readonly session: SessionKernelInput;
  readonly config: KernelConfig;
  readonly runtimeContext: RuntimeContext;
  readonly toolPolicy: ToolPolicy;
  /** What the tool policy was resolved for (a turn with `ownerNumbers` may re-resolve it for the sender). */
  readonly toolPolicyContext: ToolPolicyContext;
  /** The decision for each tool the executor can offer, for the run record. */
  readonly toolDecisions: readonly ToolDecision[];
  readonly transcript: { readonly agentId: string; readonly sessionId: string };
  readonly defaults: NormalizedDefaults;
  /** The store's session row version this preparation saw. */
  readonly sessionVersion: number;
}

/**
 * Where replies go. The kernel calls it; the entry point decides what delivering means (stream blocks to a
 * TTY, send the last payload to a channel, collect JSON).
 */
export interface DeliverySink {
  /** A block reply as it streams (only when block streaming is on). */
  onBlockReply?(payload: ReplyPayload, run: { readonly runId: string }): void | Promise<void>;
  /** The final payloads once the run ended. */
  onFinal?(payloads: readonly ReplyPayload[], outcome: TurnOutcome): void | Promise<void>;
  /** Where the `message` tool sends; absent: the tool is not offered. */
  readonly messageTool?: MessageToolSink;
}

export interface TurnInput {
  readonly prompt: string;
  /**
   * This turn's pictures (PNG, JPEG, GIF or WebP as base64; at most `TURN_IMAGE_MAX_COUNT` of at most
   * `TURN_IMAGE_MAX_BYTES` each). Prompt-local as in OpenClaw: sent with this turn's model requests only and
   * not stored in the transcript; a model without image input gets a note that they were omitted instead.
   */
  readonly images?: readonly ImageContent[] | undefined;
  readonly extraSystemPrompt?: string | undefined;
  /** Owner ids: a sender among them keeps owner-only tools. */
  readonly ownerNumbers?: readonly string[] | undefined;
  /** 0 = none; absent: the run's resolved timeout. */
  readonly timeoutMs?: number | undefined;
  readonly runId?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Subscribers of this run's one event stream. */
  readonly callbacks?: TurnCallbacks | undefined;
  readonly delivery?: DeliverySink | undefined;
  /** The run that started this one (`sessions_spawn`, `sessions_send`): recorded in its decisions. */
  readonly parentRunId?: string | undefined;
}

/**
 * The kernel's own work on one turn, per phase, in milliseconds: `performance.now()` spans around the
 * kernel's synchronous segments and around its store calls up to the moment each returns its promise (the
 * SQLite statements the kernel runs per turn execute inside that call). Time spent awaiting — the lane, the
 * executor, another turn's work while this one waits — is never counted, so concurrent turns do not charge
 * each other; the one thing not seen is the asynchronous remainder of a store call (Kysely runs the session
 * write after its connection lock, in a later microtask).
 */
export interface KernelPhaseTimings {
  /** `prepareSession`: validation, the session/auth read, the prewarm check, resolution on a miss. */
  readonly prepareMs: number;
  /** Whether that `prepareSession` call reused a cached preparation; `none`: no call was matched to this turn. */
  readonly prepareCache: "hit" | "miss" | "none";
  /** `TurnInput` validation. */
  readonly validateMs: number;
  /** Run registry, lanes, tool-policy lines, decisions, the executor's context and callbacks. */
  readonly bookkeepingMs: number;
  /** Storing the decisions (event 0) and the event fan-out. */
  readonly runRecordMs: number;
  /** The session metadata update after the run. */
  readonly sessionUpdateMs: number;
  /** Assembling the `TurnOutcome` and settling the run. */
  readonly outcomeMs: number;
}

/** Times of one `executeTurn`, in milliseconds. */
export interface TurnTimings {
  /** Waiting for the session lane and a global slot. */
  readonly queuedMs: number;
  /** Inside the executor (model time, tools, transcript). */
  readonly executorMs: number;
  readonly totalMs: number;
  /**
   * Wall clock: total − queued − executor. Under concurrency this also counts other turns' work done while
   * this turn awaited a store call; `kernelMs` is the kernel's own work.
   */
  readonly overheadMs: number;
  /** The kernel's own work on this turn: the sum of `phases` (see `KernelPhaseTimings`). */
  readonly kernelMs: number;
  readonly phases: KernelPhaseTimings;
}

export interface TurnOutcome {
  readonly runId: string;
  readonly status: TurnStatus;
  readonly result: AgentRuntimeResult;
  /** The whole event stream of the run, in seq order. */
  readonly events: readonly AgentEventPayload[];
  /** Set when a model other than the first candidate answered. */
  readonly fallback?: { readonly provider: string; readonly model?: string };
  /** What was decided for the run before it started (also stored as the run's event 0). */
  readonly decisions: RunDecisions;
  /** The session metadata after the run's update. */
  readonly sessionMeta: SessionMeta;
  readonly timings: TurnTimings;
}

/**
 * Everything decided before the executor starts, stored as event `seq: 0` of the run (stream `lifecycle`,
 * phase `prepared`), ahead of the executor's own stream (1..N): the run table has no column for it.
 */
export interface RunDecisions {
  readonly phase: "prepared";
  readonly entryPoint: string;
  readonly queuedMs: number;
  readonly runtime: Readonly<Record<string, unknown>>;
  /** One line per tool the executor can offer: `exec: blocked by tools.deny — deny "exec" (tools.deny[0])`. */
  readonly toolPolicy: readonly string[];
  readonly defaults: NormalizedDefaults;
  /** The run that started this one (a subagent's spawner, a `sessions_send` sender). */
  readonly parentRunId?: string;
}
