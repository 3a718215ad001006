// Warm pi AgentSessions, kept between turns of one session. Owns: holding the AgentSession a session's last
// turn answered with, handing it to the session's next turn only when that turn would create exactly the
// same session (same model runtime, model, thinking level, tools, system prompt, bootstrap files, settings)
// on exactly the same transcript (the manager's leaf has not moved since), and disposing it otherwise or when
// its session-manager binding leaves the warm-binding cache. Does not own: creating sessions
// (hermetic-session.ts), the bindings (session-manager/binding-cache.ts), or deciding which turns may keep one
// (the executor keeps a session only after a turn that succeeded at its first attempt).
//
// Why: creating a pi AgentSession (settings, resource loader, tool registry, system-prompt sections, the
// context rebuilt from the transcript) is the largest cost of a warm turn after the store's commits. pi's own
// interactive mode runs every prompt of a session on one AgentSession; a warm session's next turn does the
// same. Why it is sound: an AgentSession's inputs are all in its shape, and its context is what pi appended
// through the binding's manager; any write that did not come from the session itself (a model or thinking
// change the executor records, a context edit after a failed attempt, a bootstrap record) moves the leaf, and
// a binding out of sync with the store is replaced, which drops its warm session.
import type { Api, Model } from "@earendil-works/pi-ai";
import type {
  AgentSession,
  ModelRuntime,
  SessionManager,
  ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import type { PiThinkingLevel } from "./hermetic-session.ts";
import type { BootstrapFile } from "./system-prompt.ts";

/** Everything an AgentSession is created from, beyond its session manager. */
export interface AgentSessionShape {
  readonly modelRuntime: ModelRuntime;
  readonly model: Model<Api>;
  readonly thinkingLevel: PiThinkingLevel;
  readonly tools: readonly ToolDefinition[];
  readonly systemPrompt: string;
  readonly extraSystemPrompt: string | undefined;
  readonly bootstrapFiles: readonly BootstrapFile[];
  readonly keepRecentTokens: number;
}

/** What runs at pi's loop points of the session (the turn using the session sets each). */
export interface RequestHook {
  /** Right before each model request; throwing refuses the request. */
  beforeRequest: () => void;
  /** Before each tool call: a refusal (the tool does not run, the model gets it as the error result). */
  beforeToolCall: () => string | undefined;
  /** After each model response and its tool calls: true ends pi's loop there. */
  endAfterTurn: (toolResults: number) => boolean;
  /** The fetch every model request is made with (it watches what the provider answered); default fetch. */
  fetch: typeof globalThis.fetch | undefined;
}

export interface WarmAgentSession {
  readonly session: AgentSession;
  readonly shape: AgentSessionShape;
  readonly requestHook: RequestHook;
}

interface Kept extends WarmAgentSession {
  /** The manager's leaf when the session was kept: a moved leaf means writes the session did not make. */
  readonly leafId: string | null;
}

/**
 * Routes every model request of `session` through `hook.beforeRequest` first (pi's `streamFunction` is the
 * one call every request goes through), every tool call through `hook.beforeToolCall` and the end of every
 * model response's tool batch through `hook.endAfterTurn` (after pi's own hooks there), and makes every
 * request with `hook.fetch` when one is set. Returns the hook; set its functions for each turn.
 */
export function installRequestHook(session: AgentSession): RequestHook {
  const hook: RequestHook = {
    beforeRequest: () => {},
    beforeToolCall: () => undefined,
    endAfterTurn: () => false,
    fetch: undefined,
  };
  const agent = session.agent;
  const streamFunction = agent.streamFunction;
  agent.streamFunction = (model, context, options) => {
    hook.beforeRequest();
    return streamFunction(
      model,
      context,
      hook.fetch === undefined ? options : { ...options, fetch: hook.fetch },
    );
  };
  const beforeToolCall = agent.beforeToolCall;
  // Not an async function: pi awaits what it returns, and a turn of 20 tool calls need not make 20 more
  // promises and their microtasks for a check that answers at once.
  agent.beforeToolCall = (context, signal) => {
    const refusal = hook.beforeToolCall();
    if (refusal !== undefined) return Promise.resolve({ block: true, reason: refusal });
    return beforeToolCall === undefined ? Promise.resolve(undefined) : beforeToolCall(context, signal);
  };
  const finishTurn = agent.finishTurn;
  agent.finishTurn = async (turn, signal) => {
    const decision = (await finishTurn?.(turn, signal)) ?? undefined;
    if (hook.endAfterTurn(turn.toolResults.length)) return { action: "end" };
    return decision;
  };
  return hook;
}

export class WarmAgentSessions {
  readonly #bySessionManager = new WeakMap<SessionManager, Kept>();

  /**
   * The session kept for `sessionManager` when it was made from `shape` and the transcript did not move
   * since; any other kept session is disposed. Either way nothing stays kept for the manager.
   */
  take(sessionManager: SessionManager, shape: AgentSessionShape): WarmAgentSession | undefined {
    const kept = this.#bySessionManager.get(sessionManager);
    if (kept === undefined) return undefined;
    this.#bySessionManager.delete(sessionManager);
    if (kept.leafId === sessionManager.getLeafId() && sameShape(kept.shape, shape)) return kept;
    kept.session.dispose();
    return undefined;
  }

  /** Keeps `warm` for the manager's next turn (disposing one kept before, if any). */
  keep(sessionManager: SessionManager, warm: WarmAgentSession): void {
    this.drop(sessionManager);
    this.#bySessionManager.set(sessionManager, { ...warm, leafId: sessionManager.getLeafId() });
  }

  /** Disposes the session kept for the manager, if any (its binding is gone). */
  drop(sessionManager: SessionManager): void {
    const kept = this.#bySessionManager.get(sessionManager);
    if (kept === undefined) return;
    this.#bySessionManager.delete(sessionManager);
    kept.session.dispose();
  }
}

function sameShape(a: AgentSessionShape, b: AgentSessionShape): boolean {
  return (
    a.modelRuntime === b.modelRuntime &&
    sameModel(a.model, b.model) &&
    a.thinkingLevel === b.thinkingLevel &&
    a.systemPrompt === b.systemPrompt &&
    a.extraSystemPrompt === b.extraSystemPrompt &&
    a.keepRecentTokens === b.keepRecentTokens &&
    sameItems(a.tools, b.tools, (x, y) => x === y) &&
    sameItems(a.bootstrapFiles, b.bootstrapFiles, (x, y) => x.path === y.path && x.content === y.content)
  );
}

/** The same object (a native provider's), or one built again from the same catalog entry. */
function sameModel(a: Model<Api>, b: Model<Api>): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function sameItems<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) {
    const x = a[index] as T;
    const y = b[index] as T;
    if (!same(x, y)) return false;
  }
  return true;
}
