// The store object: one control-plane database and one database per agent under a state dir. Owns: opening
// and migrating the files (the control plane on open, an agent's database on its first transcript), the
// backend-neutral `SessionStore` interface (the seam where PostgreSQL joins: everything is async except
// transcripts, which are synchronous; Kysely is the PostgreSQL implementation, SQLite mostly runs prepared
// better-sqlite3 statements; its shapes are in store-types.ts), transcript open/fork, interrupted-run recovery
// on open, and closing. Does not own: the individual APIs (sessions.ts, runs.ts, ...; their SQLite fast paths
// in sqlite/), or how a missing database file is built (sqlite/new-database.ts).
import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import type { Kysely } from "kysely";
import { type AuthStateApi, KyselyAuthState } from "./auth-state.ts";
import { type ChannelStateApi, KyselyChannelState } from "./channel-state.ts";
import { type CronStateApi, KyselyCronState } from "./cron-state.ts";
import { refuseForeignDatabaseFile } from "./database-file-check.ts";
import { SessionStoreError, StoreOpenError, TranscriptNotFoundError } from "./errors.ts";
import type { LoadTranscriptOptions, SessionLease } from "./leases.ts";
import type { MemoryDatabase } from "./memory-database.ts";
import { LATEST_SCHEMA_VERSION, listAppliedMigrations, migrateSqlite } from "./migrator.ts";
import { KyselyQueue, type QueueApi } from "./queue.ts";
import {
  isRunOwnerAlive,
  KyselyRuns,
  newRunOwner,
  type RunOwner,
  type RunRecord,
  type RunsApi,
  registerRunOwner,
  unregisterRunOwner,
} from "./runs.ts";
import type { ControlPlaneDatabase } from "./schema.ts";
import { KyselySessions, type SessionsApi } from "./sessions.ts";
import { listJournals } from "./sqlite/append-journal.ts";
import { SqliteAuthState } from "./sqlite/auth-state.ts";
import { SqliteChannelState } from "./sqlite/channel-state.ts";
import { explain, loadKysely, openSqliteFile, type SqliteOpenOptions } from "./sqlite/connection.ts";
import { SqliteCronState } from "./sqlite/cron-state.ts";
import { FencedTranscript, fencedSqliteRuns } from "./sqlite/fenced.ts";
import { SqliteLeaseFence, SqliteSessionLeases } from "./sqlite/leases.ts";
import { SqliteQueue } from "./sqlite/queue.ts";
import type { RunJournalReplay } from "./sqlite/run-journal.ts";
import { SqliteRuns } from "./sqlite/runs.ts";
import { SqliteSessions } from "./sqlite/sessions.ts";
import { cachingDatabase } from "./sqlite/statement-cache.ts";
import { agentDatabasePath, controlPlanePath, normalizeAgentId, resolveStateDir } from "./state-dir.ts";
import type {
  ForkTranscriptOptions,
  OpenSessionStoreOptions,
  SchemaInfo,
  SqliteSessionStore,
} from "./store-types.ts";
import {
  type AppendReplay,
  createTranscriptIfMissing,
  readOrCreateHeader,
  type SqliteTranscript,
  SqliteTranscriptHandle,
  type TranscriptHeader,
  TranscriptStatements,
  transcriptExists,
} from "./transcript.ts";
import { registerContextReader } from "./transcript-context.ts";

export type {
  ForkTranscriptOptions,
  OpenSessionStoreOptions,
  SchemaInfo,
  SessionStore,
  SqliteSessionStore,
} from "./store-types.ts";

/** Opens (creating and migrating as needed) the SQLite store under the resolved state dir. */
export async function openSessionStore(options: OpenSessionStoreOptions = {}): Promise<SqliteSessionStore> {
  const stateDir = resolveStateDir(options);
  const path = controlPlanePath(stateDir);
  const sqliteOptions = {
    ...(options.durability === undefined ? {} : { durability: options.durability }),
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
    ...(options.walCheckpoint === undefined ? {} : { walCheckpoint: options.walCheckpoint }),
  };
  // An existing empty control plane is refused, not opened as a store with no sessions (database-file-check.ts).
  refuseForeignDatabaseFile(path, "the state dir's sessions and run records");
  // A new file is built with its schema whole; the migration below then finds it current (one read).
  const raw = openSqliteFile(path, sqliteOptions, stateDir, (db) => migrateSqlite(db, path, "controlPlane"));
  try {
    migrateOrExplain(raw, path, "controlPlane");
  } catch (error) {
    raw.close();
    throw error;
  }
  const store = new SqliteStore(
    stateDir,
    path,
    raw,
    sqliteOptions,
    options.controlPlaneQueries ?? "prepared",
    options.durability !== "full" && (options.appends ?? "journal") === "journal",
  );
  try {
    await store.recover();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

function migrateOrExplain(raw: Database.Database, path: string, part: "controlPlane" | "agent"): void {
  try {
    migrateSqlite(raw, path, part);
  } catch (error) {
    if (error instanceof SessionStoreError) throw error;
    throw new StoreOpenError(path, explain(error), { cause: error });
  }
}

/**
 * A stand-in for a Kysely instance that makes the real one on first use. Methods are bound to the real
 * instance, so Kysely's own `this` (and its private state) is never the stand-in.
 */
function lazyKysely<DB>(make: () => Kysely<DB>): Kysely<DB> {
  return new Proxy({} as Kysely<DB>, {
    get(_target, property) {
      const real = make();
      const value: unknown = Reflect.get(real, property, real);
      return typeof value === "function" ? value.bind(real) : value;
    },
  });
}

/** How often an open store looks for append journals left by processes that died (see #scanForGoneJournals). */
const JOURNAL_SCAN_MS = 5000;

interface AgentDatabase {
  readonly raw: Database.Database;
  readonly path: string;
  readonly statements: TranscriptStatements;
}

class SqliteStore implements SqliteSessionStore {
  readonly stateDir: string;
  readonly controlPlanePath: string;
  readonly sessions: SessionsApi;
  readonly runs: KyselyRuns;
  readonly auth: AuthStateApi;
  readonly queue: QueueApi;
  readonly cron: CronStateApi;
  readonly channelState: ChannelStateApi;
  readonly leases: SqliteSessionLeases;
  recoveredRuns: readonly RunRecord[] = [];
  readonly recoveredAppends: AppendReplay[] = [];
  readonly #raw: Database.Database;
  readonly #journalAppends: boolean;
  #journalScan: ReturnType<typeof setInterval> | undefined;
  readonly #unreadableJournals = new Set<string>();
  readonly #db: Kysely<ControlPlaneDatabase>;
  #kysely: Kysely<ControlPlaneDatabase> | undefined;
  readonly #owner: RunOwner;
  readonly #sqliteOptions: SqliteOpenOptions;
  readonly #agents = new Map<string, AgentDatabase>();
  readonly #fence: SqliteLeaseFence;
  /** Per transcript (agent, session): the lease its writes are fenced with, while a turn holds it. */
  readonly #fencedTranscripts = new Map<string, SessionLease>();
  #closed = false;

  constructor(
    stateDir: string,
    path: string,
    raw: Database.Database,
    sqliteOptions: SqliteOpenOptions,
    queries: "prepared" | "kysely",
    journalAppends: boolean,
  ) {
    this.stateDir = stateDir;
    this.#journalAppends = journalAppends;
    this.controlPlanePath = path;
    this.#raw = raw;
    this.#sqliteOptions = sqliteOptions;
    // Sessions, auth, queue and cron state, and the calls every turn makes on runs are better-sqlite3
    // statements prepared once (sqlite/*.ts): synchronous, so they never queue behind Kysely's connection
    // lock, whose every release wakes all waiters. Kysely keeps the rest of runs (listing, events, recovery),
    // with each SQL text prepared once, and is the PostgreSQL implementation of all of it. It is made (and
    // Kysely loaded) on the first call that needs it: a store that prepares and runs turns never does.
    this.#db = lazyKysely(() => {
      if (this.#kysely === undefined) {
        const { Kysely, SqliteDialect } = loadKysely();
        this.#kysely = new Kysely<ControlPlaneDatabase>({
          dialect: new SqliteDialect({ database: cachingDatabase(raw) }),
        });
      }
      return this.#kysely;
    });
    this.#owner = newRunOwner(randomUUID());
    registerRunOwner(this.#owner);
    const prepared = queries === "prepared";
    this.sessions = prepared ? new SqliteSessions(raw) : new KyselySessions(this.#db);
    this.runs = prepared ? new SqliteRuns(this.#db, raw, this.#owner) : new KyselyRuns(this.#db, this.#owner);
    this.auth = prepared ? new SqliteAuthState(raw) : new KyselyAuthState(this.#db);
    this.queue = prepared ? new SqliteQueue(raw) : new KyselyQueue(this.#db);
    this.cron = prepared ? new SqliteCronState(raw) : new KyselyCronState(this.#db);
    this.channelState = prepared ? new SqliteChannelState(raw) : new KyselyChannelState(this.#db);
    // A released lease fences nothing any more: the session's writes between turns are nobody's turn.
    this.leases = new SqliteSessionLeases(raw, (released) => {
      for (const [key, lease] of this.#fencedTranscripts) {
        if (lease.sessionKey === released.sessionKey && lease.token === released.token) {
          this.#fencedTranscripts.delete(key);
        }
      }
    });
    this.#fence = new SqliteLeaseFence(raw);
    if (journalAppends && this.runs instanceof SqliteRuns) this.runs.enableJournal(path);
  }

  get recoveredRunWrites(): readonly RunJournalReplay[] {
    return this.runs instanceof SqliteRuns ? this.runs.replayed : [];
  }

  fencedRuns(lease: SessionLease): RunsApi {
    return fencedSqliteRuns(this.#raw, this.#fence, this.runs, lease);
  }

  async recover(): Promise<void> {
    // The run journals of processes that stopped before folding them first: a run they finished is final,
    // not interrupted.
    if (this.runs instanceof SqliteRuns) this.runs.beforeRead();
    // The common case, no run left running, answered by one indexed read (runs_by_status).
    if (this.#raw.prepare("SELECT 1 FROM runs WHERE status = 'running' LIMIT 1").get() === undefined) return;
    this.recoveredRuns = await this.runs.recoverInterrupted();
  }

  agentDatabasePath(agentId: string): string {
    return agentDatabasePath(this.stateDir, agentId);
  }

  memoryDatabase(agentId: string): MemoryDatabase {
    return this.#agent(agentId).raw;
  }

  openTranscript(
    agentId: string,
    sessionId: string,
    init?: { readonly header: TranscriptHeader },
  ): SqliteTranscript {
    const agent = this.#agent(agentId);
    if (init !== undefined && init.header.id !== sessionId) {
      throw new SessionStoreError(
        `transcript header id ${init.header.id} does not match session id ${sessionId}`,
      );
    }
    const key = normalizeAgentId(agentId);
    const header = readOrCreateHeader(agent.statements, key, sessionId, init?.header);
    if (header === undefined) throw new TranscriptNotFoundError(agentId, sessionId);
    const handle = new SqliteTranscriptHandle(agent.statements, key, sessionId, header);
    const fenced = new FencedTranscript(
      handle,
      this.#fence,
      this.#fencedTranscripts,
      `${key}\u0000${sessionId}`,
    );
    registerContextReader(fenced, handle);
    return fenced;
  }

  hasTranscript(agentId: string, sessionId: string): boolean {
    return transcriptExists(this.#agent(agentId).statements, sessionId);
  }

  forkTranscript(agentId: string, fromSessionId: string, options: ForkTranscriptOptions): SqliteTranscript {
    const source = this.openTranscript(agentId, fromSessionId);
    const sourceHeader = source.getHeader();
    const branch = source.getBranch(options.leafId);
    const header: TranscriptHeader = {
      type: "session",
      version: sourceHeader?.version ?? 3,
      id: options.sessionId,
      timestamp: options.timestamp ?? new Date().toISOString(),
      cwd: options.cwd ?? sourceHeader?.cwd ?? "",
      parentSession: fromSessionId,
    };
    const agent = this.#agent(agentId);
    const create = agent.raw.transaction(() => {
      if (transcriptExists(agent.statements, options.sessionId)) {
        throw new SessionStoreError(
          `cannot fork into session ${options.sessionId}: it already has a transcript`,
        );
      }
      createTranscriptIfMissing(agent.statements, normalizeAgentId(agentId), header);
    });
    create.immediate();
    const fork = this.openTranscript(agentId, options.sessionId);
    fork.appendMany(branch);
    return fork;
  }

  /**
   * Nothing to load (SQLite transcripts read the file on every call); with `lease`, the transcript's handles
   * opened from now on check it before each write, until a load without one.
   */
  async loadTranscript(
    agentId: string,
    sessionId: string,
    options: LoadTranscriptOptions = {},
  ): Promise<void> {
    const key = `${normalizeAgentId(agentId)}\u0000${sessionId}`;
    if (options.lease === undefined) this.#fencedTranscripts.delete(key);
    else this.#fencedTranscripts.set(key, options.lease);
  }

  /** Folds the journaled appends into SQLite (they are durable already). */
  async flush(): Promise<void> {
    // Every database folds even when an earlier one fails or reports a refusal; the first error is thrown.
    let failure: unknown;
    try {
      if (this.runs instanceof SqliteRuns) this.runs.beforeWrite();
    } catch (error) {
      failure = error;
    }
    for (const agent of this.#agents.values()) {
      try {
        agent.statements.fold();
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
  }

  async durable(): Promise<void> {
    let failure: unknown;
    try {
      if (this.runs instanceof SqliteRuns) this.runs.reportRefusals();
    } catch (error) {
      failure = error;
    }
    for (const agent of this.#agents.values()) {
      try {
        agent.statements.reportRefusals();
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
  }

  async schema(): Promise<SchemaInfo> {
    const applied = listAppliedMigrations(this.#raw);
    return {
      version: applied.reduce((max, m) => Math.max(max, m.version), 0),
      latestVersion: LATEST_SCHEMA_VERSION,
      applied,
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#journalScan);
    // A journal whose fold fails stays on disk: the owner is unregistered below, so the next open replays it.
    let foldFailure: unknown;
    for (const agent of this.#agents.values()) {
      try {
        agent.statements.closeJournal();
      } catch (error) {
        foldFailure ??= error;
      }
    }
    try {
      if (this.runs instanceof SqliteRuns) this.runs.closeJournal();
    } catch (error) {
      foldFailure ??= error;
    }
    // Leases still held (kept between turns): released once what they covered is folded, unless it is not.
    if (foldFailure === undefined) await this.leases.releaseHeld();
    unregisterRunOwner(this.#owner);
    for (const agent of this.#agents.values()) agent.raw.close();
    this.#agents.clear();
    // Destroying Kysely closes the connection once Kysely has used it; otherwise the store closes it.
    await this.#kysely?.destroy();
    if (this.#raw.open) this.#raw.close();
    if (foldFailure !== undefined) throw foldFailure;
  }

  #agent(agentId: string): AgentDatabase {
    if (this.#closed) throw new SessionStoreError("the session store is closed");
    const key = normalizeAgentId(agentId);
    const cached = this.#agents.get(key);
    if (cached !== undefined) return cached;
    const path = agentDatabasePath(this.stateDir, key);
    // An existing empty file is refused, not opened as a new empty history (database-file-check.ts).
    refuseForeignDatabaseFile(path);
    const raw = openSqliteFile(path, this.#sqliteOptions, this.stateDir, (db) =>
      migrateSqlite(db, path, "agent"),
    );
    try {
      migrateOrExplain(raw, path, "agent");
    } catch (error) {
      raw.close();
      throw error;
    }
    const agent = { raw, path, statements: new TranscriptStatements(raw, path) };
    try {
      this.#replayGoneJournals(agent);
    } catch (error) {
      raw.close();
      throw new StoreOpenError(path, `cannot replay an append journal: ${explain(error)}`, { cause: error });
    }
    if (this.#journalAppends) agent.statements.enableJournal(path, this.#owner);
    this.#agents.set(key, agent);
    this.#scanForGoneJournals();
    return agent;
  }

  /**
   * Replays the append journals next to an agent database whose owner is gone (a live owner folds its own).
   * A journal that cannot be read (another user's) is reported once and left alone.
   */
  #replayGoneJournals(agent: AgentDatabase): void {
    for (const journal of listJournals(agent.path)) {
      if (isRunOwnerAlive(journal.owner) || this.#unreadableJournals.has(journal.path)) continue;
      const replay = agent.statements.replayJournal(journal);
      if (replay === undefined) continue;
      if (replay.problems[0]?.line === 0) this.#unreadableJournals.add(journal.path);
      this.recoveredAppends.push(replay);
    }
  }

  /**
   * While the store is open, every `JOURNAL_SCAN_MS` the open agent databases are checked for journals of
   * processes that died since (a crashed CLI next to a long-lived gateway), so their entries show up here
   * within seconds instead of at the next open. Unref'd: it never keeps a process alive.
   */
  #scanForGoneJournals(): void {
    if (this.#journalScan !== undefined || !this.#journalAppends) return;
    this.#journalScan = setInterval(() => {
      for (const agent of this.#agents.values()) {
        try {
          this.#replayGoneJournals(agent);
        } catch {
          // Busy or unreadable now: the next scan, or the next open, tries again.
        }
      }
    }, JOURNAL_SCAN_MS);
    this.#journalScan.unref();
  }
}
