// The shapes of a session store: what every backend offers (`SessionStore`), what the SQLite one adds
// (`SqliteSessionStore`), and the options it opens with. Owns only these types; the SQLite store itself is
// store.ts, PostgreSQL's is postgres/store.ts.
import type { AuthStateApi } from "./auth-state.ts";
import type { ChannelStateApi } from "./channel-state.ts";
import type { CronStateApi } from "./cron-state.ts";
import type { LeasingSessionStore } from "./leases.ts";
import type { MemoryDatabase } from "./memory-database.ts";
import type { AppliedMigration } from "./migrator.ts";
import type { QueueApi } from "./queue.ts";
import type { RunRecord, RunsApi } from "./runs.ts";
import type { SessionsApi } from "./sessions.ts";
import type { Durability, WalCheckpoint } from "./sqlite/connection.ts";
import type { RunJournalReplay } from "./sqlite/run-journal.ts";
import type { StateDirSource } from "./state-dir.ts";
import type { AppendReplay, SqliteTranscript, Transcript, TranscriptHeader } from "./transcript.ts";

export interface SchemaInfo {
  readonly version: number;
  readonly latestVersion: number;
  readonly applied: readonly AppliedMigration[];
}

export interface ForkTranscriptOptions {
  /** The new session's id. */
  readonly sessionId: string;
  /** Copy the branch ending here (default: the source's current leaf). */
  readonly leafId?: string | null;
  readonly timestamp?: string;
  readonly cwd?: string;
}

/** What every backend offers. Transcript calls are synchronous; everything else is async. */
export interface SessionStore {
  readonly sessions: SessionsApi;
  readonly runs: RunsApi;
  readonly auth: AuthStateApi;
  readonly queue: QueueApi;
  readonly cron: CronStateApi;
  /** Chat-channel key-value state: pairing, dedupe marks, poll offsets (channel-state.ts). */
  readonly channelState: ChannelStateApi;
  /** Creates the transcript when `init` is given and it does not exist; throws `TranscriptNotFoundError` otherwise. */
  openTranscript(
    agentId: string,
    sessionId: string,
    init?: { readonly header: TranscriptHeader },
  ): Transcript;
  hasTranscript(agentId: string, sessionId: string): boolean;
  /** A new transcript holding a copy of one branch of another (ids kept), its header naming the parent session. */
  forkTranscript(agentId: string, fromSessionId: string, options: ForkTranscriptOptions): Transcript;
  /**
   * Makes one transcript's synchronous calls answerable before a turn uses it. SQLite: nothing to do (every
   * call reads the file). PostgreSQL: loads (or refreshes) it into the write-through buffer; without it,
   * `openTranscript`/`hasTranscript` throw `TranscriptNotLoadedError`.
   */
  loadTranscript(agentId: string, sessionId: string): Promise<void>;
  /**
   * Resolves once every transcript change made so far is durable and stored for other processes to read.
   * SQLite: an append is durable when it returns (its journal line, or its commit); this folds the journaled
   * appends into SQLite, which otherwise happens at the end of the current synchronous burst. PostgreSQL:
   * writes the buffered changes (a turn must await this before it reports success).
   */
  flush(): Promise<void>;
  /**
   * Resolves once every transcript change made so far is durable, without waiting for other processes to be
   * able to read it (what a turn awaits before it reports success). SQLite: at once — an append is durable
   * when it returns (its journal line) — throwing a refusal a fold found that no call has reported yet;
   * SQLite receives the entries in the group commit that follows. Absent: `flush()` is the way.
   */
  durable?(): Promise<void>;
  /** The control plane's schema version and applied migrations. */
  schema(): Promise<SchemaInfo>;
  /** Runs marked `interrupted` when this store was opened. */
  readonly recoveredRuns: readonly RunRecord[];
  close(): Promise<void>;
}

export interface SqliteSessionStore extends LeasingSessionStore {
  readonly stateDir: string;
  /**
   * Append journals of processes that stopped before folding them, replayed into an agent's database when
   * this store opened it (agent databases open on first use, so this grows as they do).
   */
  readonly recoveredAppends: readonly AppendReplay[];
  readonly controlPlanePath: string;
  /**
   * Run journals (sqlite/run-journal.ts) of processes that stopped before folding them, applied and removed
   * by this store — when it opened, or before a runs read — with the lines it could not store.
   */
  readonly recoveredRunWrites: readonly RunJournalReplay[];
  agentDatabasePath(agentId: string): string;
  /**
   * The agent's database connection, for its memory index (memory-database.ts: the index's own tables, made
   * on its first search). Opens (and migrates) the agent's database as its first transcript would.
   */
  memoryDatabase(agentId: string): MemoryDatabase;
  openTranscript(
    agentId: string,
    sessionId: string,
    init?: { readonly header: TranscriptHeader },
  ): SqliteTranscript;
  forkTranscript(agentId: string, fromSessionId: string, options: ForkTranscriptOptions): SqliteTranscript;
}

export interface OpenSessionStoreOptions extends StateDirSource {
  /** See `Durability`: `normal` (default) survives a process crash, `full` also a power loss. */
  readonly durability?: Durability;
  readonly busyTimeoutMs?: number;
  /** See `WalCheckpoint`: `background` (default) or SQLite's own `on-commit`. */
  readonly walCheckpoint?: WalCheckpoint;
  /**
   * How a transcript append becomes durable. `journal` (the default with durability `normal`): one line
   * written to this store's append journal next to the agent's database (durable against a process crash
   * when `append` returns, like pi's JSONL), folded into SQLite with the rest of the synchronous burst, or
   * earlier when anything in this process reads or writes that database; other processes see the entry
   * after the fold, and the next open replays the journal of a process that died first. `commit`: every
   * append is its own SQLite commit, visible to other processes when it returns (about 3× the cost).
   * Durability `full` always commits (and fsyncs) each append.
   */
  readonly appends?: "journal" | "commit";
  /**
   * `prepared` (the default): sessions, auth, queue and cron state and the per-turn run calls are
   * better-sqlite3 statements prepared once. `kysely`: every control-plane call goes through the Kysely
   * implementation PostgreSQL uses — slower under concurrency (Kysely's connection lock); it exists so the
   * conformance suite checks that implementation on SQLite too.
   */
  readonly controlPlaneQueries?: "prepared" | "kysely";
}
