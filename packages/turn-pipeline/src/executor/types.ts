// The executor's public shapes: what the kernel passes in (`TurnContext`, `TurnRequest`) and what comes back
// (`TurnResult`), the one event envelope (`AgentEventPayload`) and the delivery sink the `message` tool sends
// through. Owns only shapes; behaviour lives in execute-turn.ts and its parts. Does not own the kernel's
// `TurnOutcome` (the kernel wraps `TurnResult`) or config shapes (`@agent-kernel/config`).
import type { KernelConfig } from "@agent-kernel/config";
import type { RuntimeContext } from "@agent-kernel/runtime-resolver";
import type { SessionStore } from "@agent-kernel/session-store";
import type { ToolPolicy } from "@agent-kernel/tool-policy";
import type { ImageContent } from "@earendil-works/pi-ai";
import type { ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { ReasoningMode, ReplyPayload, ReplyStreamOptions } from "../streaming/index.ts";
import type { SandboxEngines } from "../tools/index.ts";
import type { ModelRuntimePool } from "./model-runtimes.ts";
import type { RunEventStorage } from "./run-event-storage.ts";
import type { SteerHandle } from "./steering.ts";

/** The streams of the one event envelope (DESIGN §3). */
export type AgentEventStream = "lifecycle" | "assistant" | "tool" | "compaction" | "error";

/** Every event of a run, in order: `seq` starts at 1 and has no gaps. */
export interface AgentEventPayload {
  readonly runId: string;
  readonly seq: number;
  readonly ts: number;
  readonly stream: AgentEventStream;
  readonly data: Readonly<Record<string, unknown>>;
}

/** How a turn ended. */
export type TurnStatus = "ok" | "error" | "aborted" | "timeout";

/** Where the `message` tool sends: the entry point's channel (or a test's array). */
export interface DeliverySink {
  send(message: {
    readonly text: string;
    readonly target?: string;
  }): Promise<{ readonly messageId?: string }>;
}

/** Subscribers of the one event stream; the reply callbacks are derived from it, never separate paths. */
export interface TurnCallbacks {
  readonly onAgentEvent?: (event: AgentEventPayload) => void;
  readonly onPartialReply?: (payload: { text: string; delta: string }) => void;
  readonly onBlockReply?: (payload: ReplyPayload) => void;
  readonly onReasoningStream?: (payload: { text: string; delta: string }) => void;
  readonly onToolResult?: (payload: {
    toolCallId: string;
    toolName: string;
    isError: boolean;
    text: string;
  }) => void;
}

/** Which parts of the kernel system prompt a run gets. `minimal`: subagents and the planner. */
export type PromptMode = "full" | "minimal";

/** Limits of the `exec` tool. */
export interface ExecLimits {
  /** Used when the model asks for none, and the most it may ask for (seconds). Default 120. */
  readonly timeoutSeconds?: number;
  /** Output kept for the model, from the end (bytes). Default 16 KiB. */
  readonly maxOutputBytes?: number;
}

/** Everything the executor reads; all explicit, nothing global. The kernel builds it in `prepareSession`. */
export interface TurnContext {
  readonly config: KernelConfig;
  readonly store: SessionStore;
  readonly runtime: RuntimeContext;
  readonly toolPolicy: ToolPolicy;
  /** Shared, process-wide hermetic pi model runtimes (one per provider and auth profile). */
  readonly models: ModelRuntimePool;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly workspaceDir: string;
  readonly promptMode?: PromptMode;
  readonly exec?: ExecLimits;
  /**
   * The engines sandboxed and unsandboxed tools run on; absent: one `bwrap` and one `host` engine per
   * process. Whether a session is sandboxed, and how, is `runtime.sandbox`.
   */
  readonly sandboxEngines?: SandboxEngines;
  /** The delivery sink of the `message` tool; absent: the tool is not offered. */
  readonly deliverySink?: DeliverySink;
  /**
   * Tools the caller adds for this turn (the kernel's `sessions_spawn` / `sessions_send`), under the same
   * policy as the default tools: filtered, then checked again at every call.
   */
  readonly extraTools?: readonly ToolDefinition[];
  /** ReplyStream settings (block streaming, reasoning mode, silent token, final tag). */
  readonly reply?: Omit<ReplyStreamOptions, "messagingToolSentTexts" | "reasoningMode"> & {
    readonly reasoningMode?: ReasoningMode;
  };
  /**
   * A stream that sends nothing for this long is ended as stalled (ms). Default: the agent's
   * `streamIdleSeconds` (120 s). The turn's other limits come from the config (turn-limits.ts).
   */
  readonly stallTimeoutMs?: number;
  /** Waits before the transient-HTTP retry of the whole chain (ms). Default 2500 (OpenClaw). */
  readonly transientRetryDelayMs?: number;
  /** Retries on the same model and profile for a rate limit before rotating. Default 0: rotate at once. */
  readonly rateLimitRetries?: number;
  /**
   * How the run's events are stored at the end of the turn (run-event-storage.ts): `coalesce-deltas`
   * (default) one row per streamed text or thinking block — a long reply streamed in tiny deltas would
   * otherwise store one row per delta — or `every-event`, one row per event. `TurnResult.events` and
   * `onAgentEvent` always get every event, with their own sequence numbers; stored rows keep those numbers,
   * so coalesced storage has gaps.
   */
  readonly runEventStorage?: RunEventStorage;
  readonly now?: () => number;
}

/** One prompt turn. */
export interface TurnRequest {
  readonly prompt: string;
  /** Sent with this turn's user message only. */
  readonly images?: readonly ImageContent[];
  readonly extraSystemPrompt?: string;
  /** 0 = no turn timeout. */
  readonly timeoutMs: number;
  /** Default: a new UUID. */
  readonly runId?: string;
  readonly signal?: AbortSignal;
  /** `agent`, `auto-reply`, `followup`, `cron`, `hybrid-planner`, ... */
  readonly entryPoint: string;
  readonly callbacks?: TurnCallbacks;
  /** Where messages steered into this turn go (the kernel's run registry holds it). */
  readonly steering?: SteerHandle;
}

/** One provider call of the recovery loop. */
export interface AttemptRecord {
  readonly index: number;
  readonly provider: string;
  readonly model: string;
  readonly authProfileId?: string;
  readonly thinkingLevel: string;
  readonly startedAt: number;
  readonly durationMs: number;
  readonly outcome: "ok" | "error" | "aborted" | "timeout";
  /** The failover reason of a failed attempt, and what the loop did next. */
  readonly reason?: string;
  readonly action?: string;
  readonly error?: string;
}

export interface TurnUsage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly total: number;
  readonly costUsd: number;
}

export interface TurnResult {
  readonly runId: string;
  readonly status: TurnStatus;
  /**
   * The failover reason or `timeout` / `stalled` / `aborted` when not ok; a turn limit's reason
   * (`tool_call_limit`, `model_call_limit`, `stream_time_limit`, `reply_size_limit`) when one ended it.
   */
  readonly reason?: string;
  readonly errorMessage?: string;
  /** What to deliver: ReplyStream's final list. */
  readonly payloads: readonly ReplyPayload[];
  /** The last assistant text of the turn (partial when the turn was cut). */
  readonly assistantText: string;
  readonly partial: boolean;
  readonly usage: TurnUsage;
  readonly provider?: string;
  readonly model?: string;
  readonly authProfileId?: string;
  readonly attempts: readonly AttemptRecord[];
  /** Set when the answer came from a model other than the first candidate. */
  readonly fallback?: { readonly provider: string; readonly model: string };
  readonly compactions: number;
  /** Texts the `message` tool sent. */
  readonly messagingToolTexts: readonly string[];
  readonly events: readonly AgentEventPayload[];
}
