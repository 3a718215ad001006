// Turn limits: what bounds one turn besides its timeout. Owns: the values a turn runs under (config keys and
// their defaults), counting tool calls and model calls, the stream watchdog (idle time and total time of each
// model response), each response's character budget, cutting a response in place as pi stores it, and the
// breach that ends the turn: its reason, its run-record message and the one line the user gets. Its one timer
// also keeps the turn's timeout when given one (`TurnTimeout`: a turn arms one timer, not two); what a
// timeout does is the caller's (the executor's stopper). Does not own:
// stopping pi (the executor aborts the session when told), the stall's recovery (the executor's recovery
// loop), or the pi hooks' installation (warm-agent-sessions.ts routes them here).
//
// How each limit ends a turn and keeps the transcript valid for the next one:
// - tool calls (`tools.maxCallsPerTurn`, an agent's `tools.maxCallsPerTurn`): the call past the limit is
//   refused (pi's beforeToolCall: the tool does not run, the model's call gets an error result saying why),
//   and pi's loop ends after that batch (finishTurn): the transcript ends with the assistant's calls and a
//   result for each, as after any tool batch.
// - model calls (`maxModelCallsPerTurn`: provider requests, tool-loop continuations and retries included):
//   the loop ends after the response that spent the last one, with its tool results stored; no attempt starts
//   once they are spent. A request past the limit by any other path is refused before it is sent.
// - stream idle (`streamIdleSeconds`): a response that sends nothing for that long is stopped as stalled; the
//   executor's recovery loop retries it once (a timeout), as before these limits.
// - stream time (`streamMaxSeconds`) and reply size (`replyMaxChars`, text, thinking and tool-call arguments
//   of one response): the response is cut. Nothing past the budget is kept, logged or delivered, so memory
//   stays bounded however much the provider sends; the session is aborted so the stream stops; at its end the
//   message is rewritten in place before pi stores it (pi's own way of replacing a message at message_end):
//   the kept text plus one line saying it was cut, stop reason `length` (an output cut short, replayed to the
//   model next turn like any answer), no partial thinking or tool call.
// Every breach ends the turn with status `error` and the limit's reason; the user's line is the last payload
// (in the cut reply itself for the stream limits).
import { AGENT_DEFAULTS, type KernelConfig, resolveAgentConfig, TOOLS_DEFAULTS } from "@agent-kernel/config";
import type { AssistantMessage } from "@earendil-works/pi-ai";

/** The stall watchdog's default (`agents.defaults.streamIdleSeconds`). */
export const DEFAULT_STALL_TIMEOUT_MS = AGENT_DEFAULTS.streamIdleSeconds * 1000;

export type TurnLimitReason =
  | "tool_call_limit"
  | "model_call_limit"
  | "stream_time_limit"
  | "reply_size_limit";

/** The reasons a turn ends with when it hits a limit; its payloads already tell the user. */
export const TURN_LIMIT_REASONS: readonly TurnLimitReason[] = [
  "tool_call_limit",
  "model_call_limit",
  "stream_time_limit",
  "reply_size_limit",
];

export interface TurnLimitValues {
  readonly maxToolCalls: number;
  readonly maxModelCalls: number;
  readonly streamIdleMs: number;
  readonly maxStreamMs: number;
  readonly maxReplyChars: number;
}

function positive(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : fallback;
}

/**
 * The agent's limits: its entry over `agents.defaults`, the tool-call limit from its tools section, else
 * `tools.maxCallsPerTurn`. `stallTimeoutMs` (the kernel's executor setting) overrides the idle time.
 */
export function resolveTurnLimits(
  config: KernelConfig,
  agentId: string,
  stallTimeoutMs?: number,
): TurnLimitValues {
  const agent: Partial<KernelConfig["agents"]["defaults"]> =
    resolveAgentConfig(config, agentId) ?? config.agents.defaults;
  const D = AGENT_DEFAULTS;
  return {
    maxToolCalls: positive(
      agent.tools?.maxCallsPerTurn ?? config.tools.maxCallsPerTurn,
      TOOLS_DEFAULTS.maxCallsPerTurn,
    ),
    maxModelCalls: positive(agent.maxModelCallsPerTurn, D.maxModelCallsPerTurn),
    streamIdleMs: positive(stallTimeoutMs, positive(agent.streamIdleSeconds, D.streamIdleSeconds) * 1000),
    maxStreamMs: positive(agent.streamMaxSeconds, D.streamMaxSeconds) * 1000,
    maxReplyChars: positive(agent.replyMaxChars, D.replyMaxChars),
  };
}

export interface LimitBreach {
  readonly reason: TurnLimitReason;
  /** For the run record: what was hit and the key that sets it. */
  readonly message: string;
  /** The one line the user gets. */
  readonly notice: string;
  /** The notice ends the cut reply (the stream limits); otherwise it is a payload of its own. */
  readonly inReply: boolean;
}

/** A request refused before it was sent because the turn's model calls are spent. */
export class TurnLimitError extends Error {
  readonly breach: LimitBreach;
  constructor(breach: LimitBreach) {
    super(breach.message);
    this.breach = breach;
    this.name = "TurnLimitError";
  }
}

export interface TurnLimitHandlers {
  /** A response sent nothing for the idle time: the executor stops the attempt as stalled. */
  readonly onStall: () => void;
  /** The turn must stop now (a cut response, or pi's loop ended by a limit): the executor aborts pi. */
  readonly onBreach: (breach: LimitBreach) => void;
}

/** The turn's own timeout, kept on the watchdog's timer (one timer a turn instead of two). */
export interface TurnTimeout {
  /** From the limits' creation; 0 or less: none. */
  readonly ms: number;
  readonly onTimeout: () => void;
}

/** What streamed piece a budget is asked about. */
export type StreamedKind = "text" | "thinking" | "toolcall";

/** The part of the limits the event bridge drives. */
export interface StreamLimits {
  /** Provider activity: `streaming` true while a model call is open, false between calls. */
  activity(streaming: boolean): void;
  /** True once the response in progress is being cut: its later events are dropped. */
  readonly cutting: boolean;
  /** A streamed piece of the response: the part within its budget (may be shorter, or empty). */
  keep(delta: string, kind: StreamedKind): string;
  /**
   * At message_end: when the response was cut, rewrites `message` in place (before pi stores it) and
   * returns the text that follows what was kept (the line saying it was cut); else undefined.
   */
  finishCutResponse(message: AssistantMessage): string | undefined;
}

/** One turn's limits: counters, the stream watchdog and the response budget. */
export class TurnLimits implements StreamLimits {
  readonly values: TurnLimitValues;
  readonly #handlers: TurnLimitHandlers;
  #toolCalls = 0;
  #modelCalls = 0;
  #breach: LimitBreach | undefined;
  /** Whether pi's session was told to stop for the breach. */
  #stopped = false;
  // The model call in progress: its deadlines and the characters its response streamed.
  #inCall = false;
  #idleDeadline: number | undefined;
  #streamDeadline: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (`performance.now()` time). */
  #timerAt = 0;
  /** The turn's timeout (`TurnTimeout`), while it has not fired. */
  #turnDeadline: number | undefined;
  readonly #onTurnTimeout: (() => void) | undefined;
  #responseChars = 0;
  #textKept = 0;
  /** The line that ends the response being cut; undefined while it is not. */
  #cutNotice: string | undefined;

  constructor(values: TurnLimitValues, handlers: TurnLimitHandlers, turnTimeout?: TurnTimeout) {
    this.values = values;
    this.#handlers = handlers;
    if (turnTimeout !== undefined && turnTimeout.ms > 0) {
      const now = performance.now();
      this.#turnDeadline = now + turnTimeout.ms;
      this.#onTurnTimeout = turnTimeout.onTimeout;
      // One timer for the whole turn, armed now: no later than the turn's timeout, and no later than the
      // earliest a stream deadline can fall (a model call starts after now), so `activity` never re-arms it;
      // when it fires with nothing due it re-arms for what is left.
      const firstWatch = now + Math.min(values.streamIdleMs, values.maxStreamMs);
      this.#arm(Math.min(this.#turnDeadline, firstWatch), now);
    }
  }

  /** The first limit the turn hit, if any. */
  get breach(): LimitBreach | undefined {
    return this.#breach;
  }

  get toolCalls(): number {
    return this.#toolCalls;
  }

  get modelCalls(): number {
    return this.#modelCalls;
  }

  get cutting(): boolean {
    return this.#cutNotice !== undefined;
  }

  // ── model calls ─────────────────────────────────────────────────────────────────────────────────────

  /** Right before every provider request. Throws a TurnLimitError when the turn's model calls are spent. */
  beforeRequest(): void {
    if (this.#modelCalls >= this.values.maxModelCalls) {
      const breach = this.#hit(this.#modelCallBreach());
      throw new TurnLimitError(breach);
    }
    this.#modelCalls += 1;
  }

  /** Whether another attempt may start; when not, the model-call breach is recorded. */
  mayStartAttempt(): boolean {
    if (this.#breach !== undefined) return false;
    if (this.#modelCalls < this.values.maxModelCalls) return true;
    this.#hit(this.#modelCallBreach());
    return false;
  }

  // ── pi's loop hooks ─────────────────────────────────────────────────────────────────────────────────

  /** pi's beforeToolCall: a refusal for the model (the tool does not run), or undefined. */
  beforeToolCall(): string | undefined {
    const max = this.values.maxToolCalls;
    if (this.#breach === undefined && this.#toolCalls < max) {
      this.#toolCalls += 1;
      return undefined;
    }
    this.#hit({
      reason: "tool_call_limit",
      message: `the model asked for more than ${max} tool calls in one turn (tools.maxCallsPerTurn: ${max})`,
      notice: `⚠️ Stopped: this reply reached its limit of ${max} tool calls.`,
      inReply: false,
    });
    return `Not run: this turn reached its limit of ${max} tool calls. Stop calling tools and answer with what you have.`;
  }

  /** pi's finishTurn, after a response and its tool calls: true ends pi's loop there. */
  endAfterTurn(toolResults: number): boolean {
    if (this.#breach === undefined && toolResults > 0 && this.#modelCalls >= this.values.maxModelCalls)
      this.#hit(this.#modelCallBreach());
    if (this.#breach === undefined) return false;
    this.#stop();
    return true;
  }

  // ── the stream watchdog ─────────────────────────────────────────────────────────────────────────────

  activity(streaming: boolean): void {
    if (!streaming) {
      this.#inCall = false;
      this.#idleDeadline = undefined;
      this.#streamDeadline = undefined;
      return;
    }
    const now = performance.now();
    if (!this.#inCall) {
      // A new model call: its own time and its own budget.
      this.#inCall = true;
      this.#responseChars = 0;
      this.#textKept = 0;
      this.#cutNotice = undefined;
      this.#streamDeadline = now + this.values.maxStreamMs;
    }
    if (this.#cutNotice !== undefined) return;
    // Deadlines, not a timer per event: every event only moves the idle deadline (a stream sends hundreds),
    // and the one pending timer re-arms itself for what is left when it fires early.
    this.#idleDeadline = now + this.values.streamIdleMs;
    // Re-armed only when the pending timer would fire after the deadlines (it was armed for a later one).
    const next = this.#nextDeadline();
    if (this.#timer === undefined || this.#timerAt > next) this.#arm(next, now);
  }

  /** The one pending timer, set to fire at `at` (replacing one pending). */
  #arm(at: number, now: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(this.#check, delay(at - now));
  }

  /** Stops the watchdog's timer and the turn's timeout (the turn is over). */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#idleDeadline = undefined;
    this.#streamDeadline = undefined;
    this.#turnDeadline = undefined;
  }

  readonly #check = (): void => {
    this.#timer = undefined;
    const now = performance.now();
    if (this.#turnDeadline !== undefined && now >= this.#turnDeadline) {
      this.#turnDeadline = undefined;
      this.#onTurnTimeout?.();
    }
    if (this.#idleDeadline !== undefined) {
      if (this.#streamDeadline !== undefined && now >= this.#streamDeadline) {
        this.#idleDeadline = undefined;
        this.#streamDeadline = undefined;
        const seconds = Math.round(this.values.maxStreamMs / 1000);
        this.#cutResponse({
          reason: "stream_time_limit",
          message: `a model response streamed for longer than ${this.values.maxStreamMs} ms (streamMaxSeconds: ${seconds})`,
          notice: `⚠️ Cut: the model kept streaming past the ${seconds} s limit for one reply.`,
          inReply: true,
        });
      } else if (now >= this.#idleDeadline) {
        this.#idleDeadline = undefined;
        this.#streamDeadline = undefined;
        this.#handlers.onStall();
      }
    }
    // What is still ahead (the turn's timeout, the stream's deadlines), unless a handler armed it already.
    const next = this.#nextDeadline();
    if (this.#timer === undefined && next !== Number.POSITIVE_INFINITY) this.#arm(next, now);
  };

  #nextDeadline(): number {
    const idle = this.#idleDeadline ?? Number.POSITIVE_INFINITY;
    return Math.min(idle, this.#streamDeadline ?? idle, this.#turnDeadline ?? idle);
  }

  // ── the response budget ─────────────────────────────────────────────────────────────────────────────

  keep(delta: string, kind: StreamedKind): string {
    if (this.#cutNotice !== undefined) return "";
    const room = this.values.maxReplyChars - this.#responseChars;
    if (delta.length <= room) {
      this.#responseChars += delta.length;
      if (kind === "text") this.#textKept += delta.length;
      return delta;
    }
    let kept = delta.slice(0, Math.max(0, room));
    // never half a surrogate pair
    const last = kept.charCodeAt(kept.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) kept = kept.slice(0, -1);
    this.#responseChars += kept.length;
    if (kind === "text") this.#textKept += kept.length;
    const max = this.values.maxReplyChars;
    this.#cutResponse({
      reason: "reply_size_limit",
      message: `a model response passed ${max} characters (replyMaxChars: ${max})`,
      notice: `⚠️ Cut: the reply reached its limit of ${max} characters.`,
      inReply: true,
    });
    return kept;
  }

  finishCutResponse(message: AssistantMessage): string | undefined {
    const notice = this.#cutNotice;
    if (notice === undefined) return undefined;
    const text = message.content
      .flatMap((block) => (block.type === "text" ? [block.text] : []))
      .join("")
      .slice(0, this.#textKept);
    const tail = text.trim() === "" ? notice : `\n\n${notice}`;
    message.content = [{ type: "text", text: text + tail }];
    message.stopReason = "length";
    delete message.errorMessage;
    return tail;
  }

  // ── breaches ────────────────────────────────────────────────────────────────────────────────────────

  #modelCallBreach(): LimitBreach {
    const max = this.values.maxModelCalls;
    return {
      reason: "model_call_limit",
      message: `the turn made ${max} model calls, its limit (maxModelCallsPerTurn: ${max})`,
      notice: `⚠️ Stopped: this reply reached its limit of ${max} model calls.`,
      inReply: false,
    };
  }

  /** Records the turn's first breach; later ones change nothing. */
  #hit(breach: LimitBreach): LimitBreach {
    this.#breach ??= breach;
    return this.#breach;
  }

  #cutResponse(breach: LimitBreach): void {
    this.#cutNotice = breach.notice;
    this.#hit(breach);
    this.#stop();
  }

  #stop(): void {
    if (this.#stopped || this.#breach === undefined) return;
    this.#stopped = true;
    this.#handlers.onBreach(this.#breach);
  }
}

/**
 * A timer's delay in whole milliseconds, at least 1: Node keeps one list per distinct delay, so turns that arm
 * the same whole delay share a list instead of each making (and unmaking) one for a fractional delay. Never
 * early: a deadline not yet reached when the timer fires re-arms it for what is left.
 */
function delay(ms: number): number {
  // Node's timers hold at most 2^31 - 1 ms (≈ 24.8 days; a longer delay fires after 1 ms): a longer timeout waits
  // that long and re-arms for the rest.
  return Math.min(MAX_TIMER_DELAY_MS, Math.max(1, Math.ceil(ms)));
}

const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;
