// What a run's model was told: its system prompt read back from the session's transcript (`agent runs show
// <runId> --prompt`), checked against the hash each attempt recorded (`systemPromptHash` of `attempt_start`).
// Owns: folding pi's recorded system messages into the prompt text (no pi loaded: the admin entry starts
// fast). Does not own: building the prompt (turn-pipeline's system-prompt.ts) nor the run's other events
// (admin.ts).
import { createHash } from "node:crypto";
import type { SessionStore } from "@agent-kernel/session-store";

/** A run's system prompt as recorded, and whether it is the one its attempts hashed. */
export interface RunPrompt {
  readonly runId: string;
  readonly agentId: string;
  readonly sessionId: string;
  /** The prompt text (pi's rendering: the preamble, then its sections). */
  readonly prompt: string;
  /** sha256 (hex) of `prompt`. */
  readonly hash: string;
  /** What each attempt recorded, in order (absent for a run from before prompt hashes were recorded). */
  readonly recordedHashes: readonly string[];
  /** Whether the last attempt's recorded hash is this prompt's (undefined when none was recorded). */
  readonly matches: boolean | undefined;
}

interface SystemMessageLike {
  readonly role: "system";
  readonly content?: unknown;
  readonly sections?: Readonly<Record<string, string | null>>;
  readonly timestamp?: number;
}

function asSystemMessage(value: unknown): SystemMessageLike | undefined {
  return typeof value === "object" && value !== null && (value as { role?: unknown }).role === "system"
    ? (value as SystemMessageLike)
    : undefined;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(
      (block): block is { type: "text"; text: string } =>
        block?.type === "text" && typeof block.text === "string",
    )
    .map((block) => block.text)
    .join("\n");
}

/**
 * The system prompt of a transcript branch (root → leaf) as pi sent it: pi records the first prompt as a
 * system message and each later change as a patch of its sections (a compaction records the whole state), so
 * the prompt at a moment is their fold, rendered as pi's getSystemMessageText renders it. `until` (ms) leaves
 * out what was recorded after it. Undefined when the branch has no system message.
 */
export function recordedSystemPrompt(
  branch: readonly { readonly type: string; readonly message?: unknown; readonly systemMessage?: unknown }[],
  until?: number,
): string | undefined {
  let content = "";
  let sections: Record<string, string | null> | undefined;
  for (const entry of branch) {
    const compaction = entry.type === "compaction";
    const message = asSystemMessage(
      compaction ? entry.systemMessage : entry.type === "message" ? entry.message : undefined,
    );
    if (message === undefined) continue;
    if (until !== undefined && typeof message.timestamp === "number" && message.timestamp > until) break;
    const text = contentText(message.content);
    if (compaction || sections === undefined || text.length > 0) content = text;
    sections = compaction
      ? { ...(message.sections ?? {}) }
      : { ...(sections ?? {}), ...(message.sections ?? {}) };
  }
  if (sections === undefined) return undefined;
  const parts = [content, ...Object.values(sections).filter((text): text is string => text !== null)];
  return parts.filter((part) => part.length > 0).join("\n\n");
}

/** The system prompt of run `runId`, or undefined when there is no such run or its transcript has none. */
export async function showRunPrompt(store: SessionStore, runId: string): Promise<RunPrompt | undefined> {
  const run = await store.runs.get(runId);
  if (run === undefined) return undefined;
  await store.loadTranscript(run.agentId, run.sessionId);
  if (!store.hasTranscript(run.agentId, run.sessionId)) return undefined;
  const branch = store.openTranscript(run.agentId, run.sessionId).getBranch();
  const prompt = recordedSystemPrompt(branch as never, run.endedAt);
  if (prompt === undefined) return undefined;
  const recordedHashes = (await store.runs.events(runId)).flatMap((event) => {
    const data = event.data as { phase?: unknown; systemPromptHash?: unknown } | null;
    return event.stream === "lifecycle" &&
      data?.phase === "attempt_start" &&
      typeof data.systemPromptHash === "string"
      ? [data.systemPromptHash]
      : [];
  });
  const hash = createHash("sha256").update(prompt).digest("hex");
  const last = recordedHashes.at(-1);
  return {
    runId,
    agentId: run.agentId,
    sessionId: run.sessionId,
    prompt,
    hash,
    recordedHashes,
    matches: last === undefined ? undefined : last === hash,
  };
}
