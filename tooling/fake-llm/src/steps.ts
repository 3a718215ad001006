// Small builders for the common steps, so tests read as the turn they script. Owns nothing else: every
// builder returns a plain DataStep that a JSON scenario could hold as well.
import type { ErrorStep, FaultName, ResponseStep } from "./types.ts";

/** A text answer, e.g. `reply("Hello")`, `reply("Hi", { usage: { input: 5, output: 1 } })`. */
export function reply(text: string, extra: Omit<ResponseStep, "type" | "text"> = {}): ResponseStep {
  return { type: "response", text, ...extra };
}

/** A turn that calls one tool, e.g. `toolCall("read", { path: "a.txt" })`. */
export function toolCall(
  name: string,
  args: Record<string, unknown>,
  extra: Omit<ResponseStep, "type" | "toolCalls"> & { id?: string } = {},
): ResponseStep {
  const { id, ...rest } = extra;
  return {
    type: "response",
    toolCalls: [{ name, arguments: args, ...(id !== undefined ? { id } : {}) }],
    ...rest,
  };
}

/** An HTTP error, e.g. `fault("rate_limit", { retryAfterSeconds: 1 })`. */
export function fault(name: FaultName, extra: Omit<ErrorStep, "type" | "fault"> = {}): ErrorStep {
  return { type: "error", fault: name, ...extra };
}
