// The executor's own reads and writes of the pi transcript, beside what pi appends: the first turn's bootstrap
// record (or its replay), the model and thinking entries an attempt runs with, hiding a failed attempt's
// assistant message from the next request's context, storing what a failed turn's binding holds, and the
// transcript's flush. Does not own: the binding and its deferred writes (session-manager/), or when entries
// are committed (execute-turn.ts's header says when they become durable).
import type { resolveAgentConfig } from "@agent-kernel/config";
import type { Api, AssistantMessage, Model } from "@earendil-works/pi-ai";
import type { SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import { latestOnBranch, type PiSessionBinding } from "../session-manager/index.ts";
import { toPiThinkingLevel } from "./hermetic-session.ts";
import {
  BOOTSTRAP_ENTRY_TYPE,
  type BootstrapFile,
  loadBootstrapFiles,
  recordedBootstrap,
} from "./system-prompt.ts";
import type { TurnContext } from "./types.ts";

const isUserMessage = (entry: SessionEntry): boolean =>
  entry.type === "message" && entry.message.role === "user";

/** The latest model and thinking level the transcript records on the active branch. */
function recordedSettings(sessionManager: SessionManager): {
  model?: { provider: string; modelId: string };
  thinkingLevel?: string;
  hasMessages: boolean;
  hasUserMessage: boolean;
} {
  // The latest of each on the branch, without walking the history a compaction summarised (lazy-history.ts).
  const model = latestOnBranch(sessionManager, "model_change");
  const thinking = latestOnBranch(sessionManager, "thinking_level_change");
  return {
    ...(model?.type === "model_change"
      ? { model: { provider: model.provider, modelId: model.modelId } }
      : {}),
    ...(thinking?.type === "thinking_level_change" ? { thinkingLevel: thinking.thinkingLevel } : {}),
    hasMessages: latestOnBranch(sessionManager, "message") !== undefined,
    hasUserMessage: latestOnBranch(sessionManager, "message", isUserMessage) !== undefined,
  };
}

/**
 * Makes the transcript say which model and level this attempt runs with (pi records them itself only for a
 * session with no messages), so a restored session resumes with what actually ran. Returns whether the
 * transcript holds messages (pi is then given no thinking level of its own to record).
 */
export function recordAttemptSettings(
  sessionManager: SessionManager,
  model: Model<Api>,
  level: string,
): boolean {
  const recorded = recordedSettings(sessionManager);
  if (recorded.hasMessages) {
    if (recorded.model?.provider !== model.provider || recorded.model.modelId !== model.id)
      sessionManager.appendModelChange(model.provider, model.id);
    if (recorded.thinkingLevel !== toPiThinkingLevel(level))
      sessionManager.appendThinkingLevelChange(toPiThinkingLevel(level));
  }
  return recorded.hasMessages;
}

/** Hides the attempt's failed assistant message from the next request's context (kept in the transcript). */
export function omitFailedAssistant(sessionManager: SessionManager): void {
  const leaf = sessionManager.getLeafEntry();
  if (leaf?.type !== "message" || leaf.message.role !== "assistant") return;
  const stop = (leaf.message as AssistantMessage).stopReason;
  if (stop === "error" || stop === "aborted") sessionManager.appendContextEdit(leaf.id, null);
}

const isBootstrapRecord = (entry: SessionEntry): boolean =>
  entry.type === "custom" && entry.customType === BOOTSTRAP_ENTRY_TYPE;

/** The bootstrap files the session's record holds (every turn after its first), else undefined. */
export function recordedBootstrapFiles(sessionManager: SessionManager): readonly BootstrapFile[] | undefined {
  const record = latestOnBranch(sessionManager, "custom", isBootstrapRecord);
  return record === undefined ? undefined : recordedBootstrap([record] as never);
}

/**
 * First turn: read the files and record them; later turns: replay the record (no disk read). A caller on the
 * hot path asks `recordedBootstrapFiles` first and awaits this only when there is no record.
 */
export async function resolveBootstrap(
  context: TurnContext,
  sessionManager: SessionManager,
  mode: "full" | "minimal",
  agentConfig: ReturnType<typeof resolveAgentConfig>,
): Promise<readonly BootstrapFile[]> {
  const recorded = recordedBootstrapFiles(sessionManager);
  if (recorded !== undefined) return recorded;
  const firstTurn = latestOnBranch(sessionManager, "message", isUserMessage) === undefined;
  if (!firstTurn || agentConfig?.skipBootstrap) return [];
  const files = await loadBootstrapFiles(context.workspaceDir, {
    maxChars: agentConfig?.bootstrapMaxChars ?? 20_000,
    totalMaxChars: agentConfig?.bootstrapTotalMaxChars,
    mode,
  });
  sessionManager.appendCustomEntry(BOOTSTRAP_ENTRY_TYPE, { files });
  return files;
}

/**
 * A turn that ended in an internal error still stores what pi appended, as the write-through mirror would
 * have; if the store refuses, the binding is out of sync and the next turn reopens the session from the store.
 */
export function storeWhatIsHeld(binding: PiSessionBinding): void {
  try {
    binding.writeThrough();
  } catch {
    // The turn already ends in an error; the transcript keeps what was stored before.
  }
}

/**
 * The transcript's own flush where it has one (PostgreSQL), so another session's failure never fails this
 * turn; else the store's `durable` (SQLite: the turn's entries are durable in the append journal already, and
 * SQLite gets them in the group commit after the turn, off its path), else its `flush`.
 */
export function flushTranscript(
  store: TurnContext["store"],
  transcript: PiSessionBinding["transcript"],
): Promise<void> {
  if ("flush" in transcript && typeof transcript.flush === "function")
    return (transcript.flush as () => Promise<void>).call(transcript);
  return typeof store.durable === "function" ? store.durable() : store.flush();
}
