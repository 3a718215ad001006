// Offline replay of a stored run: the run's recorded model replies (its `assistant` events, tool arguments from
// its `tool` events) become a scripted pi faux provider standing in for every provider the run used, and the
// same prompt runs again through the real kernel and executor, in a scratch state dir and a scratch copy of
// the workspace. The report lists every divergence between the stored run and the replay: model calls,
// models asked, tool calls and their results, the final text and status. Owns: building the script, the
// scratch, and the comparison. Does not own: reading runs back (admin.ts) or running turns (kernel.ts).
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { KernelConfig } from "@agent-kernel/config";
import { openSessionStore, type SessionStore } from "@agent-kernel/session-store";
import {
  type AssistantMessage,
  type FauxContentBlock,
  type FauxProviderHandle,
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxThinking,
  fauxToolCall,
} from "@earendil-works/pi-ai";
import { type RecordedAssistantMessage, type RunReport, showRun } from "./admin.ts";
import { createKernel } from "./kernel.ts";

export interface ReplayOptions {
  /** The store holding the run (read only). */
  readonly store: SessionStore;
  readonly config: KernelConfig;
  readonly runId: string;
  /** Keep the scratch state dir and workspace (default: removed). */
  readonly keepScratch?: boolean;
}

/** What one side (the stored run or the replay) did, normalised for comparison. */
export interface ReplaySide {
  readonly runId: string;
  readonly status: string;
  readonly modelCalls: readonly string[];
  readonly toolCalls: readonly {
    readonly name: string;
    readonly args: string;
    readonly isError?: boolean;
    readonly text?: string;
  }[];
  readonly finalText: string;
}

export interface ReplayReport {
  readonly runId: string;
  readonly prompt: string;
  readonly recorded: ReplaySide;
  readonly replayed: ReplaySide;
  /** Empty when the replay did exactly what the stored run did. */
  readonly divergences: readonly string[];
  readonly scratch: { readonly stateDir: string; readonly workspaceDir: string; readonly kept: boolean };
}

/** The stored run has no user prompt to replay (its transcript is gone or the run never started). */
export class ReplayUnavailableError extends Error {
  override readonly name = "ReplayUnavailableError";
}

const RUN_STATUS_TO_TURN: Readonly<Record<string, string>> = {
  succeeded: "ok",
  failed: "error",
  aborted: "aborted",
  timed_out: "timeout",
  interrupted: "interrupted",
  running: "running",
};

const STOP_REASONS = new Set(["stop", "length", "toolUse", "error", "aborted"]);

function scriptedMessage(recorded: RecordedAssistantMessage): AssistantMessage {
  const blocks: FauxContentBlock[] = [];
  if (recorded.thinking) blocks.push(fauxThinking(recorded.thinking));
  if (recorded.text) blocks.push(fauxText(recorded.text));
  for (const call of recorded.toolCalls) {
    const args = typeof call.args === "object" && call.args !== null ? call.args : {};
    blocks.push(fauxToolCall(call.name, args as Parameters<typeof fauxToolCall>[1], { id: call.id }));
  }
  const stopReason = (
    STOP_REASONS.has(recorded.stopReason) ? recorded.stopReason : "stop"
  ) as AssistantMessage["stopReason"];
  return fauxAssistantMessage(blocks, {
    stopReason,
    ...(recorded.errorMessage === undefined ? {} : { errorMessage: recorded.errorMessage }),
  });
}

function decisionValue(runtime: Readonly<Record<string, unknown>> | undefined, key: string): unknown {
  const entry = runtime?.[key];
  return typeof entry === "object" && entry !== null && "value" in entry ? entry.value : entry;
}

/** The user prompt that started the run: the first user message its transcript got while it ran. */
function findPrompt(store: SessionStore, report: RunReport): string {
  const { run } = report;
  if (!store.hasTranscript(run.agentId, run.sessionId)) {
    throw new ReplayUnavailableError(`run ${run.runId}: its transcript ${run.sessionId} is not in the store`);
  }
  const entries = store.openTranscript(run.agentId, run.sessionId).getEntries();
  const until = run.endedAt ?? Number.POSITIVE_INFINITY;
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    const at = Date.parse(entry.timestamp);
    if (!(at >= run.startedAt - 1 && at <= until + 1)) continue;
    const message = entry.message as { role?: unknown; content?: unknown } | undefined;
    if (message?.role !== "user") continue;
    const content = message.content;
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content
        .map((block: { type?: unknown; text?: unknown }) =>
          block.type === "text" && typeof block.text === "string" ? block.text : "",
        )
        .join("");
    }
  }
  throw new ReplayUnavailableError(`run ${run.runId}: no user prompt was recorded while it ran`);
}

function side(report: RunReport, workspaceDir: string | undefined): ReplaySide {
  const scrub = (text: string) => (workspaceDir ? text.split(workspaceDir).join("<workspace>") : text);
  return {
    runId: report.run.runId,
    status: RUN_STATUS_TO_TURN[report.run.status] ?? report.run.status,
    modelCalls: report.assistantMessages.map(
      (message) => `${message.provider ?? "?"}/${message.model ?? "?"} → ${message.stopReason}`,
    ),
    toolCalls: report.toolCalls.map((call) => ({
      name: call.name,
      args: scrub(JSON.stringify(call.args ?? {})),
      ...(call.isError === undefined ? {} : { isError: call.isError }),
      ...(call.text === undefined ? {} : { text: scrub(call.text) }),
    })),
    finalText: report.assistantMessages.at(-1)?.text ?? "",
  };
}

function compare(recorded: ReplaySide, replayed: ReplaySide): string[] {
  const out: string[] = [];
  if (recorded.status !== replayed.status)
    out.push(`status: recorded ${recorded.status}, replay ${replayed.status}`);
  const calls = Math.max(recorded.modelCalls.length, replayed.modelCalls.length);
  for (let i = 0; i < calls; i++) {
    const a = recorded.modelCalls[i];
    const b = replayed.modelCalls[i];
    if (a !== b) out.push(`model call ${i + 1}: recorded ${a ?? "(none)"}, replay ${b ?? "(none)"}`);
  }
  const tools = Math.max(recorded.toolCalls.length, replayed.toolCalls.length);
  for (let i = 0; i < tools; i++) {
    const a = recorded.toolCalls[i];
    const b = replayed.toolCalls[i];
    const label = `tool call ${i + 1} (${a?.name ?? b?.name ?? "?"})`;
    if (a === undefined || b === undefined) {
      out.push(`${label}: ${a === undefined ? "only in the replay" : "missing from the replay"}`);
      continue;
    }
    if (a.name !== b.name) out.push(`${label}: recorded ${a.name}, replay ${b.name}`);
    if (a.args !== b.args) out.push(`${label}: arguments recorded ${a.args}, replay ${b.args}`);
    if (a.isError !== b.isError) out.push(`${label}: error recorded ${a.isError}, replay ${b.isError}`);
    if (a.text !== b.text) {
      out.push(`${label}: result recorded ${JSON.stringify(a.text)}, replay ${JSON.stringify(b.text)}`);
    }
  }
  if (recorded.finalText !== replayed.finalText) {
    out.push(
      `final text: recorded ${JSON.stringify(recorded.finalText)}, replay ${JSON.stringify(replayed.finalText)}`,
    );
  }
  return out;
}

/**
 * Replays a stored run offline. Returns undefined for an unknown runId; throws `ReplayUnavailableError` when
 * the run cannot be replayed. Never writes to the source store or the real workspace.
 */
export async function replayRun(options: ReplayOptions): Promise<ReplayReport | undefined> {
  const report = await showRun(options.store, options.runId);
  if (report === undefined) return undefined;
  const { run } = report;
  await options.store.loadTranscript(run.agentId, run.sessionId);
  const prompt = findPrompt(options.store, report);
  const runtime = report.decisions?.runtime;
  const originalWorkspace = decisionValue(runtime, "workspaceDir");
  const workspaceDir = typeof originalWorkspace === "string" ? originalWorkspace : undefined;

  const scratchRoot = mkdtempSync(join(tmpdir(), "agent-replay-"));
  const scratchState = join(scratchRoot, "state");
  const scratchWorkspace = join(scratchRoot, "workspace");
  if (workspaceDir !== undefined && existsSync(workspaceDir)) {
    cpSync(workspaceDir, scratchWorkspace, {
      recursive: true,
      filter: (source) => !["node_modules", ".git"].includes(basename(source)),
    });
  } else {
    mkdirSync(scratchWorkspace, { recursive: true });
  }

  // One script shared by every provider the run used, in call order.
  const script = report.assistantMessages.map(scriptedMessage);
  let served = 0;
  const next = (): AssistantMessage => {
    const message = script[served];
    served += 1;
    return (
      message ??
      fauxAssistantMessage([], {
        stopReason: "error",
        errorMessage: "replay: the stored run has no further model reply",
      })
    );
  };
  const piModel = decisionValue(runtime, "piModel") as { contextWindow?: unknown } | undefined;
  const contextWindow = typeof piModel?.contextWindow === "number" ? piModel.contextWindow : 200_000;
  const byProvider = new Map<string, Set<string>>();
  const add = (provider: string | undefined, model: string | undefined) => {
    if (!provider || !model) return;
    const models = byProvider.get(provider) ?? new Set<string>();
    models.add(model);
    byProvider.set(provider, models);
  };
  add(run.provider, run.model);
  for (const attempt of report.attempts) add(attempt.provider, attempt.model);
  for (const message of report.assistantMessages) add(message.provider, message.model);
  const providers: FauxProviderHandle[] = [...byProvider].map(([provider, models]) => {
    const handle = fauxProvider({
      provider,
      models: [...models].map((id) => ({ id, reasoning: true, contextWindow, maxTokens: 8192 })),
      tokenSize: { min: 64, max: 64 },
    });
    handle.setResponses(Array.from({ length: script.length + 8 }, () => () => next()));
    return handle;
  });

  const config: KernelConfig = {
    ...options.config,
    store: { ...options.config.store, stateDir: scratchState },
  };
  const scratchStore = await openSessionStore({ stateDir: scratchState });
  try {
    const kernel = createKernel({
      config,
      store: scratchStore,
      nativeProviders: providers.map((handle) => handle.provider),
      executorSettings: { transientRetryDelayMs: 0 },
    });
    // What the run asked for itself (`--model`, `--thinking-once`) is asked again; what the config or the
    // session decided is decided again from the same config.
    const requested = (key: string): string | undefined => {
      const entry = runtime?.[key] as { source?: unknown; value?: unknown } | undefined;
      if (entry?.source !== "request") return undefined;
      const value = entry.value;
      if (typeof value === "string") return value;
      return typeof value === "object" && value !== null && "key" in value && typeof value.key === "string"
        ? value.key
        : undefined;
    };
    const model = requested("model");
    const thinking = run.thinkingLevel;
    const prepared = await kernel.prepareSession({
      agentId: run.agentId,
      sessionKey: run.sessionKey,
      workspaceDir: scratchWorkspace,
      runOptions: {
        entryPoint: run.entryPoint,
        ...(model === undefined ? {} : { model }),
        ...(thinking === undefined ? {} : { thinking }),
      },
    });
    const outcome = await kernel.executeTurn(prepared, { prompt });
    const replayReport = await showRun(scratchStore, outcome.runId);
    if (replayReport === undefined) throw new Error(`replay run ${outcome.runId} was not recorded`);
    const recorded = side(report, workspaceDir);
    const replayed = side(replayReport, scratchWorkspace);
    return {
      runId: run.runId,
      prompt,
      recorded,
      replayed,
      divergences: compare(recorded, replayed),
      scratch: { stateDir: scratchState, workspaceDir: scratchWorkspace, kept: options.keepScratch === true },
    };
  } finally {
    await scratchStore.close();
    if (options.keepScratch !== true) rmSync(scratchRoot, { recursive: true, force: true });
  }
}
