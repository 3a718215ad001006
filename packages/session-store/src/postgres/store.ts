// The PostgreSQL session store. Owns: opening (connect, migrate, recover interrupted runs), the Kysely API
// classes over PostgreSQL (sessions, runs, auth, queue, cron: the same implementations the SQLite store can
// use), loading transcripts into the write-through buffer (./transcript.ts) and flushing them, leases and
// fenced run writes, and closing (which flushes). Does not own: the SQL of any API (../*.ts), the buffer's
// rules (./transcript.ts) or leases (./leases.ts).
import { randomUUID } from "node:crypto";
import { type Kysely, sql, type Transaction } from "kysely";
import { type AuthStateApi, KyselyAuthState } from "../auth-state.ts";
import { type ChannelStateApi, KyselyChannelState } from "../channel-state.ts";
import { type CronStateApi, KyselyCronState } from "../cron-state.ts";
import { SessionStoreError, TranscriptNotFoundError } from "../errors.ts";
import type { LeasingSessionStore, LoadTranscriptOptions } from "../leases.ts";
import type { AppliedMigration } from "../migrator.ts";
import { KyselyQueue, type QueueApi } from "../queue.ts";
import {
  type FinishRunInput,
  KyselyRuns,
  newRunOwner,
  type RunEvent,
  type RunOwner,
  type RunRecord,
  type RunsApi,
  type RunUpdate,
  registerRunOwner,
  type StartRunInput,
  unregisterRunOwner,
  WritesOwnReadsFrom,
} from "../runs.ts";
import type { ControlPlaneDatabase } from "../schema.ts";
import { KyselySessions, type SessionsApi } from "../sessions.ts";
import { normalizeAgentId } from "../state-dir.ts";
import type { ForkTranscriptOptions, SchemaInfo } from "../store.ts";
import type { TranscriptHeader } from "../transcript.ts";
import { connectPostgres, type PostgresConnection, type PostgresConnectionOptions } from "./connection.ts";
import { assertFence, PostgresSessionLeases, type SessionLease, type SessionLeasesApi } from "./leases.ts";
import {
  listAppliedMigrations,
  migratePostgres,
  POSTGRES_LATEST_SCHEMA_VERSION,
  type PostgresMigrateOptions,
} from "./migrate.ts";
import {
  DEFAULT_STALE_MS,
  type OwnerHeartbeatOptions,
  PostgresRuns,
  pruneOwners,
  startOwnerHeartbeat,
} from "./owners.ts";
import {
  type PostgresTranscript,
  PostgresTranscriptHandle,
  TranscriptBuffer,
  TranscriptNotLoadedError,
} from "./transcript.ts";

export interface OpenPostgresSessionStoreOptions extends PostgresConnectionOptions {
  /**
   * This store's heartbeat in `store_owners` (default every 10 s), and how old another store's heartbeat
   * may be before its running runs are recovered as interrupted on open (default 60 s) — from any host.
   */
  readonly owners?: OwnerHeartbeatOptions;
}

export type { LoadTranscriptOptions };

/** The PostgreSQL store: the `SessionStore` contract plus leases, fencing and the transcript buffer's calls. */
export interface PostgresSessionStore extends LeasingSessionStore {
  /** The schema holding the tables. */
  readonly schemaName: string;
  readonly leases: SessionLeasesApi;
  /**
   * Loads (or refreshes) a transcript into memory so that its synchronous calls work, flushing its own queued
   * changes first. A missing transcript is remembered as missing (`openTranscript` then needs `init`).
   */
  loadTranscript(agentId: string, sessionId: string, options?: LoadTranscriptOptions): Promise<void>;
  /** Writes every transcript's queued changes; rejects with the first failure. */
  flush(): Promise<void>;
  openTranscript(
    agentId: string,
    sessionId: string,
    init?: { readonly header: TranscriptHeader },
  ): PostgresTranscript;
  forkTranscript(agentId: string, fromSessionId: string, options: ForkTranscriptOptions): PostgresTranscript;
  /** Run writes (start, update, appendEvents, finish) refused with `LeaseLostError` unless `lease` is the newest. */
  fencedRuns(lease: SessionLease): RunsApi;
  /** The Kysely instance over the store's schema (for tools and tests; the tables are the store's). */
  readonly db: Kysely<unknown>;
}

/** Opens (creating the schema and migrating as needed) the store in a PostgreSQL database. */
export async function openPostgresSessionStore(
  options: OpenPostgresSessionStoreOptions,
): Promise<PostgresSessionStore> {
  const connection = connectPostgres(options);
  try {
    await migratePostgres(connection.db, connection.schema, connection.where);
  } catch (error) {
    await connection.close();
    throw error;
  }
  const store = new PostgresStore(connection, options.owners?.staleMs);
  try {
    await store.startHeartbeat(options.owners ?? {});
    store.recoveredRuns = await store.runs.recoverInterrupted();
    await pruneOwners(connection.db, options.owners?.staleMs ?? DEFAULT_STALE_MS);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/**
 * Runs the migrations on their own (a deploy step; `openPostgresSessionStore` runs them too), optionally only up
 * to `targetVersion` (tests build old schemas with it). Returns every applied migration.
 */
export async function migratePostgresSessionStore(
  options: PostgresConnectionOptions & PostgresMigrateOptions,
): Promise<AppliedMigration[]> {
  const connection = connectPostgres(options);
  try {
    const migrate = options.targetVersion === undefined ? {} : { targetVersion: options.targetVersion };
    return await migratePostgres(connection.db, connection.schema, connection.where, migrate);
  } finally {
    await connection.close();
  }
}

/** A transcript known to be missing (as of its last load), with the lease its creation will be fenced by. */
class Missing {
  readonly fence: SessionLease | undefined;
  constructor(fence: SessionLease | undefined) {
    this.fence = fence;
  }
}

class PostgresStore implements PostgresSessionStore {
  readonly schemaName: string;
  readonly db: Kysely<unknown>;
  readonly sessions: SessionsApi;
  readonly runs: PostgresRuns;
  readonly auth: AuthStateApi;
  readonly queue: QueueApi;
  readonly cron: CronStateApi;
  readonly channelState: ChannelStateApi;
  readonly leases: SessionLeasesApi;
  recoveredRuns: readonly RunRecord[] = [];
  readonly #typed: Kysely<ControlPlaneDatabase>;
  readonly #owner: RunOwner;
  readonly #transcripts = new Map<string, TranscriptBuffer | Missing>();
  #closed = false;

  readonly #connection: PostgresConnection;

  #heartbeat: { stop(): Promise<void> } | undefined;

  constructor(connection: PostgresConnection, ownerStaleMs: number | undefined) {
    const db = connection.db;
    this.#connection = connection;
    this.db = db;
    this.schemaName = connection.schema;
    this.#typed = db as Kysely<ControlPlaneDatabase>;
    this.#owner = newRunOwner(randomUUID());
    registerRunOwner(this.#owner);
    this.sessions = new KyselySessions(this.#typed);
    this.runs = new PostgresRuns(this.#typed, this.#owner, ownerStaleMs);
    this.auth = new KyselyAuthState(this.#typed);
    this.queue = new KyselyQueue(this.#typed);
    this.cron = new KyselyCronState(this.#typed);
    this.channelState = new KyselyChannelState(this.#typed);
    this.leases = new PostgresSessionLeases(db);
  }

  async startHeartbeat(options: OwnerHeartbeatOptions): Promise<void> {
    this.#heartbeat = await startOwnerHeartbeat(this.db, this.#owner, options);
  }

  async loadTranscript(
    agentId: string,
    sessionId: string,
    options: LoadTranscriptOptions = {},
  ): Promise<void> {
    this.#assertOpen();
    const agent = normalizeAgentId(agentId);
    const key = transcriptKey(agent, sessionId);
    const known = this.#transcripts.get(key);
    for (;;) {
      let from = 0;
      if (known instanceof TranscriptBuffer) {
        // Its own queued changes first; a failure already reported (sticky) is dropped by the reload below.
        await known.settled();
        if (known.failure === undefined) await known.flush();
        if (known.failure === undefined) from = known.persistedCount;
      }
      // One statement, so one snapshot: the header row (position -1, carrying the leaf) and the entries from
      // `from` on agree with each other even while another process flushes.
      const { rows } = await sql<{ position: number; body: string; leaf_id: string | null }>`
        SELECT -1 AS position, header AS body, leaf_id FROM transcripts
        WHERE agent_id = ${agent} AND session_id = ${sessionId}
        UNION ALL
        SELECT position, body, NULL FROM transcript_entries
        WHERE agent_id = ${agent} AND session_id = ${sessionId} AND position >= ${from}
        ORDER BY position`.execute(this.db);
      const [head, ...entries] = rows;
      // Appended to while the read was in flight: flush those too and read again, never drop them.
      if (known instanceof TranscriptBuffer && known.failure === undefined && known.pendingChanges() > 0)
        continue;
      if (head === undefined || head.position !== -1) {
        if (known instanceof TranscriptBuffer && known.headerPersisted) {
          throw new SessionStoreError(`transcript ${agent}/${sessionId} vanished from the database`);
        }
        this.#transcripts.set(
          key,
          new Missing(options.lease ?? (known instanceof Missing ? known.fence : undefined)),
        );
        return;
      }
      const header = JSON.parse(head.body) as TranscriptHeader;
      const buffer =
        known instanceof TranscriptBuffer
          ? known
          : new TranscriptBuffer(this.db, agent, sessionId, header, true, () => this.#closed);
      if (from === 0) buffer.header = header;
      buffer.applyLoaded(entries, head.leaf_id, from);
      if (options.lease !== undefined) buffer.fence = options.lease;
      this.#transcripts.set(key, buffer);
      return;
    }
  }

  async flush(): Promise<void> {
    const results = await Promise.allSettled(
      [...this.#transcripts.values()].map((buffer) =>
        buffer instanceof Missing
          ? Promise.resolve()
          : buffer.failure === undefined
            ? buffer.flush()
            : Promise.reject(buffer.failure),
      ),
    );
    const failed = results.find((result) => result.status === "rejected");
    if (failed !== undefined) throw failed.reason;
  }

  openTranscript(
    agentId: string,
    sessionId: string,
    init?: { readonly header: TranscriptHeader },
  ): PostgresTranscript {
    this.#assertOpen();
    if (init !== undefined && init.header.id !== sessionId) {
      throw new SessionStoreError(
        `transcript header id ${init.header.id} does not match session id ${sessionId}`,
      );
    }
    const agent = normalizeAgentId(agentId);
    const key = transcriptKey(agent, sessionId);
    const known = this.#transcripts.get(key);
    if (known === undefined) throw new TranscriptNotLoadedError(agent, sessionId);
    if (known instanceof TranscriptBuffer) {
      known.check();
      return new PostgresTranscriptHandle(known);
    }
    if (init === undefined) throw new TranscriptNotFoundError(agentId, sessionId);
    const header = JSON.parse(JSON.stringify(init.header)) as TranscriptHeader;
    const buffer = new TranscriptBuffer(this.db, agent, sessionId, header, false, () => this.#closed);
    buffer.fence = known.fence;
    this.#transcripts.set(key, buffer);
    buffer.schedule();
    return new PostgresTranscriptHandle(buffer);
  }

  hasTranscript(agentId: string, sessionId: string): boolean {
    this.#assertOpen();
    const agent = normalizeAgentId(agentId);
    const known = this.#transcripts.get(transcriptKey(agent, sessionId));
    if (known === undefined) throw new TranscriptNotLoadedError(agent, sessionId);
    return !(known instanceof Missing);
  }

  forkTranscript(agentId: string, fromSessionId: string, options: ForkTranscriptOptions): PostgresTranscript {
    const source = this.openTranscript(agentId, fromSessionId);
    if (this.hasTranscript(agentId, options.sessionId)) {
      throw new SessionStoreError(
        `cannot fork into session ${options.sessionId}: it already has a transcript`,
      );
    }
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
    const fork = this.openTranscript(agentId, options.sessionId, { header });
    fork.appendMany(branch);
    return fork;
  }

  fencedRuns(lease: SessionLease): RunsApi {
    return new FencedRuns(this.#typed, this.#owner, this.runs, lease);
  }

  async schema(): Promise<SchemaInfo> {
    const applied = await listAppliedMigrations(this.db, this.schemaName);
    return {
      version: applied.reduce((max, m) => Math.max(max, m.version), 0),
      latestVersion: POSTGRES_LATEST_SCHEMA_VERSION,
      applied,
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    let failure: unknown;
    try {
      await this.flush();
    } catch (error) {
      failure = error;
    }
    // Leases still held (kept between turns): released once the buffered writes are stored, unless they are not.
    if (failure === undefined && this.leases instanceof PostgresSessionLeases)
      await this.leases.releaseHeld();
    this.#closed = true;
    unregisterRunOwner(this.#owner);
    this.#transcripts.clear();
    try {
      await this.#heartbeat?.stop();
    } catch (error) {
      failure ??= error;
    }
    await this.#connection.close();
    if (failure !== undefined) throw failure;
  }

  #assertOpen(): void {
    if (this.#closed) throw new SessionStoreError("the session store is closed");
  }
}

function transcriptKey(agentId: string, sessionId: string): string {
  return `${agentId}\u0000${sessionId}`;
}

/**
 * Runs whose writes each open a transaction, check the lease there first (`assertFence`) and then do the
 * write through the same `KyselyRuns` code on that transaction. Reads go to the plain runs API.
 */
class FencedRuns extends WritesOwnReadsFrom {
  readonly #db: Kysely<ControlPlaneDatabase>;
  readonly #owner: RunOwner;
  readonly #lease: SessionLease;

  constructor(db: Kysely<ControlPlaneDatabase>, owner: RunOwner, plain: RunsApi, lease: SessionLease) {
    super(plain);
    this.#db = db;
    this.#owner = owner;
    this.#lease = lease;
  }

  #fenced<T>(doing: string, write: (runs: KyselyRuns) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute(async (trx) => {
      await assertFence(trx as unknown as Kysely<unknown>, this.#lease, doing);
      return write(new KyselyRuns(joinOuterTransaction(trx), this.#owner));
    });
  }

  start(input: StartRunInput): Promise<RunRecord> {
    return this.#fenced(`starting run ${input.runId}`, (runs) => runs.start(input));
  }
  update(runId: string, update: RunUpdate): Promise<RunRecord> {
    return this.#fenced(`updating run ${runId}`, (runs) => runs.update(runId, update));
  }
  finish(runId: string, input: FinishRunInput): Promise<RunRecord> {
    return this.#fenced(`finishing run ${runId}`, (runs) => runs.finish(runId, input));
  }
  appendEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    return this.#fenced(`appending events to run ${runId}`, (runs) => runs.appendEvents(runId, events));
  }
}

/**
 * The transaction, seen as a Kysely instance whose own `transaction()` joins it instead of opening a nested
 * one (Kysely refuses nesting): `KyselyRuns.appendEvents` opens a transaction of its own.
 */
function joinOuterTransaction<DB>(trx: Transaction<DB>): Kysely<DB> {
  const joined = {
    execute: <T>(body: (inner: Transaction<DB>) => Promise<T>): Promise<T> => body(trx),
  };
  return new Proxy(trx, {
    get(target, property) {
      if (property === "transaction") return () => joined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
