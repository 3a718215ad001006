// The repair pass for broken transcripts: makes a model context that providers accept out of one that a
// crash, an abort or a hand edit left inconsistent, and reports every change (what, where, why). Owns: the
// rules over pi-shaped messages (roles `user`, `assistant` with `toolCall` blocks, `toolResult` with
// `toolCallId`; every other role passes through). Pure: it never touches the store, so the stored transcript
// stays verbatim and the repair is applied where the context is built. Does not own: building the context.
//
// Rules (in the spirit of OpenClaw 2026.9.6 `repairToolUseResultPairing` and `validateAnthropicTurns`, much
// simpler; see the report's list of deviations):
// - a tool result whose call is not open (no assistant tool call with that id since the last user or
//   assistant turn) is dropped: `orphan-tool-result`;
// - a second result for the same call is dropped: `duplicate-tool-result`;
// - a tool call left without a result when the next user or assistant message (or the end) comes gets a
//   synthetic error result, unless its assistant message ended in `error` or `aborted` (pi retries those):
//   `missing-tool-result`;
// - a user or assistant message identical to the one just before it (same role and content) is dropped:
//   `duplicate-message`;
// - two user messages in a row are merged into one (providers require alternating turns):
//   `merged-user-turns`.

/** The message fields the repair reads; pi's `AgentMessage` fits. */
export interface RepairableMessage {
  readonly role?: unknown;
  readonly content?: unknown;
  readonly toolCallId?: unknown;
  readonly stopReason?: unknown;
  readonly timestamp?: unknown;
}

export type TranscriptRepairKind =
  | "orphan-tool-result"
  | "duplicate-tool-result"
  | "missing-tool-result"
  | "duplicate-message"
  | "merged-user-turns";

export interface TranscriptRepair {
  readonly kind: TranscriptRepairKind;
  /** Index in the input of the message concerned (for a missing result: of the assistant message that called). */
  readonly index: number;
  readonly reason: string;
  readonly toolCallId?: string;
}

export interface TranscriptRepairResult<Message> {
  /** The repaired messages; the input array itself when nothing needed repair. */
  readonly messages: readonly Message[];
  readonly repairs: readonly TranscriptRepair[];
}

/** The text of a synthetic result (OpenClaw's wording, minus its product prefix). */
export const MISSING_TOOL_RESULT_TEXT =
  "missing tool result in session history; inserted synthetic error result for transcript repair.";

/** A synthetic result as pi's `ToolResultMessage`; `details.syntheticMissingToolResult` marks it. */
export interface SyntheticToolResult {
  readonly role: "toolResult";
  readonly toolCallId: string;
  readonly toolName: string;
  readonly content: readonly { readonly type: "text"; readonly text: string }[];
  readonly details: { readonly syntheticMissingToolResult: true; readonly reason: "missing_tool_result" };
  readonly isError: true;
  readonly timestamp: number;
}

interface OpenCall {
  readonly id: string;
  readonly name: string;
  answered: boolean;
}

interface Frame {
  readonly assistantIndex: number;
  readonly failed: boolean;
  readonly calls: OpenCall[];
}

export function repairTranscriptMessages<Message extends RepairableMessage>(
  messages: readonly Message[],
  options: { now?: number } = {},
): TranscriptRepairResult<Message | SyntheticToolResult> {
  const out: (Message | SyntheticToolResult)[] = [];
  const repairs: TranscriptRepair[] = [];
  let frame: Frame | undefined;
  let previousTurn: { message: Message | SyntheticToolResult; index: number; outIndex: number } | undefined;
  let changed = false;

  const closeFrame = (): void => {
    if (frame === undefined) return;
    if (!frame.failed) {
      for (const call of frame.calls) {
        if (call.answered) continue;
        out.push(syntheticResult(call, options.now ?? Date.now()));
        repairs.push({
          kind: "missing-tool-result",
          index: frame.assistantIndex,
          toolCallId: call.id,
          reason: `tool call ${call.id} (${call.name}) has no result; a synthetic error result was inserted`,
        });
        changed = true;
      }
    }
    frame = undefined;
  };

  for (const [index, message] of messages.entries()) {
    const role = message.role;
    if (role === "toolResult") {
      const id = typeof message.toolCallId === "string" ? message.toolCallId : undefined;
      const call = id === undefined ? undefined : frame?.calls.find((candidate) => candidate.id === id);
      if (call === undefined) {
        repairs.push({
          kind: "orphan-tool-result",
          index,
          ...(id === undefined ? {} : { toolCallId: id }),
          reason: `tool result ${id ?? "without a toolCallId"} answers no open tool call; dropped`,
        });
        changed = true;
        continue;
      }
      if (call.answered) {
        repairs.push({
          kind: "duplicate-tool-result",
          index,
          toolCallId: call.id,
          reason: `tool call ${call.id} already has a result; this second one was dropped`,
        });
        changed = true;
        continue;
      }
      call.answered = true;
      out.push(message);
      continue;
    }
    if (role !== "user" && role !== "assistant") {
      out.push(message);
      continue;
    }
    // Checked before the open frame is closed: a repeated assistant tool call is a duplicate, not a new call.
    if (
      previousTurn !== undefined &&
      previousTurn.message.role === role &&
      previousTurn.outIndex === out.length - 1
    ) {
      if (sameContent(previousTurn.message, message)) {
        repairs.push({
          kind: "duplicate-message",
          index,
          reason: `${role} message repeats message ${previousTurn.index} verbatim; dropped`,
        });
        changed = true;
        continue;
      }
      if (role === "user") {
        const merged = {
          ...message,
          content: [...contentBlocks(previousTurn.message), ...contentBlocks(message)],
        };
        out[previousTurn.outIndex] = merged;
        repairs.push({
          kind: "merged-user-turns",
          index,
          reason: `user message follows user message ${previousTurn.index} with no reply between; merged into it`,
        });
        previousTurn = { message: merged, index, outIndex: previousTurn.outIndex };
        changed = true;
        continue;
      }
    }
    closeFrame();
    out.push(message);
    previousTurn = { message, index, outIndex: out.length - 1 };
    if (role === "assistant") {
      const calls = toolCallsOf(message);
      if (calls.length > 0) {
        frame = {
          assistantIndex: index,
          failed: message.stopReason === "error" || message.stopReason === "aborted",
          calls,
        };
      }
    }
  }
  closeFrame();
  return { messages: changed ? out : messages, repairs };
}

function toolCallsOf(message: RepairableMessage): OpenCall[] {
  if (!Array.isArray(message.content)) return [];
  const calls: OpenCall[] = [];
  for (const block of message.content as unknown[]) {
    if (block === null || typeof block !== "object") continue;
    const record = block as { type?: unknown; id?: unknown; name?: unknown };
    if (record.type !== "toolCall" || typeof record.id !== "string") continue;
    if (calls.some((call) => call.id === record.id)) continue;
    calls.push({
      id: record.id,
      name: typeof record.name === "string" ? record.name : "unknown",
      answered: false,
    });
  }
  return calls;
}

function syntheticResult(call: OpenCall, now: number): SyntheticToolResult {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text: MISSING_TOOL_RESULT_TEXT }],
    details: { syntheticMissingToolResult: true, reason: "missing_tool_result" },
    isError: true,
    timestamp: now,
  };
}

function contentBlocks(message: RepairableMessage): unknown[] {
  if (Array.isArray(message.content)) return message.content;
  if (typeof message.content === "string") return [{ type: "text", text: message.content }];
  return [];
}

/** Same role and content; timestamps and provider metadata (usage, response ids) do not count. */
function sameContent(left: RepairableMessage, right: RepairableMessage): boolean {
  return JSON.stringify(contentBlocks(left)) === JSON.stringify(contentBlocks(right));
}
