// The zod schema of a `TurnOutcome` as JSON (what `agent --json` prints and what scripts parse). Owns the wire
// contract of the outcome: every top-level field, the executor result's fields, timings and decisions; event
// `data`, runtime decisions and session metadata stay open records (their shapes belong to the packages that
// produce them). Does not own producing the outcome (kernel.ts).
import { z } from "zod";

const replyPayload = z.looseObject({
  text: z.string().optional(),
  mediaUrls: z.array(z.string()).optional(),
  replyToId: z.string().optional(),
  replyToCurrent: z.boolean().optional(),
  audioAsVoice: z.boolean().optional(),
  isError: z.boolean().optional(),
});

const turnStatus = z.enum(["ok", "error", "aborted", "timeout"]);

const agentEvent = z.object({
  runId: z.string(),
  seq: z.number().int().nonnegative(),
  ts: z.number(),
  stream: z.enum(["lifecycle", "assistant", "tool", "compaction", "error"]),
  data: z.record(z.string(), z.unknown()),
});

const attempt = z.object({
  index: z.number().int(),
  provider: z.string(),
  model: z.string(),
  authProfileId: z.string().optional(),
  thinkingLevel: z.string(),
  startedAt: z.number(),
  durationMs: z.number(),
  outcome: z.enum(["ok", "error", "aborted", "timeout"]),
  reason: z.string().optional(),
  action: z.string().optional(),
  error: z.string().optional(),
});

const usage = z.object({
  input: z.number(),
  output: z.number(),
  cacheRead: z.number(),
  cacheWrite: z.number(),
  total: z.number(),
  costUsd: z.number(),
});

/** `TurnOutcome` serialised with `JSON.stringify`. */
export const turnOutcomeJsonSchema = z.object({
  runId: z.string().min(1),
  status: turnStatus,
  result: z.object({
    runId: z.string(),
    status: turnStatus,
    reason: z.string().optional(),
    errorMessage: z.string().optional(),
    payloads: z.array(replyPayload),
    assistantText: z.string(),
    partial: z.boolean(),
    usage,
    provider: z.string().optional(),
    model: z.string().optional(),
    authProfileId: z.string().optional(),
    attempts: z.array(attempt),
    fallback: z.object({ provider: z.string(), model: z.string() }).optional(),
    compactions: z.number().int().nonnegative(),
    messagingToolTexts: z.array(z.string()),
    events: z.array(agentEvent),
  }),
  events: z.array(agentEvent),
  fallback: z.object({ provider: z.string(), model: z.string().optional() }).optional(),
  decisions: z.object({
    phase: z.literal("prepared"),
    entryPoint: z.string(),
    queuedMs: z.number(),
    runtime: z.record(z.string(), z.unknown()),
    toolPolicy: z.array(z.string()),
    defaults: z.record(z.string(), z.unknown()),
  }),
  sessionMeta: z.record(z.string(), z.unknown()),
  timings: z.object({
    queuedMs: z.number(),
    executorMs: z.number(),
    totalMs: z.number(),
    overheadMs: z.number(),
    kernelMs: z.number(),
    phases: z.object({
      prepareMs: z.number(),
      prepareCache: z.enum(["hit", "miss", "none"]),
      validateMs: z.number(),
      bookkeepingMs: z.number(),
      runRecordMs: z.number(),
      sessionUpdateMs: z.number(),
      outcomeMs: z.number(),
    }),
  }),
});

export type TurnOutcomeJson = z.infer<typeof turnOutcomeJsonSchema>;
