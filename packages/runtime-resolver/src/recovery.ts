// What to do about a failed provider call: the recovery plan per failover
// reason (openclaw-behaviors §7b, DESIGN §5). Owns: the ordered steps
// (lower thinking, compact and retry, retry the same call, cool the profile
// down, rotate the profile, fall back to the next model, surface) and which
// cooldown scope a reason gets. Does not own: running those steps (the
// turn-pipeline does) or the cooldown arithmetic (auth-cooldown.ts).
import { classifyFailover, type FailoverReason, type FailoverSignal } from "./classify-error.ts";
import { pickFallbackThinkingLevel, type ThinkLevel } from "./thinking.ts";

export type RecoveryStep =
  | { readonly kind: "lower_thinking"; readonly level: ThinkLevel }
  | { readonly kind: "compact_and_retry" }
  | { readonly kind: "retry_same"; readonly maxAttempts: number }
  | { readonly kind: "cool_down"; readonly scope: "model" | "profile"; readonly reason: FailoverReason }
  | { readonly kind: "rotate_profile"; readonly maxRotations?: number }
  | { readonly kind: "fallback_model" }
  | { readonly kind: "surface"; readonly why: string };

export interface RecoveryPlan {
  /** The classified reason; null when the text matched no reason. */
  readonly reason: FailoverReason | null;
  /** Tried in order; the last step is what remains when the earlier ones are exhausted. */
  readonly steps: readonly RecoveryStep[];
  /** True when this failure may move the run to the next model candidate. */
  readonly advancesModelChain: boolean;
}

export interface RecoveryInput extends FailoverSignal {
  /** Thinking levels already tried for this model and profile (cleared on profile rotation). */
  readonly attemptedThinking?: ReadonlySet<string> | undefined;
  /** Overflow compactions already done in this run. */
  readonly overflowCompactions?: number | undefined;
  /** The user aborted: never retried, never falls back. */
  readonly aborted?: boolean | undefined;
}

/** OpenClaw's bounds: 3 overflow compactions per run, 10 same-model rate-limit retries, 1 rotation on overload. */
export const RECOVERY_LIMITS = {
  overflowCompactions: 3,
  rateLimitRetries: 10,
  overloadedRotations: 1,
} as const;

/** rate_limit, timeout and model_not_found cool down one model of a profile; every other reason the whole profile. */
export function cooldownScope(reason: FailoverReason): "model" | "profile" {
  return reason === "rate_limit" || reason === "timeout" || reason === "model_not_found"
    ? "model"
    : "profile";
}

const surface = (why: string): RecoveryStep => ({ kind: "surface", why });

/** Classifies the failure and returns the ordered recovery steps for it. */
export function planRecovery(input: RecoveryInput): RecoveryPlan {
  if (input.aborted)
    return { reason: null, steps: [surface("aborted by the caller")], advancesModelChain: false };
  const lowered = pickFallbackThinkingLevel({
    message: input.message,
    attempted: input.attemptedThinking ?? new Set(),
  });
  const reason = classifyFailover(input);
  if (lowered !== undefined) {
    return {
      reason,
      steps: [{ kind: "lower_thinking", level: lowered }, surface("no thinking level left to try")],
      advancesModelChain: false,
    };
  }
  const coolDown = (r: FailoverReason): RecoveryStep => ({
    kind: "cool_down",
    scope: cooldownScope(r),
    reason: r,
  });
  const fallback: RecoveryStep = { kind: "fallback_model" };
  const exhausted = surface("every candidate model and profile failed");
  switch (reason) {
    case "context_overflow": {
      const done = input.overflowCompactions ?? 0;
      return {
        reason,
        steps:
          done < RECOVERY_LIMITS.overflowCompactions
            ? [{ kind: "compact_and_retry" }, surface("context still too large after compaction")]
            : [surface(`context still too large after ${RECOVERY_LIMITS.overflowCompactions} compactions`)],
        advancesModelChain: false,
      };
    }
    case "rate_limit":
      return {
        reason,
        steps: [
          { kind: "retry_same", maxAttempts: RECOVERY_LIMITS.rateLimitRetries },
          coolDown(reason),
          { kind: "rotate_profile" },
          fallback,
          exhausted,
        ],
        advancesModelChain: true,
      };
    case "overloaded":
      return {
        reason,
        steps: [
          { kind: "retry_same", maxAttempts: RECOVERY_LIMITS.rateLimitRetries },
          coolDown(reason),
          { kind: "rotate_profile", maxRotations: RECOVERY_LIMITS.overloadedRotations },
          fallback,
          exhausted,
        ],
        advancesModelChain: true,
      };
    case "auth":
    case "auth_permanent":
    case "billing":
    case "timeout":
    case "server_error":
      return {
        reason,
        steps: [coolDown(reason), { kind: "rotate_profile" }, fallback, exhausted],
        advancesModelChain: true,
      };
    case "model_not_found":
      return { reason, steps: [coolDown(reason), fallback, exhausted], advancesModelChain: true };
    case "format":
      return {
        reason,
        steps: [surface("the provider rejected the request format")],
        advancesModelChain: false,
      };
    case "session_expired":
      return {
        reason,
        steps: [surface("the provider session expired; start a new one")],
        advancesModelChain: false,
      };
    default:
      // tls_certificate, empty_response, no_error_details, unclassified, unknown, or no reason at all:
      // another candidate may work, so fall back while candidates remain.
      return { reason, steps: [fallback, exhausted], advancesModelChain: true };
  }
}
