// Steering a running turn: the handle through which a message reaches the live pi AgentSession of a turn
// (pi's `AgentSession.steer`: delivered after the current assistant message and its tool batch, before the
// next model call). Owns: which session of the turn is live (the executor attaches each attempt's session
// while it prompts and detaches it after), telling the caller whether a steered message actually reached
// the model's context (pi emits the user message's `message_start` when it does), and OpenClaw's skip rule:
// the queue is checked after each tool call, and while a steered message waits, the remaining tool calls of
// the current assistant message are skipped (`skipReason`; the tools' wrapper is `steerableTools`). Does not
// own: deciding what to steer (the entry point), or finding the run (the kernel's run registry).
import { AsyncLocalStorage } from "node:async_hooks";
import type { AgentSession, AgentSessionEvent, ToolDefinition } from "@earendil-works/pi-coding-agent";

/** The error result of a tool call skipped for a steered message (OpenClaw's text). */
export const STEER_SKIP_MESSAGE = "Skipped due to queued user message.";

interface PendingSteer {
  readonly text: string;
  readonly resolve: (delivered: boolean) => void;
}

function userText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : ""))
    .join("");
}

/**
 * One per turn. `steer(text)` resolves true once the text is in the model's context within this turn, and
 * false when it cannot be or was not: no attempt is prompting right now (before the first, between two,
 * after the last), the turn ended, or the attempt ended before pi picked the message up.
 */
export class SteerHandle {
  #session: AgentSession | undefined;
  #unsubscribe: (() => void) | undefined;
  #pending: PendingSteer[] = [];
  #ended = false;
  /** The tool call ids of the latest assistant message, in order. */
  #batch: readonly string[] = [];

  /** Whether a message steered now would go to a prompting attempt. */
  get steerable(): boolean {
    return !this.#ended && this.#session !== undefined;
  }

  steer(text: string): Promise<boolean> {
    const session = this.#session;
    if (this.#ended || session === undefined || text.trim() === "") return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      this.#pending.push({ text, resolve });
      session.steer(text).catch(() => this.#settle(text, false));
    });
  }

  /** The executor: `session` is about to prompt (or continue); steered messages go to it. */
  attach(session: AgentSession): void {
    this.detach();
    if (this.#ended) return;
    this.#session = session;
    this.#unsubscribe = session.subscribe((event: AgentSessionEvent) => {
      if (event.type === "message_start" && event.message.role === "user") {
        this.#settle(userText(event.message.content), true);
      }
      if (event.type === "message_end" && event.message.role === "assistant") {
        const content = (event.message as { content?: unknown }).content;
        this.#batch = Array.isArray(content)
          ? content.flatMap((block: { type?: string; id?: string }) =>
              block.type === "toolCall" && typeof block.id === "string" ? [block.id] : [],
            )
          : [];
      }
    });
  }

  /**
   * Why the tool call `toolCallId` is not run: a steered message waits and an earlier tool call of the same
   * assistant message has run (the queue is checked after each tool call), so the rest of the message's calls
   * are skipped and the message goes to the model next. Undefined: run it.
   */
  skipReason(toolCallId: string): string | undefined {
    if (this.#pending.length === 0) return undefined;
    return this.#batch.indexOf(toolCallId) > 0 ? STEER_SKIP_MESSAGE : undefined;
  }

  /** The executor: the attempt stopped prompting; whatever pi did not pick up was not delivered. */
  detach(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#session = undefined;
    const undelivered = this.#pending;
    this.#pending = [];
    for (const pending of undelivered) pending.resolve(false);
  }

  /** The executor: the turn is over; every later `steer` answers false. */
  end(): void {
    this.detach();
    this.#ended = true;
  }

  #settle(text: string, delivered: boolean): void {
    const index = this.#pending.findIndex((pending) => pending.text === text);
    if (index < 0) return;
    const [pending] = this.#pending.splice(index, 1);
    pending?.resolve(delivered);
  }
}

/** The steer handle of the turn a tool call belongs to (set by `steerableTools` for the rest of the turn). */
const turnSteering = new AsyncLocalStorage<SteerHandle>();
/** Each tool's steerable wrapper, made once: a warm session is kept only for the very same tool objects. */
const steerable = new WeakMap<ToolDefinition, ToolDefinition>();

function steerableTool(tool: ToolDefinition): ToolDefinition {
  let wrapped = steerable.get(tool);
  if (wrapped === undefined) {
    wrapped = {
      ...tool,
      executionMode: "sequential",
      execute: (toolCallId, params, signal, onUpdate, ctx) => {
        const skip = turnSteering.getStore()?.skipReason(toolCallId);
        if (skip !== undefined) return Promise.reject(new Error(skip));
        return tool.execute(toolCallId, params, signal, onUpdate, ctx);
      },
    };
    steerable.set(tool, wrapped);
  }
  return wrapped;
}

/**
 * The turn's tools under OpenClaw's steering rule: each call asks the turn's handle first and is skipped (an
 * error result, "Skipped due to queued user message.") while a steered message waits after an earlier call of
 * the same assistant message. The calls of one message run one after another (pi's `executionMode:
 * "sequential"`), so there is an "after each tool call" to check at. The handle is bound to the rest of the
 * caller's asynchronous flow (the turn: its pi loop and tool calls), so the wrappers stay the same objects
 * from turn to turn.
 */
export function steerableTools(tools: readonly ToolDefinition[], handle: SteerHandle): ToolDefinition[] {
  turnSteering.enterWith(handle);
  return tools.map(steerableTool);
}
