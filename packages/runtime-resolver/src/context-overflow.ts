// Context overflow in provider error text (OpenClaw 2026.9.6's `context-overflow.ts`): the sure and the
// likely overflow, reasoning-constraint messages and compaction failures. Owns: those predicates. Does not
// own: the wording tables (error-patterns.ts) or what the kernel does about an overflow.
import {
  isBillingMessage,
  isProviderRequestSizeCeilingError,
  isRateLimitMessage,
  matchesOverflowScope,
} from "./error-patterns.ts";
import { lower } from "./message-rules.ts";

// Context overflow.

function hasTpmHint(raw: string): boolean {
  return matchesOverflowScope(raw, "tpm-rate-limit-hint");
}

/** "Reasoning is mandatory"-type constraints: never an overflow, a thinking-level problem. */
export function isReasoningConstraintMessage(raw: string | undefined): boolean {
  const value = lower(raw);
  return (
    value.includes("reasoning is mandatory") ||
    value.includes("reasoning is required") ||
    value.includes("requires reasoning") ||
    (value.includes("reasoning") && value.includes("cannot be disabled"))
  );
}

function looksLikeProviderOverflowCandidate(raw: string): boolean {
  return (
    !isRateLimitMessage(raw) &&
    /\b(?:context|window|prompt|token|tokens|input|request|model)\b/i.test(raw) &&
    /\b(?:too\s+(?:large|long|many)|exceed(?:s|ed|ing)?|overflow|limit|maximum|max)\b/i.test(raw)
  );
}

/** Explicit context-window overflow wording, not confused with TPM rate limits. */
export function isContextOverflowError(message: string | undefined): boolean {
  if (!message) return false;
  if (hasTpmHint(message) && !isProviderRequestSizeCeilingError(message)) return false;
  if (isReasoningConstraintMessage(message)) return false;
  return (
    matchesOverflowScope(message, "failover-explicit") ||
    (looksLikeProviderOverflowCandidate(message) && matchesOverflowScope(message, "provider-fallback"))
  );
}

/** The broader check that routes a run to compaction (adds looser hints, excludes quota and billing). */
export function isLikelyContextOverflowError(message: string | undefined): boolean {
  if (!message) return false;
  if (isProviderRequestSizeCeilingError(message)) return isContextOverflowError(message);
  if (hasTpmHint(message)) return false;
  if (isReasoningConstraintMessage(message)) return false;
  if (isBillingMessage(message)) return false;
  if (matchesOverflowScope(message, "context-window-too-small")) return false;
  if (isRateLimitMessage(message)) return false;
  if (isContextOverflowError(message)) return true;
  if (lower(message).includes("prompt template")) return false;
  if (matchesOverflowScope(message, "rate-limit-hint")) return false;
  return matchesOverflowScope(message, "failover-hint");
}

/** A compaction/summarisation failure caused by an overflow (the run cannot recover by compacting). */
export function isCompactionFailureError(message: string | undefined): boolean {
  if (!message) return false;
  const value = lower(message);
  if (!(value.includes("summarization failed") || value.includes("compaction"))) return false;
  return isLikelyContextOverflowError(message) || value.includes("context overflow");
}
