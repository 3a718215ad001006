// Reading back a stored run: every decision made for it (runtime, tool-policy lines, attempts, fallback, tool
// calls, replies, compactions, child runs) interpreted from its event log. Owns: that interpretation and the
// report's shape. Free of pi and of runtime-resolver, like the rest of the admin entry. Does not own: the
// events' recording (the kernel's turn) or replaying a run (replay.ts).
import type { RunEvent, RunRecord, SessionStore } from "@agent-kernel/session-store";
import { type ChildRunRef, childRunsOf } from "./run-lineage.ts";
import type { RunDecisions } from "./types.ts";

/** One model call of a run as its events recorded it. */
export interface RecordedAssistantMessage {
  readonly provider?: string;
  readonly model?: string;
  readonly stopReason: string;
  readonly text: string;
  readonly thinking: string;
  readonly toolCalls: readonly { readonly id: string; readonly name: string; readonly args: unknown }[];
  readonly errorMessage?: string;
}

export interface RecordedToolCall {
  readonly toolCallId: string;
  readonly name: string;
  readonly args: unknown;
  readonly isError?: boolean;
  readonly text?: string;
}

export interface RecordedAttempt {
  readonly attempt: number;
  readonly provider?: string;
  readonly model?: string;
  readonly thinkingLevel?: string;
  readonly authProfileId?: string;
  readonly outcome?: string;
  readonly reason?: string;
  readonly action?: string;
  readonly error?: string;
}

/** A compaction of the run's session: the recovery loop's after a context overflow, or pi's. */
export interface RecordedCompaction {
  /** During attempt n (1-based); undefined before the first attempt. */
  readonly attempt?: number;
  readonly outcome: "compacted" | "failed";
  readonly reason?: string;
  readonly tokensBefore?: number;
  readonly errorMessage?: string;
}

/** Everything stored about a run, read back into its parts. */
export interface RunReport {
  readonly run: RunRecord;
  /** Event 0: what was decided before the run (runtime, tool policy, defaults); absent for older runs. */
  readonly decisions?: RunDecisions;
  readonly attempts: readonly RecordedAttempt[];
  readonly assistantMessages: readonly RecordedAssistantMessage[];
  readonly toolCalls: readonly RecordedToolCall[];
  /** Every compaction that ended (done or failed), in order. */
  readonly compactions: readonly RecordedCompaction[];
  /** The lifecycle `end` event's data. */
  readonly end?: Readonly<Record<string, unknown>>;
  readonly eventCount: number;
  /** Runs this run started (`sessions_spawn`, `sessions_send`); the child names its parent in `decisions`. */
  readonly childRuns?: readonly ChildRunRef[];
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);

/** The string fields among `keys` that `data` has, for exact optional properties. */
function strings<K extends string>(data: Record<string, unknown>, keys: readonly K[]): { [P in K]?: string } {
  const out: { [P in K]?: string } = {};
  for (const key of keys) {
    const value = data[key];
    if (typeof value === "string") out[key] = value;
  }
  return out;
}

function record(data: unknown): Record<string, unknown> {
  return typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
}

interface OpenMessage {
  text: string;
  thinking: string;
  toolCalls: { id: string; name: string }[];
}

/** Reads a run's stored events back into attempts, model replies and tool calls (both storage modes). */
export function interpretRunEvents(events: readonly RunEvent[]): Omit<RunReport, "run"> {
  let decisions: RunDecisions | undefined;
  const attempts: RecordedAttempt[] = [];
  const compactions: RecordedCompaction[] = [];
  const messages: RecordedAssistantMessage[] = [];
  // Tool calls in start order. Ids are not unique across model replies (some servers number them per reply),
  // so an end closes the latest open call with its id, and replies take arguments per id in order.
  const tools: { call: RecordedToolCall; ended: boolean }[] = [];
  const argsById = new Map<string, unknown[]>();
  let open: OpenMessage | undefined;
  let end: Record<string, unknown> | undefined;
  const ensureOpen = (): OpenMessage => {
    open ??= { text: "", thinking: "", toolCalls: [] };
    return open;
  };
  const pendingCalls: { id: string; name: string }[][] = [];
  for (const event of events) {
    const data = record(event.data);
    if (event.stream === "lifecycle") {
      const phase = data.phase;
      if (phase === "prepared") decisions = data as unknown as RunDecisions;
      else if (phase === "attempt_start") {
        attempts.push({
          attempt: num(data.attempt) ?? attempts.length + 1,
          ...strings(data, ["provider", "model", "thinkingLevel", "authProfileId"]),
        });
      } else if (phase === "attempt_end") {
        const index = attempts.length - 1;
        const last = attempts[index];
        if (last !== undefined) {
          attempts[index] = {
            ...last,
            ...strings(data, ["outcome", "reason", "action", "error"]),
          };
        }
      } else if (phase === "end") end = data;
      continue;
    }
    if (event.stream === "error") {
      // The executor reports a failed attempt's error text before its attempt_end.
      const index = attempts.length - 1;
      const last = attempts[index];
      const message = str(data.message);
      if (last !== undefined && message !== undefined && last.error === undefined)
        attempts[index] = { ...last, error: message };
      continue;
    }
    if (event.stream === "compaction") {
      const errorMessage = str(data.errorMessage);
      const failed =
        data.phase === "failed" ||
        (data.phase === "end" && (data.aborted === true || errorMessage !== undefined));
      if (failed || data.phase === "end") {
        compactions.push({
          ...(attempts.length === 0 ? {} : { attempt: attempts.length }),
          outcome: failed ? "failed" : "compacted",
          ...strings(data, ["reason"]),
          ...(num(data.tokensBefore) === undefined ? {} : { tokensBefore: num(data.tokensBefore) as number }),
          ...(errorMessage === undefined ? {} : { errorMessage }),
        });
      }
      continue;
    }
    if (event.stream === "assistant") {
      const type = data.type;
      if (type === "message_start") open = { text: "", thinking: "", toolCalls: [] };
      else if (type === "text_delta") ensureOpen().text += str(data.delta) ?? "";
      else if (type === "thinking_delta") ensureOpen().thinking += str(data.delta) ?? "";
      else if (type === "text") ensureOpen().text += str(data.text) ?? "";
      else if (type === "thinking") ensureOpen().thinking += str(data.text) ?? "";
      else if (type === "tool_call") {
        ensureOpen().toolCalls.push({ id: str(data.toolCallId) ?? "", name: str(data.name) ?? "" });
      } else if (type === "message_end") {
        const current = ensureOpen();
        pendingCalls.push(current.toolCalls);
        messages.push({
          ...strings(data, ["provider", "model", "errorMessage"]),
          stopReason: str(data.stopReason) ?? "stop",
          // message_end carries the final text; the deltas are the fallback for older rows.
          text: str(data.text) ?? current.text,
          thinking: current.thinking,
          toolCalls: current.toolCalls.map((call) => ({ ...call, args: undefined })),
        });
        open = undefined;
      }
      continue;
    }
    if (event.stream === "tool") {
      const id = str(data.toolCallId) ?? "";
      if (data.phase === "start") {
        argsById.set(id, [...(argsById.get(id) ?? []), data.args]);
        tools.push({ call: { toolCallId: id, name: str(data.name) ?? "", args: data.args }, ended: false });
      } else if (data.phase === "end") {
        const open = tools.findLast((entry) => entry.call.toolCallId === id && !entry.ended);
        const entry = open ?? {
          call: { toolCallId: id, name: str(data.name) ?? "", args: undefined },
          ended: false,
        };
        if (open === undefined) tools.push(entry);
        entry.ended = true;
        entry.call = {
          ...entry.call,
          ...(typeof data.isError === "boolean" ? { isError: data.isError } : {}),
          ...strings(data, ["text"]),
        };
      }
    }
  }
  const assistantMessages = messages.map((message) => ({
    ...message,
    toolCalls: message.toolCalls.map((call) => ({ ...call, args: argsById.get(call.id)?.shift() ?? {} })),
  }));
  const toolCalls = tools.map((entry) => entry.call);
  const childRuns = childRunsOf(toolCalls);
  return {
    ...(decisions === undefined ? {} : { decisions }),
    attempts,
    assistantMessages,
    toolCalls,
    ...(childRuns.length === 0 ? {} : { childRuns }),
    compactions,
    ...(end === undefined ? {} : { end }),
    eventCount: events.length,
  };
}

/** A stored run with every decision made for it; undefined for an unknown runId. */
export async function showRun(store: SessionStore, runId: string): Promise<RunReport | undefined> {
  const run = await store.runs.get(runId);
  if (run === undefined) return undefined;
  return { run, ...interpretRunEvents(await store.runs.events(runId)) };
}
