// Enforcing the policy when a tool is called. Owns: wrapping a pi tool (an
// AgentTool or a ToolDefinition, through the shapes in pi-tool-shapes.ts) so
// that a call the policy blocks fails with the explanation the model sees,
// and an aborted call stops at once with pi's "Operation aborted". Does not
// own: building the tool list (the caller filters with ToolPolicy.filter) or
// pi's own hooks.
import type { ExecutableToolLike } from "./pi-tool-shapes.ts";
import { formatToolDecision, type ToolDecision, type ToolPolicy } from "./resolve.ts";

/** Thrown by a wrapped tool the policy blocks; pi turns it into an `isError` tool result with this text. */
export class ToolPolicyBlockedError extends Error {
  override readonly name = "ToolPolicyBlockedError";
  readonly decision: ToolDecision;
  constructor(decision: ToolDecision) {
    super(`Tool "${decision.tool}" is not available in this run. ${formatToolDecision(decision)}.`);
    this.decision = decision;
  }
}

/** pi reports tool calls cut short by an abort as "Operation aborted"; the wrapper uses the same words. */
export const ABORTED_MESSAGE = "Operation aborted";

function abortError(): Error {
  const error = new Error(ABORTED_MESSAGE);
  error.name = "AbortError";
  return error;
}

/** What `enforceToolPolicy` checks each call against (a policy, or a function giving the current one) and whom it tells about blocked calls. */
export interface EnforceOptions {
  /** The policy, or a function returning the current one (asked at every call, e.g. after a config reload). */
  readonly policy: ToolPolicy | (() => ToolPolicy);
  /** Told about every blocked call (for the run record). */
  readonly onBlocked?: (decision: ToolDecision) => void;
}

/**
 * The same tool, checked against the policy at every call. Blocked: the call
 * throws ToolPolicyBlockedError (pi shows the model an error result with the
 * explanation; the tool never runs). Aborted before the call: throws
 * "Operation aborted" without running. Aborted while running: rejects at once
 * with "Operation aborted"; the tool itself got the signal and stops on its own.
 */
export function enforceToolPolicy<T extends ExecutableToolLike>(tool: T, options: EnforceOptions): T {
  const currentPolicy =
    typeof options.policy === "function" ? options.policy : () => options.policy as ToolPolicy;
  const original = tool.execute;
  const execute = async (toolCallId: string, params: never, signal?: AbortSignal, ...rest: never[]) => {
    if (signal?.aborted) throw abortError();
    const decision = currentPolicy().decide(tool.name);
    if (!decision.allowed) {
      options.onBlocked?.(decision);
      throw new ToolPolicyBlockedError(decision);
    }
    const running = original.call(tool, toolCallId, params, signal, ...rest);
    if (!signal) return running;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(abortError());
      signal.addEventListener("abort", onAbort, { once: true });
    });
    // A tool that settles after the abort must not surface an unhandled rejection.
    running.catch(() => {});
    try {
      return await Promise.race([running, aborted]);
    } finally {
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
  };
  return { ...tool, execute } as T;
}

/** Wraps every tool; see enforceToolPolicy. */
export function enforceToolPolicyOnAll<T extends ExecutableToolLike>(
  tools: readonly T[],
  options: EnforceOptions,
): T[] {
  return tools.map((tool) => enforceToolPolicy(tool, options));
}
