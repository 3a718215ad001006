import { defaultAgentId, type KernelConfig, listAgentIds } from "@agent-kernel/config";
import {
  openSessionStore,
  type RunRecord,
  type SessionRecord,
  type SessionStore,
  type SqliteSessionStore,
  type TranscriptEntry,
} from "@agent-kernel/session-store";

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
export { type DoctorReport, type IntegrityProblem, runDoctor } from "./admin-doctor.ts";
export type { QuarantinedTranscriptRow } from "./doctor-transcripts.ts";
export type { ChildRunRef } from "./run-lineage.ts";
export { type RunPrompt, recordedSystemPrompt, showRunPrompt } from "./run-prompt.ts";
export {
  interpretRunEvents,
  type RecordedAssistantMessage,
  type RecordedAttempt,
  type RecordedCompaction,
  type RecordedToolCall,
  type RunReport,
  showRun,
} from "./run-report.ts";

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
