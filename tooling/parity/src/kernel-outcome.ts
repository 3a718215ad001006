// The kernel-level outcome of a cell, read back from the store the app wrote (through the kernel's admin
// facade, so it is the same whatever the app): every run's record and decisions (runtime, tool policy,
// defaults), attempts, model replies, tool calls and end, and each session's transcript — normalised so that
// two apps running the same scenario compare equal: run and session ids, timestamps, durations, the cell's
// directory and keys, the session key and the entry point are replaced or dropped. Owns that normal form.
// Does not own what the runs did (the kernel) or delivery (delivery-check.ts).
import { type KernelStore, listRuns, openKernelStore, showRun } from "@agent-kernel/kernel";
import type { Cell } from "./cell.ts";

/** Keys whose values say when or under which id something happened, never what happened. */
const DROPPED_KEYS = new Set([
  "runId",
  "startedAt",
  "endedAt",
  "ts",
  "seq",
  "durationMs",
  "queuedMs",
  "timings",
  "entryPoint",
  "eventCount",
]);
/** Keys whose values differ by entry point's routing only: the session they ran in. */
const PLACEHOLDER_KEYS: Readonly<Record<string, string>> = {
  sessionKey: "<session-key>",
  sessionId: "<session-id>",
  // The context's size when it was compacted counts the entry point's system prompt (its channel facts).
  tokensBefore: "<tokens>",
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/**
 * The OpenAI SDK words an aborted request "Request was aborted" or "Request aborted" depending on where in its
 * stream handling the abort lands — the same abort, decided by the kernel the same way.
 */
const SDK_ABORT_WORDING = /\bRequest (?:was )?aborted\b/g;

export function normaliseText(text: string, cell: Pick<Cell, "root" | "id">): string {
  return text
    .split(cell.root)
    .join("<cell>")
    .split(`-${cell.id}-`)
    .join("-<cell-key>-")
    .replace(UUID, "<uuid>")
    .replace(SDK_ABORT_WORDING, "<request aborted>")
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>");
}

export function normaliseValue(value: unknown, cell: Pick<Cell, "root" | "id">): unknown {
  if (typeof value === "string") return normaliseText(value, cell);
  if (Array.isArray(value)) return value.map((item) => normaliseValue(item, cell));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      if (DROPPED_KEYS.has(key)) continue;
      const placeholder = PLACEHOLDER_KEYS[key];
      out[key] = placeholder ?? normaliseValue((value as Record<string, unknown>)[key], cell);
    }
    return out;
  }
  return value;
}

interface TranscriptMessage {
  readonly role: string;
  readonly text?: string;
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: unknown }[];
  readonly toolName?: string;
  readonly isError?: boolean;
  readonly stopReason?: string;
  readonly hasThinking?: boolean;
}

function transcriptMessage(message: Record<string, unknown>): TranscriptMessage {
  const content = message.content;
  const blocks: Record<string, unknown>[] = Array.isArray(content)
    ? content.filter((block): block is Record<string, unknown> => typeof block === "object" && block !== null)
    : [];
  const text =
    typeof content === "string"
      ? content
      : blocks
          .filter((block) => block.type === "text")
          .map((block) => String(block.text ?? ""))
          .join("");
  const toolCalls = blocks
    .filter((block) => block.type === "toolCall")
    .map((block) => ({ name: String(block.name ?? ""), arguments: block.arguments ?? {} }));
  return {
    role: String(message.role ?? ""),
    ...(text === "" ? {} : { text }),
    ...(toolCalls.length === 0 ? {} : { toolCalls }),
    ...(typeof message.toolName === "string" ? { toolName: message.toolName } : {}),
    ...(typeof message.isError === "boolean" ? { isError: message.isError } : {}),
    ...(typeof message.stopReason === "string" ? { stopReason: message.stopReason } : {}),
    ...(blocks.some((block) => block.type === "thinking") ? { hasThinking: true } : {}),
  };
}

/** Every transcript entry of one session id, as type + (for messages) the message's gist. */
function transcriptOf(
  store: KernelStore,
  agentId: string,
  sessionId: string,
  unshapePrompt: (text: string) => string,
): unknown[] {
  if (!store.hasTranscript(agentId, sessionId)) return [];
  const transcript = store.openTranscript(agentId, sessionId);
  return transcript.getBranch().map((entry) => {
    const record = entry as unknown as Record<string, unknown>;
    if (entry.type === "message" && typeof record.message === "object" && record.message !== null) {
      const message = transcriptMessage(record.message as Record<string, unknown>);
      const text =
        message.role === "user" && message.text !== undefined ? unshapePrompt(message.text) : message.text;
      return { type: "message", ...message, ...(text === undefined ? {} : { text }) };
    }
    if (entry.type === "compaction") return { type: "compaction", summary: record.summary };
    return { type: entry.type };
  });
}

export interface KernelOutcome {
  readonly runs: readonly unknown[];
  /** One transcript per session id the runs used, in the order the runs first used it. */
  readonly transcripts: readonly unknown[];
}

/** Reads and normalises the kernel-level outcome of everything the cell's app ran. */
export async function readKernelOutcome(
  cell: Cell,
  options: { readonly unshapePrompt?: (text: string) => string } = {},
): Promise<KernelOutcome> {
  const unshape = options.unshapePrompt ?? ((text: string) => text);
  const store = await openKernelStore({ stateDir: cell.stateDir });
  try {
    const records = await listRuns(store, cell.config, { limit: 1000 });
    records.sort((a, b) => a.startedAt - b.startedAt || (a.endedAt ?? 0) - (b.endedAt ?? 0));
    const runs: unknown[] = [];
    const sessions: { agentId: string; sessionId: string }[] = [];
    for (const record of records) {
      const report = await showRun(store, record.runId);
      if (report === undefined) continue;
      if (!sessions.some((s) => s.agentId === record.agentId && s.sessionId === record.sessionId))
        sessions.push({ agentId: record.agentId, sessionId: record.sessionId });
      const { run, ...rest } = report;
      runs.push(normaliseValue({ record: run, ...rest }, cell));
    }
    const transcripts = sessions.map((session) =>
      normaliseValue(transcriptOf(store, session.agentId, session.sessionId, unshape), cell),
    );
    return { runs, transcripts };
  } finally {
    await store.close();
  }
}

const RECOVERY_RECORD_KEYS = [
  "status",
  "provider",
  "model",
  "authProfileId",
  "errorReason",
  "errorMessage",
  "fallbackChain",
] as const;

function pick(value: unknown, keys: readonly string[]): Record<string, unknown> {
  const source = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

function withoutThinkingLevel(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const { thinkingLevel: _level, ...rest } = value as Record<string, unknown>;
  return rest;
}

/**
 * What the recovery loop did, without the decisions an app's fixed run options change (thinking level,
 * tool-policy lines, defaults, the transcript's settings entries): every run's status, answering model and
 * profile, error, fallback chain, attempts with their recovery actions, model replies, tool calls and end,
 * and the transcripts' messages.
 */
export function recoveryView(outcome: KernelOutcome): KernelOutcome {
  return {
    runs: outcome.runs.map((run) => {
      const report = run as Record<string, unknown>;
      return {
        record: pick(report.record, RECOVERY_RECORD_KEYS),
        attempts: ((report.attempts as unknown[] | undefined) ?? []).map(withoutThinkingLevel),
        assistantMessages: report.assistantMessages,
        toolCalls: report.toolCalls,
        end: report.end,
      };
    }),
    transcripts: outcome.transcripts.map((entries) =>
      (entries as unknown[]).filter(
        (entry) =>
          (entry as { type?: unknown }).type === "message" && (entry as { role?: unknown }).role !== "system",
      ),
    ),
  };
}
