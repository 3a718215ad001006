// Read-side and maintenance facades over the store for entry points (the `agent` CLI's `sessions`, `runs` and
// `doctor`): opening the store at a resolved state dir, listing and showing sessions and runs, reading back
// every decision of a stored run (runtime, tool-policy lines, attempts, fallback, tool calls, replies), and the
// doctor (migrate on open, legacy JSON/JSONL import, a logical integrity check). Deliberately free of pi and of
// runtime-resolver so that a command that only reads the store starts fast: it is also reachable as
// `@agent-kernel/kernel/admin`. Does not own: running turns (kernel.ts), replaying them (replay.ts), or the
// store's rules (session-store).

import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { defaultAgentId, type KernelConfig, listAgentIds } from "@agent-kernel/config";
import type { SandboxEngine } from "@agent-kernel/sandbox";
import {
  type AppendReplay,
  type ImportReport,
  importOpenClawSessions,
  importPiSessionFile,
  mergeImportReports,
  openSessionStore,
  type RunEvent,
  type RunRecord,
  type SchemaInfo,
  type SessionRecord,
  type SessionStore,
  type SqliteSessionStore,
  type TranscriptEntry,
} from "@agent-kernel/session-store";
import { checkSecurity, type SecurityReport } from "./doctor-security.ts";
import { checkTranscript, type QuarantinedTranscriptRow } from "./doctor-transcripts.ts";
import { type ChildRunRef, childRunsOf } from "./run-lineage.ts";
import type { RunDecisions } from "./types.ts";

export type {
  ImportReport,
  RunEvent,
  RunRecord,
  SchemaInfo,
  SessionMeta,
  SessionRecord,
  SessionStore as AnyKernelStore,
  SqliteSessionStore as KernelStore,
} from "@agent-kernel/session-store";
// What a store failure says (the file, the row, what to do), for entry points that report it.
export {
  controlPlanePath,
  findStorageFailure,
  StorageFailure,
  type StorageFailureKind,
  toStorageFailure,
} from "@agent-kernel/session-store";
export type { QuarantinedTranscriptRow } from "./doctor-transcripts.ts";
export type { ChildRunRef } from "./run-lineage.ts";
export { type RunPrompt, recordedSystemPrompt, showRunPrompt } from "./run-prompt.ts";

export interface OpenKernelStoreOptions {
  readonly stateDir: string;
  /**
   * With `store.driver: "postgres"`, the store is the PostgreSQL one at `store.postgres.url` (the
   * `@agent-kernel/session-store/postgres` entry, loaded only then: a SQLite user never loads `pg`).
   */
  readonly config?: KernelConfig | undefined;
}

/** Opens (creating and migrating) the store under `stateDir`; the caller closes it. */
export function openKernelStore(options: { readonly stateDir: string }): Promise<SqliteSessionStore>;
/** Opens the store `config.store` names: SQLite under `stateDir`, or PostgreSQL; the caller closes it. */
export function openKernelStore(options: OpenKernelStoreOptions): Promise<SessionStore>;
export async function openKernelStore(options: OpenKernelStoreOptions): Promise<SessionStore> {
  const store = options.config?.store;
  if (store?.driver !== "postgres") return openSessionStore({ stateDir: options.stateDir });
  const url = store.postgres?.url;
  if (url === undefined) {
    throw new Error('store.driver is "postgres" but store.postgres.url is not set (e.g. "${DATABASE_URL}")');
  }
  const { openPostgresSessionStore } = await import("@agent-kernel/session-store/postgres");
  return openPostgresSessionStore({
    connectionString: url,
    ...(store.postgres?.maxConnections === undefined
      ? {}
      : { maxConnections: store.postgres.maxConnections }),
  });
}

/** Where the store lives, for reports: its state dir (SQLite) or `postgres:<schema>`. */
function storeLocation(store: SessionStore): string {
  if ("stateDir" in store && typeof store.stateDir === "string") return store.stateDir;
  if ("schemaName" in store && typeof store.schemaName === "string") return `postgres:${store.schemaName}`;
  return "";
}

/** The agents to look at: the given one, else every configured agent plus the default `main`. */
function agentsOf(config: KernelConfig, agentId: string | undefined): string[] {
  if (agentId !== undefined) return [agentId.trim().toLowerCase()];
  return [...new Set([...listAgentIds(config), defaultAgentId(config)])];
}

export interface SessionSummary {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly updatedAt: number;
  readonly model?: string;
  readonly modelProvider?: string;
  readonly totalTokens?: number;
  readonly thinkingLevel?: string;
}

function summarise(row: SessionRecord): SessionSummary {
  const meta = row.meta;
  return {
    agentId: row.agentId,
    sessionKey: row.sessionKey,
    sessionId: row.sessionId,
    updatedAt: row.updatedAt,
    ...(meta.model === undefined ? {} : { model: meta.model }),
    ...(meta.modelProvider === undefined ? {} : { modelProvider: meta.modelProvider }),
    ...(meta.totalTokens === undefined ? {} : { totalTokens: meta.totalTokens }),
    ...(meta.thinkingLevel === undefined ? {} : { thinkingLevel: meta.thinkingLevel }),
  };
}

/** Sessions of one agent or of every configured agent, most recently updated first. */
export async function listSessions(
  store: SessionStore,
  config: KernelConfig,
  options: { readonly agentId?: string | undefined } = {},
): Promise<SessionSummary[]> {
  const rows = (
    await Promise.all(agentsOf(config, options.agentId).map((agentId) => store.sessions.list(agentId)))
  ).flat();
  return rows.sort((a, b) => b.updatedAt - a.updatedAt).map(summarise);
}

/**
 * Finds a session by key (as stored, `agent:<id>:<rest>`, or the `<rest>` part) or by sessionId, in one agent
 * or every configured agent.
 */
export async function findSession(
  store: SessionStore,
  config: KernelConfig,
  ref: { readonly agentId?: string | undefined; readonly key: string },
): Promise<SessionRecord | undefined> {
  const key = ref.key.trim();
  for (const agentId of agentsOf(config, ref.agentId)) {
    const candidates = key.startsWith("agent:") ? [key, key.toLowerCase()] : [`agent:${agentId}:${key}`];
    candidates.push(`agent:${agentId}:${key.toLowerCase()}`);
    for (const sessionKey of candidates) {
      const row = await store.sessions.get({ agentId, sessionKey });
      if (row) return row;
    }
    const byId = await store.sessions.getBySessionId(agentId, key);
    if (byId) return byId;
  }
  return undefined;
}

export interface SessionDetails {
  readonly session: SessionRecord;
  /** Transcript entries of the current sessionId (0 when it has none yet). */
  readonly transcriptEntries: number;
  /** The current branch's messages, oldest first: role and text. */
  readonly messages: readonly { readonly role: string; readonly text: string }[];
  /** Newest first. */
  readonly runs: readonly RunRecord[];
}

function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: unknown) => {
      if (typeof block !== "object" || block === null) return "";
      const part = block as { type?: unknown; text?: unknown; name?: unknown };
      if (part.type === "text" && typeof part.text === "string") return part.text;
      if (part.type === "toolCall" && typeof part.name === "string") return `[tool call ${part.name}]`;
      return "";
    })
    .join("");
}

function branchMessages(entries: readonly TranscriptEntry[]): { role: string; text: string }[] {
  const messages: { role: string; text: string }[] = [];
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    const message = entry.message as { role?: unknown; content?: unknown } | undefined;
    if (typeof message?.role !== "string") continue;
    messages.push({ role: message.role, text: messageText(message.content) });
  }
  return messages;
}

export async function showSession(
  store: SessionStore,
  config: KernelConfig,
  ref: { readonly agentId?: string | undefined; readonly key: string; readonly runLimit?: number },
): Promise<SessionDetails | undefined> {
  const session = await findSession(store, config, ref);
  if (session === undefined) return undefined;
  await store.loadTranscript(session.agentId, session.sessionId);
  const has = store.hasTranscript(session.agentId, session.sessionId);
  const transcript = has ? store.openTranscript(session.agentId, session.sessionId) : undefined;
  const runs = await store.runs.listForSession(session, { limit: ref.runLimit ?? 20 });
  return {
    session,
    transcriptEntries: transcript?.count() ?? 0,
    messages: transcript ? branchMessages(transcript.getBranch()) : [],
    runs,
  };
}

/** Runs of one session, or of every session of one agent or every agent, newest first. */
export async function listRuns(
  store: SessionStore,
  config: KernelConfig,
  options: {
    readonly agentId?: string | undefined;
    readonly sessionKey?: string;
    readonly limit?: number;
  } = {},
): Promise<RunRecord[]> {
  const limit = options.limit ?? 20;
  const sessions =
    options.sessionKey === undefined
      ? (await Promise.all(agentsOf(config, options.agentId).map((id) => store.sessions.list(id)))).flat()
      : [await findSession(store, config, { agentId: options.agentId, key: options.sessionKey })].filter(
          (row): row is SessionRecord => row !== undefined,
        );
  const runs = (await Promise.all(sessions.map((row) => store.runs.listForSession(row, { limit })))).flat();
  return runs.sort((a, b) => b.startedAt - a.startedAt).slice(0, limit);
}

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

// ── doctor ─────────────────────────────────────────────────────────────────────────────────────────────

export interface IntegrityProblem {
  readonly where: string;
  readonly problem: string;
}

export interface DoctorReport {
  readonly stateDir: string;
  readonly schema: SchemaInfo;
  /** Runs found `running` under a dead owner and marked `interrupted` when the store was opened. */
  readonly recoveredRuns: readonly string[];
  /**
   * SQLite: append journals of processes that died before folding them, replayed when the check opened their
   * agent's database (what was stored, and each line that could not be).
   */
  readonly recoveredAppends: readonly AppendReplay[];
  readonly imported?: ImportReport;
  readonly checked: { readonly sessions: number; readonly transcripts: number; readonly runs: number };
  readonly problems: readonly IntegrityProblem[];
  /**
   * Transcript rows the store set aside as damaged (kept byte for byte; reads skip them). One found by this
   * check is also a problem; one set aside before (by a turn, which reported it) is listed here only.
   */
  readonly quarantined: readonly QuarantinedTranscriptRow[];
  /** The sandbox engine of each sandboxed agent, and who can run exec unsandboxed (doctor-security.ts). */
  readonly security: SecurityReport;
}

/** Legacy files under `path`: a `sessions.json` (OpenClaw) or `.jsonl` files (pi), a folder searched one level. */
interface LegacyFile {
  readonly kind: "openclaw" | "pi";
  readonly file: string;
}

function legacyFiles(path: string): LegacyFile[] {
  if (!existsSync(path)) throw new Error(`legacy path ${path} does not exist`);
  const classify = (file: string): LegacyFile[] =>
    basename(file) === "sessions.json"
      ? [{ kind: "openclaw", file }]
      : file.endsWith(".jsonl")
        ? [{ kind: "pi", file }]
        : [];
  if (!statSync(path).isDirectory()) {
    const found = classify(path);
    if (found.length === 0)
      throw new Error(`${path} is neither a sessions.json index nor a .jsonl transcript`);
    return found;
  }
  const names = readdirSync(path).sort();
  // A folder with an OpenClaw index: its transcripts are imported through the index, not one by one.
  if (names.includes("sessions.json")) return [{ kind: "openclaw", file: join(path, "sessions.json") }];
  return names.flatMap((name) => classify(join(path, name)));
}

/**
 * Migrates (opening the store does that), imports legacy files for `agentId` (default: the default agent),
 * then checks what the store holds: every session's transcript readable (a damaged row is set aside and
 * reported), its active branch whole from leaf to root, every run's session known, no run left `running`
 * without an owner.
 */
export async function runDoctor(
  store: SessionStore,
  config: KernelConfig,
  options: {
    readonly legacyPaths?: readonly string[];
    readonly agentId?: string | undefined;
    /** The bubblewrap engine to probe (a test's, at another path); default the one on PATH. */
    readonly bwrap?: SandboxEngine | undefined;
  } = {},
): Promise<DoctorReport> {
  const agentId = options.agentId?.trim().toLowerCase() || defaultAgentId(config);
  let imported: ImportReport | undefined;
  if (options.legacyPaths !== undefined && options.legacyPaths.length > 0) {
    const reports: ImportReport[] = [];
    for (const path of options.legacyPaths) {
      for (const { kind, file } of legacyFiles(path)) {
        reports.push(
          kind === "openclaw"
            ? await importOpenClawSessions(store, file, { agentId })
            : await importPiSessionFile(store, file, { agentId }),
        );
      }
    }
    imported = mergeImportReports(reports);
  }
  const problems: IntegrityProblem[] = [];
  const quarantined: QuarantinedTranscriptRow[] = [];
  const unreadableAgents = new Set<string>();
  let sessions = 0;
  let transcripts = 0;
  let runs = 0;
  const agents = [...new Set([...agentsOf(config, undefined), agentId])];
  for (const id of agents) {
    for (const row of await store.sessions.list(id)) {
      sessions += 1;
      const where = `session ${row.sessionKey} (${row.sessionId})`;
      await store.loadTranscript(id, row.sessionId);
      let hasTranscript = false;
      if (!unreadableAgents.has(id)) {
        try {
          hasTranscript = store.hasTranscript(id, row.sessionId);
        } catch (error) {
          // The agent's database itself is refused (empty, not SQLite, unreadable): said once per agent.
          unreadableAgents.add(id);
          problems.push({
            where: `agent ${id}`,
            problem: `transcripts unreadable: ${(error as Error).message}`,
          });
        }
      }
      if (hasTranscript) {
        transcripts += 1;
        const check = checkTranscript(store, id, row, where);
        problems.push(...check.problems);
        quarantined.push(...check.quarantined);
      }
      for (const run of await store.runs.listForSession(row, { limit: 1000 })) {
        runs += 1;
        if (run.status === "running") {
          problems.push({
            where: `run ${run.runId}`,
            problem: "still running: the process that started it is alive (or on another host)",
          });
        }
        if (run.sessionId !== row.sessionId) await store.loadTranscript(id, run.sessionId);
        if (
          run.status === "succeeded" &&
          !unreadableAgents.has(id) &&
          !store.hasTranscript(id, run.sessionId)
        ) {
          // A run that answered wrote its transcript; without it the session lost its history.
          problems.push({ where: `run ${run.runId}`, problem: `its transcript ${run.sessionId} is missing` });
        }
      }
    }
  }
  const security = await checkSecurity(config, { bwrap: options.bwrap });
  problems.push(...security.problems);
  return {
    stateDir: storeLocation(store),
    schema: await store.schema(),
    security,
    recoveredRuns: store.recoveredRuns.map((run) => run.runId),
    recoveredAppends: "recoveredAppends" in store ? (store as SqliteSessionStore).recoveredAppends : [],
    ...(imported === undefined ? {} : { imported }),
    checked: { sessions, transcripts, runs },
    problems,
    quarantined,
  };
}
