// The session metadata after a run, in one place for every entry point (OpenClaw's
// `updateSessionStoreAfterAgentRun`, 2026.9.6). Owns: the patch — model and provider actually used
// (fallback-aware), the context window of that model, this run's usage (replacing the previous run's, as
// OpenClaw does), the context size of the last call, cost, compaction count, systemSent, abortedLastRun, last
// activity and the last route — and writing it with the store's retrying patch, skipped when the session
// was reset to another sessionId while the run ran. Does not own: levels or overrides the user sets
// (entry points persist `--thinking`, `/model`), or the run record (executor).
import { DEFAULT_CONTEXT_TOKENS, type KernelConfig } from "@agent-kernel/config";
import { resolveCatalogModel, resolveContextTokens } from "@agent-kernel/runtime-resolver";
import {
  RecordNotFoundError,
  type SessionMeta,
  type SessionMetaPatch,
  type SessionRecord,
  type SessionStore,
} from "@agent-kernel/session-store";
import type { TurnResult } from "@agent-kernel/turn-pipeline";
import type { PreparedSession } from "./types.ts";

/** The context window of the model that answered: the agent's override, else the model's, else 200k. */
function contextTokensFor(prepared: PreparedSession, provider: string, model: string): number {
  const runtime = prepared.runtimeContext;
  const first = runtime.model.value;
  if (provider === first.provider && model === first.model) return runtime.contextTokens.value;
  try {
    const agentOverride = runtime.contextTokens.source === "agent" ? runtime.contextTokens.value : undefined;
    return resolveContextTokens({
      agentContextTokens: agentOverride,
      model: resolveCatalogModel(prepared.config as KernelConfig, { provider, model }).model,
    }).value;
  } catch {
    return DEFAULT_CONTEXT_TOKENS;
  }
}

/** Pi compactions seen on the event stream plus the executor's overflow compactions, without counting one twice. */
function compactionsOf(result: TurnResult): number {
  const ended = result.events.filter(
    (event) =>
      event.stream === "compaction" &&
      event.data.phase === "end" &&
      event.data.aborted !== true &&
      event.data.errorMessage === undefined,
  ).length;
  return Math.max(ended, result.compactions);
}

/** The patch for the session after `result`; `now` is the run's end. */
export function sessionPatchAfterRun(
  prepared: PreparedSession,
  result: TurnResult,
  current: SessionMeta,
  now: number,
): SessionMetaPatch {
  const lastAttempt = result.attempts.at(-1);
  const used =
    result.provider !== undefined && result.model !== undefined
      ? { provider: result.provider, model: result.model }
      : lastAttempt
        ? { provider: lastAttempt.provider, model: lastAttempt.model }
        : undefined;
  const usage = result.usage;
  const hasUsage = usage.input + usage.output + usage.cacheRead + usage.cacheWrite > 0;
  // The context size is the last call's prompt; the result sums every call, which is exact for one call only.
  const calls = result.events.filter(
    (event) => event.stream === "assistant" && event.data.type === "message_end",
  ).length;
  const promptTokens = usage.input + usage.cacheRead + usage.cacheWrite;
  const compactions = compactionsOf(result);
  const route = prepared.session.messageContext;
  return {
    lastInteractionAt: now,
    lastActivityAt: now,
    ...(current.sessionStartedAt === undefined ? { sessionStartedAt: now } : {}),
    ...(used
      ? {
          modelProvider: used.provider,
          model: used.model,
          contextTokens: contextTokensFor(prepared, used.provider, used.model),
        }
      : {}),
    ...(hasUsage
      ? {
          inputTokens: usage.input,
          outputTokens: usage.output,
          cacheRead: usage.cacheRead,
          cacheWrite: usage.cacheWrite,
          totalTokens: promptTokens,
          totalTokensFresh: calls === 1,
          estimatedCostUsd: usage.costUsd,
        }
      : { totalTokensFresh: false }),
    ...(compactions > 0 ? { compactionCount: (current.compactionCount ?? 0) + compactions } : {}),
    // The system prompt went out with the first provider call.
    ...(result.attempts.length > 0 ? { systemSent: true } : {}),
    abortedLastRun: result.status === "aborted" || result.status === "timeout",
    ...(route?.channel === undefined ? {} : { lastChannel: route.channel }),
    ...(route?.to === undefined ? {} : { lastTo: route.to }),
  };
}

/** Times the update's own work for the kernel's `timings` (its phase clock). */
export interface SessionUpdateTimer {
  enter(phase: "sessionUpdateMs"): void;
  pause(): void;
}

/** Writes the patch; undefined when the session is gone or now runs under another sessionId. */
export async function updateSessionAfterRun(
  store: SessionStore,
  prepared: PreparedSession,
  result: TurnResult,
  now: number,
  timer?: SessionUpdateTimer,
): Promise<SessionRecord | undefined> {
  const ref = {
    agentId: prepared.runtimeContext.agentId.value,
    sessionKey: prepared.runtimeContext.sessionKey.value,
  };
  let skipped = false;
  try {
    const written = await store.sessions.patch(
      ref,
      (row) => {
        // The store calls this after its read, in a later microtask: timed on its own.
        timer?.enter("sessionUpdateMs");
        try {
          if (row.sessionId !== prepared.transcript.sessionId) {
            skipped = true;
            return {};
          }
          return sessionPatchAfterRun(prepared, result, row.meta, now);
        } finally {
          timer?.pause();
        }
      },
      { now },
    );
    return skipped ? undefined : written;
  } catch (error) {
    // The session was deleted while the run ran: nothing to update.
    if (error instanceof RecordNotFoundError) return undefined;
    throw error;
  }
}
