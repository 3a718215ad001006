// Steering a running turn: the handle through which a message reaches the live pi AgentSession of a turn
// (pi's `AgentSession.steer`: delivered after the current assistant message and its tool batch, before the
// next model call). Owns: which session of the turn is live (the executor attaches each attempt's session
// while it prompts and detaches it after), telling the caller whether a steered message actually reached
// the model's context (pi emits the user message's `message_start` when it does), and OpenClaw's skip rule:
// the queue is checked after each tool call, and while a steered message waits, the remaining tool calls of
// the current assistant message are skipped (`skipReason`; the tools' wrapper is `steerableTools`). Does not
// own: deciding what to steer (the entry point), or finding the run (the kernel's run registry).
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
 * The handle attached to each prompting AgentSession, by the session's manager: a tool call's context names
 * it (pi's `ctx.sessionManager`), so a shared tool wrapper finds its turn without an AsyncLocalStorage (whose
 * `enterWith` turned on promise hooks for the whole process: a cost on every await of every turn).
 */
const attachedHandles = new WeakMap<object, SteerHandle>();
/** Steered messages waiting in any handle: while none waits, a tool call looks nothing up. */
let waitingSteers = 0;

function handleOfCall(ctx: unknown): SteerHandle | undefined {
  try {
    const manager = (ctx as { readonly sessionManager?: unknown } | undefined)?.sessionManager;
    return typeof manager === "object" && manager !== null ? attachedHandles.get(manager) : undefined;
  } catch {
    // (pi's context getters throw once its runner is disposed: no live turn then)
    return undefined;
  }
}

/**
 * One per turn. `steer(text)` resolves true once the text is in the model's context within this turn, and
 * false when it cannot be or was not: no attempt is prompting right now (before the first, between two,
 * after the last), the turn ended, or the attempt ended before pi picked the message up.
 */
export class SteerHandle {
  #session: AgentSession | undefined;
  /** The attached session's manager, the key in attachedHandles. */
  #manager: object | undefined;
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
      waitingSteers++;
      session.steer(text).catch(() => this.#settle(text, false));
    });
  }

  /** The executor: `session` is about to prompt (or continue); steered messages go to it. */
  attach(session: AgentSession): void {
    this.detach();
    if (this.#ended) return;
    this.#session = session;
    this.#manager = session.sessionManager;
    attachedHandles.set(this.#manager, this);
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
    const manager = this.#manager;
    if (manager !== undefined && attachedHandles.get(manager) === this) attachedHandles.delete(manager);
    this.#manager = undefined;
    const undelivered = this.#pending;
    this.#pending = [];
    waitingSteers -= undelivered.length;
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
    waitingSteers--;
    pending?.resolve(delivered);
  }
}

/** Each tool's steerable wrapper, made once: a warm session is kept only for the very same tool objects. */
const steerable = new WeakMap<ToolDefinition, ToolDefinition>();

function steerableTool(tool: ToolDefinition): ToolDefinition {
  let wrapped = steerable.get(tool);
  if (wrapped === undefined) {
    wrapped = {
      ...tool,
      executionMode: "sequential",
      execute: (toolCallId, params, signal, onUpdate, ctx) => {
        if (waitingSteers > 0) {
          const skip = handleOfCall(ctx)?.skipReason(toolCallId);
          if (skip !== undefined) return Promise.reject(new Error(skip));
        }
        return tool.execute(toolCallId, params, signal, onUpdate, ctx);
      },
    };
    steerable.set(tool, wrapped);
  }
  return wrapped;
}

/**
 * The turn's tools under OpenClaw's steering rule: each call asks its turn's handle first and is skipped (an
 * error result, "Skipped due to queued user message.") while a steered message waits after an earlier call of
 * the same assistant message. The calls of one message run one after another (pi's `executionMode:
 * "sequential"`), so there is an "after each tool call" to check at. A call finds its turn's handle through the
 * session its context names (the handle attached to it while it prompts), so the wrappers stay the same objects
 * from turn to turn and across sessions.
 */
export function steerableTools(tools: readonly ToolDefinition[]): ToolDefinition[] {
  return tools.map(steerableTool);
}
