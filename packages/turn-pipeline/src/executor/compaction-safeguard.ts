// Compaction safeguard mode (`agents.defaults.compaction.mode: "safeguard"`), after OpenClaw 2026.9.6's
// compaction-safeguard extension: a pi extension on `session_before_compact` that writes the summary pi stores
// in the transcript's compaction entry (so the compaction-aware read keeps working). What it adds to pi's
// default summary: an adaptive chunk budget (smaller chunks when messages are large: OpenClaw's
// `computeAdaptiveChunkRatio`), the history share (`maxHistoryShare`: when what is kept already fills more
// than that share of the window, the oldest history is summarized on its own first and the rest on top of
// it), a "## Tool Failures" section (failed tool results, which a summary tends to drop) and the file lists
// (`<read-files>` / `<modified-files>`, bounded) kept through compaction. When the summary cannot be made the
// compaction is cancelled, so the history is kept rather than lost (OpenClaw's choice).
// Owns: the settings, the summary and its sections, the extension. Does not own: when compaction runs
// (recovery.ts on overflow), where the cut is (pi's `prepareCompaction`), or storing the entry (pi).
import type { Api, Model } from "@earendil-works/pi-ai";
import {
  type AgentSession,
  createSyntheticSourceInfo,
  type Extension,
  estimateTokens,
  generateSummary,
} from "@earendil-works/pi-coding-agent";

/** `agents.defaults.compaction` as far as the safeguard reads it. */
export interface CompactionSafeguardConfig {
  readonly mode?: "default" | "safeguard" | undefined;
  readonly maxHistoryShare?: number | undefined;
}

/** The resolved safeguard settings (undefined: pi's default compaction). */
export interface CompactionSafeguardSettings {
  readonly maxHistoryShare: number;
}

/** OpenClaw's runtime default (2026.9.6 retired the config key and always uses 0.5). */
export const DEFAULT_MAX_HISTORY_SHARE = 0.5;
export const BASE_CHUNK_RATIO = 0.4;
export const MIN_CHUNK_RATIO = 0.15;
/** Buffer for the token estimate's inaccuracy. */
export const SAFETY_MARGIN = 1.2;
/** Reserved for the summary prompt, the previous summary and the answer. */
export const SUMMARIZATION_OVERHEAD_TOKENS = 4096;
const MAX_TOOL_FAILURES = 8;
const MAX_TOOL_FAILURE_CHARS = 240;
const MAX_FILE_LIST_CHARS = 900;
const MAX_FILE_OPS_SECTION_CHARS = 2000;
const SPLIT_TURN_HEADING = "**Turn Context (split turn):**";

/** The settings for `config`, or undefined when compaction is pi's default. */
export function resolveCompactionSafeguardSettings(
  config: CompactionSafeguardConfig | undefined,
): CompactionSafeguardSettings | undefined {
  if (config?.mode !== "safeguard") return undefined;
  return { maxHistoryShare: config.maxHistoryShare ?? DEFAULT_MAX_HISTORY_SHARE };
}

// biome-ignore lint/suspicious/noExplicitAny: pi's AgentMessage union plus custom roles.
type AnyMessage = { role: string; [key: string]: any };

const tokensOf = (message: AnyMessage): number =>
  estimateTokens(message as Parameters<typeof estimateTokens>[0]);

/** Summed token estimate of `messages`. */
export function estimateMessagesTokens(messages: readonly AnyMessage[]): number {
  return messages.reduce((sum, message) => sum + tokensOf(message), 0);
}

/** OpenClaw's `computeAdaptiveChunkRatio`: large messages (≥ 10 % of the window on average) get smaller chunks. */
export function computeAdaptiveChunkRatio(messages: readonly AnyMessage[], contextWindow: number): number {
  if (messages.length === 0) return BASE_CHUNK_RATIO;
  const averageRatio = ((estimateMessagesTokens(messages) / messages.length) * SAFETY_MARGIN) / contextWindow;
  if (averageRatio > 0.1)
    return Math.max(MIN_CHUNK_RATIO, BASE_CHUNK_RATIO - Math.min(averageRatio * 2, 0.25));
  return BASE_CHUNK_RATIO;
}

/** Groups of messages a chunk boundary may not split: an assistant's tool calls with their results. */
function messageGroups(messages: readonly AnyMessage[]): { start: number; end: number; tokens: number }[] {
  const groups: { start: number; end: number; tokens: number }[] = [];
  let start = 0;
  let tokens = 0;
  let pending = new Set<string>();
  messages.forEach((message, index) => {
    tokens += tokensOf(message);
    if (message.role === "assistant") {
      pending = new Set();
      const aborted = message.stopReason === "aborted" || message.stopReason === "error";
      if (!aborted && Array.isArray(message.content))
        for (const block of message.content)
          if (block?.type === "toolCall" && typeof block.id === "string") pending.add(block.id);
    } else if (message.role === "toolResult" && pending.size > 0) {
      if (typeof message.toolCallId === "string") pending.delete(message.toolCallId);
      else pending.clear();
    }
    if (pending.size === 0) {
      groups.push({ start, end: index + 1, tokens });
      start = index + 1;
      tokens = 0;
    }
  });
  if (start < messages.length) groups.push({ start, end: messages.length, tokens });
  return groups;
}

/** Chunks of at most `maxTokens` (a single larger group is its own chunk), at most `maxChunks`. */
export function chunkMessages<T extends AnyMessage>(
  messages: readonly T[],
  maxTokens: number,
  maxChunks = Number.POSITIVE_INFINITY,
): T[][] {
  const chunks: T[][] = [];
  let chunkStart = 0;
  let current = 0;
  for (const group of messageGroups(messages)) {
    if (group.start > chunkStart && chunks.length < maxChunks - 1 && current + group.tokens > maxTokens) {
      chunks.push(messages.slice(chunkStart, group.start));
      chunkStart = group.start;
      current = 0;
    }
    current += group.tokens;
  }
  if (chunkStart < messages.length) chunks.push(messages.slice(chunkStart));
  return chunks;
}

/** The history to summarize after the share check: what is kept, and the oldest part summarized first. */
export interface HistoryPrunePlan<T> {
  readonly messages: T[];
  readonly dropped: T[];
}

/**
 * OpenClaw's `buildHistoryPrunePlan` + `pruneHistoryForContextShare`: when the content pi keeps (everything
 * but what is summarized) exceeds `maxHistoryShare` of the window, the oldest half of the history is split
 * off, again and again while the rest is over the share's budget.
 */
export function buildHistoryPrunePlan<T extends AnyMessage>(input: {
  readonly messagesToSummarize: T[];
  readonly turnPrefixMessages: readonly AnyMessage[];
  readonly tokensBefore: number;
  readonly contextWindowTokens: number;
  readonly maxHistoryShare: number;
}): HistoryPrunePlan<T> {
  const summarizable =
    estimateMessagesTokens(input.messagesToSummarize) + estimateMessagesTokens(input.turnPrefixMessages);
  const newContentTokens = Math.max(0, Math.floor(input.tokensBefore - summarizable));
  const maxHistoryTokens = Math.floor(input.contextWindowTokens * input.maxHistoryShare * SAFETY_MARGIN);
  if (newContentTokens <= maxHistoryTokens) return { messages: input.messagesToSummarize, dropped: [] };
  const budget = Math.max(1, Math.floor(input.contextWindowTokens * input.maxHistoryShare));
  let kept = input.messagesToSummarize;
  const dropped: T[] = [];
  while (kept.length >= 2) {
    const total = estimateMessagesTokens(kept);
    if (total <= budget) break;
    const halves = chunkMessages(kept, total / 2, 2);
    if (halves.length < 2) break;
    dropped.push(...(halves[0] as T[]));
    kept = halves.slice(1).flat();
  }
  return { messages: kept, dropped };
}

/** One failed tool call kept through compaction. */
export interface ToolFailure {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly summary: string;
  readonly meta?: string | undefined;
}

function failureMeta(details: unknown): string | undefined {
  if (!details || typeof details !== "object") return undefined;
  const record = details as Record<string, unknown>;
  const parts = [
    typeof record.status === "string" && record.status ? `status=${record.status}` : "",
    typeof record.exitCode === "number" && Number.isFinite(record.exitCode)
      ? `exitCode=${record.exitCode}`
      : "",
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(" ") : undefined;
}

/** OpenClaw's `collectToolFailures`: each failed tool result once, its text on one line, at most 240 chars. */
export function collectToolFailures(messages: readonly AnyMessage[]): ToolFailure[] {
  const failures: ToolFailure[] = [];
  const seen = new Set<string>();
  for (const message of messages) {
    if (message.role !== "toolResult" || !message.isError) continue;
    const toolCallId = typeof message.toolCallId === "string" ? message.toolCallId : "";
    if (!toolCallId || seen.has(toolCallId)) continue;
    seen.add(toolCallId);
    const toolName =
      typeof message.toolName === "string" && message.toolName.trim() ? message.toolName : "tool";
    const meta = failureMeta(message.details);
    const content: unknown[] = Array.isArray(message.content) ? message.content : [];
    const text = content
      .flatMap((block) =>
        block && typeof block === "object" && (block as { type?: unknown }).type === "text"
          ? [String((block as { text?: unknown }).text ?? "")]
          : [],
      )
      .join("\n")
      .replace(/\s+/g, " ")
      .trim();
    const failureText = text || (meta ? "failed" : "failed (no output)");
    const summary =
      failureText.length > MAX_TOOL_FAILURE_CHARS ? `${failureText.slice(0, 237)}...` : failureText;
    failures.push({ toolCallId, toolName, summary, meta });
  }
  return failures;
}

/** OpenClaw's `formatToolFailuresSection` (its heading and limits). */
export function formatToolFailuresSection(failures: readonly ToolFailure[]): string {
  if (failures.length === 0) return "";
  const lines = failures
    .slice(0, MAX_TOOL_FAILURES)
    .map((failure) => `- ${failure.toolName}${failure.meta ? ` (${failure.meta})` : ""}: ${failure.summary}`);
  if (failures.length > MAX_TOOL_FAILURES) lines.push(`- ...and ${failures.length - MAX_TOOL_FAILURES} more`);
  return `\n\n## Tool Failures\n${lines.join("\n")}`;
}

function boundedFileList(tag: string, files: readonly string[], maxChars: number): string {
  if (files.length === 0 || maxChars <= 0) return "";
  const open = `<${tag}>\n`;
  const close = `\n</${tag}>`;
  const lines: string[] = [];
  let used = open.length + close.length;
  for (let index = 0; index < files.length; index++) {
    const line = `${files[index]}\n`;
    const remaining = files.length - index - 1;
    const overflowLine = remaining > 0 ? `...and ${remaining} more\n` : "";
    if (used + line.length + overflowLine.length > maxChars) {
      const overflow = `...and ${files.length - index} more\n`;
      if (used + overflow.length <= maxChars) lines.push(overflow);
      break;
    }
    lines.push(line);
    used += line.length;
  }
  return lines.length > 0 ? `${open}${lines.join("").trimEnd()}${close}` : "";
}

/** OpenClaw's bounded `formatFileOperations` (pi's lists every file). */
export function formatFileOperations(readFiles: readonly string[], modifiedFiles: readonly string[]): string {
  const sections = [
    boundedFileList("read-files", readFiles, MAX_FILE_LIST_CHARS),
    boundedFileList("modified-files", modifiedFiles, MAX_FILE_LIST_CHARS),
  ].filter(Boolean);
  if (sections.length === 0) return "";
  const joined = `\n\n${sections.join("\n\n")}`;
  return joined.length > MAX_FILE_OPS_SECTION_CHARS ? joined.slice(0, MAX_FILE_OPS_SECTION_CHARS) : joined;
}

/** pi's file operations (sets of paths) as read-only and modified lists, sorted. */
export function computeFileLists(fileOps: {
  readonly read: ReadonlySet<string>;
  readonly written: ReadonlySet<string>;
  readonly edited: ReadonlySet<string>;
}): { readFiles: string[]; modifiedFiles: string[] } {
  const modified = new Set([...fileOps.edited, ...fileOps.written]);
  return {
    readFiles: [...fileOps.read].filter((file) => !modified.has(file)).sort(),
    modifiedFiles: [...modified].sort(),
  };
}

/** The summarizer the extension calls: pi's `generateSummary`, a parameter so tests can count the calls. */
export type Summarize = (messages: AnyMessage[], previousSummary: string | undefined) => Promise<string>;

/**
 * Summarizes `messages` chunk by chunk (each chunk updating the summary so far, pi's own update prompt),
 * starting from `previousSummary`.
 */
async function summarizeInChunks(
  messages: readonly AnyMessage[],
  maxChunkTokens: number,
  previousSummary: string | undefined,
  summarize: Summarize,
): Promise<string | undefined> {
  let summary = previousSummary;
  const chunks = chunkMessages(messages, Math.max(1, Math.floor(maxChunkTokens / SAFETY_MARGIN)));
  for (const chunk of chunks) summary = await summarize(chunk, summary);
  return summary;
}

/** The inputs of one safeguarded compaction (pi's preparation, as its `session_before_compact` gives it). */
export interface SafeguardInput {
  readonly messagesToSummarize: AnyMessage[];
  readonly turnPrefixMessages: AnyMessage[];
  readonly isSplitTurn: boolean;
  readonly tokensBefore: number;
  readonly previousSummary?: string | undefined;
  readonly fileOps: { read: ReadonlySet<string>; written: ReadonlySet<string>; edited: ReadonlySet<string> };
  readonly contextWindowTokens: number;
  readonly settings: CompactionSafeguardSettings;
}

/** The summary the safeguard stores, and the details kept with it. */
export interface SafeguardSummary {
  readonly summary: string;
  readonly details: { readFiles: string[]; modifiedFiles: string[]; toolFailures: ToolFailure[] };
}

/** Builds the safeguarded summary for one compaction. */
export async function buildSafeguardSummary(
  input: SafeguardInput,
  summarize: Summarize,
): Promise<SafeguardSummary> {
  const { readFiles, modifiedFiles } = computeFileLists(input.fileOps);
  const toolFailures = collectToolFailures([...input.messagesToSummarize, ...input.turnPrefixMessages]);
  const window = input.contextWindowTokens;
  const plan = buildHistoryPrunePlan({
    messagesToSummarize: input.messagesToSummarize,
    turnPrefixMessages: input.turnPrefixMessages,
    tokensBefore: input.tokensBefore,
    contextWindowTokens: window,
    maxHistoryShare: input.settings.maxHistoryShare,
  });
  let previous = input.previousSummary;
  if (plan.dropped.length > 0) {
    const ratio = computeAdaptiveChunkRatio(plan.dropped, window);
    const maxChunk = Math.max(1, Math.floor(window * ratio) - SUMMARIZATION_OVERHEAD_TOKENS);
    previous = await summarizeInChunks(plan.dropped, maxChunk, previous, summarize);
  }
  const ratio = computeAdaptiveChunkRatio([...plan.messages, ...input.turnPrefixMessages], window);
  const maxChunkTokens = Math.max(1, Math.floor(window * ratio) - SUMMARIZATION_OVERHEAD_TOKENS);
  let summary =
    plan.messages.length > 0
      ? await summarizeInChunks(plan.messages, maxChunkTokens, previous, summarize)
      : previous;
  summary ??= "No prior history.";
  if (input.isSplitTurn && input.turnPrefixMessages.length > 0) {
    const prefix = await summarizeInChunks(input.turnPrefixMessages, maxChunkTokens, undefined, summarize);
    if (prefix) summary += `\n\n---\n\n${SPLIT_TURN_HEADING}\n\n${prefix}`;
  }
  summary += formatToolFailuresSection(toolFailures);
  summary += formatFileOperations(readFiles, modifiedFiles);
  return { summary, details: { readFiles, modifiedFiles, toolFailures } };
}

/** Tokens the summary may take: pi's reserve, at most the model's output limit (OpenClaw's clamp). */
function summaryReserveTokens(requested: number, model: Model<Api>): number {
  const reserve = Math.max(1, Math.floor(requested));
  return model.maxTokens > 0 ? Math.max(1, Math.min(reserve, Math.floor(model.maxTokens))) : reserve;
}

/**
 * The safeguard as a pi extension on `session_before_compact`. `session` is read when compaction runs (the
 * extension is made before the session exists): its model, credentials, thinking level and stream function,
 * so a summary request goes through the same hooks as every other request of the turn.
 */
export function compactionSafeguardExtension(
  settings: CompactionSafeguardSettings,
  sessionRef: { current: AgentSession | undefined },
): Extension {
  const path = "<agent-kernel:compaction-safeguard>";
  const handler = async (event: unknown) => {
    const session = sessionRef.current;
    const { preparation, customInstructions, signal } = event as {
      preparation: {
        firstKeptEntryId: string;
        messagesToSummarize: AnyMessage[];
        turnPrefixMessages: AnyMessage[];
        isSplitTurn: boolean;
        tokensBefore: number;
        previousSummary?: string;
        fileOps: SafeguardInput["fileOps"];
        settings: { reserveTokens: number };
      };
      customInstructions?: string;
      signal: AbortSignal;
    };
    const model = session?.model;
    if (session === undefined || model === undefined) return { cancel: true };
    try {
      const auth = await session.modelRuntime.getAuth(model, { signal });
      const requestModel = auth?.auth.baseUrl ? { ...model, baseUrl: auth.auth.baseUrl } : model;
      const reserve = summaryReserveTokens(preparation.settings.reserveTokens, model);
      const summarize: Summarize = (messages, previousSummary) =>
        generateSummary(
          messages as Parameters<typeof generateSummary>[0],
          requestModel,
          reserve,
          auth?.auth.apiKey,
          auth?.auth.headers as Record<string, string> | undefined,
          signal,
          customInstructions,
          previousSummary,
          session.thinkingLevel,
          session.agent.streamFunction,
          auth?.env,
        );
      const built = await buildSafeguardSummary(
        {
          messagesToSummarize: preparation.messagesToSummarize,
          turnPrefixMessages: preparation.turnPrefixMessages,
          isSplitTurn: preparation.isSplitTurn,
          tokensBefore: preparation.tokensBefore,
          previousSummary: preparation.previousSummary,
          fileOps: preparation.fileOps,
          contextWindowTokens: model.contextWindow,
          settings,
        },
        summarize,
      );
      return {
        compaction: {
          summary: built.summary,
          firstKeptEntryId: preparation.firstKeptEntryId,
          tokensBefore: preparation.tokensBefore,
          details: built.details,
        },
      };
    } catch (error) {
      if (signal.aborted) throw error;
      // No summary: the compaction is cancelled and the history kept (OpenClaw's choice).
      return { cancel: true };
    }
  };
  return {
    path,
    resolvedPath: path,
    sourceInfo: createSyntheticSourceInfo(path, { source: "agent-kernel" }),
    handlers: new Map([["session_before_compact", [handler]]]),
    tools: new Map(),
    messageRenderers: new Map(),
    commands: new Map(),
    flags: new Map(),
    shortcuts: new Map(),
  } as Extension;
}
