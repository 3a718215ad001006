// The transcript on PostgreSQL: a write-through buffer. pi's SessionManager (and so the `Transcript` contract)
// is synchronous, PostgreSQL is not, so a transcript is loaded into memory first (`store.loadTranscript`,
// async), then every call is answered from memory and every change applied there synchronously and queued;
// `flush()` writes the queued changes in order in one transaction (header, entries by position, leaf), fenced
// by the session's lease when the load bound one. A flush is also started in the background after each
// burst of synchronous changes. Owns: the in-memory tree, the same append/leaf rules as SQLite
// (../transcript.ts), the queue, the sticky flush error. Does not own: loading (./store.ts) or leases.
//
// Durability: an entry is durable once a `flush()` that started after it resolved. A flush error is sticky:
// it is thrown by `flush()` and by every later call on the transcript, until `loadTranscript` reloads it
// from the database (dropping the changes that failed).
import { type Kysely, sql } from "kysely";
import { SessionStoreError, TranscriptConflictError } from "../errors.ts";
import {
  assertEntryShape,
  canonicalJson,
  type Transcript,
  type TranscriptEntry,
  type TranscriptEntryDraft,
  type TranscriptHeader,
} from "../transcript.ts";
import { assertFence, type SessionLease } from "./leases.ts";

/** What the PostgreSQL transcript offers beyond the contract. */
export interface PostgresTranscript extends Transcript {
  /** Appends `draft` as a child of the current (in-memory) leaf; returns the stored entry. */
  appendAtLeaf(draft: TranscriptEntryDraft): TranscriptEntry;
  /** All or nothing, each with `append`'s rules. */
  appendMany(entries: readonly TranscriptEntry[]): void;
  /** Writes every change made so far; resolves once they are durable. Rejects with the sticky flush error. */
  flush(): Promise<void>;
  /** Changes not yet durable (entries, and 1 for a header or leaf move). */
  pendingChanges(): number;
}

/** A flush failed for a reason other than a store error of its own (connection lost, server down, ...). */
export class TranscriptFlushError extends SessionStoreError {
  override readonly name = "TranscriptFlushError";
}

/** Thrown by synchronous transcript calls on PostgreSQL for a transcript the store has not loaded. */
export class TranscriptNotLoadedError extends SessionStoreError {
  override readonly name = "TranscriptNotLoadedError";
  constructor(agentId: string, sessionId: string) {
    super(
      `transcript ${agentId}/${sessionId} is not loaded: on PostgreSQL, await store.loadTranscript(${JSON.stringify(agentId)}, ` +
        `${JSON.stringify(sessionId)}) before using it (transcript calls are synchronous and answered from memory)`,
    );
  }
}

/** One loaded session: shared by every handle `openTranscript` returns for it. */
export class TranscriptBuffer {
  readonly agentId: string;
  readonly sessionId: string;
  header: TranscriptHeader;
  readonly entries: TranscriptEntry[] = [];
  readonly bodies: string[] = [];
  readonly positions = new Map<string, number>();
  leafId: string | null = null;
  persistedCount = 0;
  persistedLeafId: string | null = null;
  headerPersisted: boolean;
  fence: SessionLease | undefined;
  failure: Error | undefined;
  readonly #db: Kysely<unknown>;
  readonly #isClosed: () => boolean;
  #chain: Promise<void> = Promise.resolve();
  #scheduled = false;

  constructor(
    db: Kysely<unknown>,
    agentId: string,
    sessionId: string,
    header: TranscriptHeader,
    headerPersisted: boolean,
    isClosed: () => boolean,
  ) {
    this.#db = db;
    this.agentId = agentId;
    this.sessionId = sessionId;
    this.header = header;
    this.headerPersisted = headerPersisted;
    this.#isClosed = isClosed;
  }

  /** Replaces the memory with what the database holds (rows at positions ≥ `from` are appended). */
  applyLoaded(
    rows: readonly { position: number; body: string }[],
    leafId: string | null,
    from: number,
  ): void {
    if (from === 0) {
      this.entries.length = 0;
      this.bodies.length = 0;
      this.positions.clear();
    } else {
      this.entries.length = from;
      this.bodies.length = from;
    }
    for (const row of rows) {
      if (row.position !== this.entries.length) {
        throw new SessionStoreError(
          `transcript ${this.agentId}/${this.sessionId}: stored positions are not contiguous (expected ${this.entries.length}, found ${row.position})`,
        );
      }
      const entry = deepFreeze(JSON.parse(row.body) as TranscriptEntry);
      this.positions.set(entry.id, this.entries.length);
      this.entries.push(entry);
      this.bodies.push(row.body);
    }
    this.leafId = leafId;
    this.persistedCount = this.entries.length;
    this.persistedLeafId = leafId;
    this.headerPersisted = true;
    this.failure = undefined;
  }

  check(): void {
    if (this.#isClosed()) throw new SessionStoreError("the session store is closed");
    if (this.failure !== undefined) throw this.failure;
  }

  pendingChanges(): number {
    return (
      this.entries.length -
      this.persistedCount +
      (this.headerPersisted ? 0 : 1) +
      (this.leafId === this.persistedLeafId ? 0 : 1)
    );
  }

  /** Applies `entry` in memory (SQLite's rules); returns without queueing when it is an identical repeat. */
  add(entry: TranscriptEntry): void {
    assertEntryShape(entry);
    const body = JSON.stringify(entry);
    const existing = this.positions.get(entry.id);
    if (existing !== undefined) {
      const stored = this.entries[existing];
      if (canonicalJson(stored) !== canonicalJson(JSON.parse(body))) {
        throw new TranscriptConflictError(
          `entry ${entry.id} already exists in session ${this.sessionId} with different content`,
        );
      }
      // An identical repeat is a no-op for the tree but, like any append, moves the leaf to the entry.
      this.leafId = entry.id;
      return;
    }
    if (entry.parentId !== null && !this.positions.has(entry.parentId)) {
      throw new TranscriptConflictError(
        `cannot append entry ${entry.id} to session ${this.sessionId}: its parent ${entry.parentId} does not exist`,
      );
    }
    this.positions.set(entry.id, this.entries.length);
    this.entries.push(deepFreeze(JSON.parse(body) as TranscriptEntry));
    this.bodies.push(body);
    this.leafId = entry.id;
  }

  /** Undoes `add`s back to `count` entries (a failed `appendMany`); never below what is durable. */
  truncate(count: number, leafId: string | null): void {
    for (let at = this.entries.length - 1; at >= count && at >= this.persistedCount; at--) {
      const entry = this.entries[at];
      if (entry !== undefined) this.positions.delete(entry.id);
    }
    this.entries.length = Math.max(count, this.persistedCount);
    this.bodies.length = this.entries.length;
    this.leafId = leafId;
  }

  /** Starts a background flush after the current synchronous burst; its failure becomes the sticky error. */
  schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      if (!this.#isClosed()) this.flush().catch(() => {});
    });
  }

  /** Flushes run one at a time, each writing what was queued when it started. */
  flush(): Promise<void> {
    const run = this.#chain.then(() => this.#flushOnce());
    this.#chain = run.catch(() => {});
    return run;
  }

  /** Waits for flushes in progress without starting one (and without their errors). */
  settled(): Promise<void> {
    return this.#chain;
  }

  async #flushOnce(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const from = this.persistedCount;
    const to = this.entries.length;
    const leafId = this.leafId;
    const writeHeader = !this.headerPersisted;
    if (from === to && leafId === this.persistedLeafId && !writeHeader) return;
    const fence = this.fence;
    const now = new Date().toISOString();
    try {
      await this.#db.transaction().execute(async (trx) => {
        if (fence !== undefined) {
          await assertFence(trx, fence, `writing transcript ${this.agentId}/${this.sessionId}`);
        }
        if (writeHeader) {
          const created = await sql`
            INSERT INTO transcripts (agent_id, session_id, header, leaf_id, created_at, updated_at)
            VALUES (${this.agentId}, ${this.sessionId}, ${JSON.stringify(this.header)}, NULL, ${now}, ${now})
            ON CONFLICT DO NOTHING`.execute(trx);
          if (Number(created.numAffectedRows ?? 0n) !== 1) {
            throw new TranscriptConflictError(
              `cannot create the transcript of session ${this.sessionId} (agent ${this.agentId}): another writer created it first; reload it`,
            );
          }
        }
        if (to > from) {
          const positions: number[] = [];
          const ids: string[] = [];
          const parents: (string | null)[] = [];
          const types: string[] = [];
          const timestamps: string[] = [];
          const bodies: string[] = [];
          for (let at = from; at < to; at++) {
            const entry = this.entries[at] as TranscriptEntry;
            positions.push(at);
            ids.push(entry.id);
            parents.push(entry.parentId);
            types.push(entry.type);
            timestamps.push(entry.timestamp);
            bodies.push(this.bodies[at] as string);
          }
          // One statement for the whole batch; `position` uniqueness refuses a batch built on a stale view.
          await sql`
            INSERT INTO transcript_entries (agent_id, session_id, position, id, parent_id, type, timestamp, body)
            SELECT ${this.agentId}, ${this.sessionId}, b.position, b.id, b.parent_id, b.type, b.timestamp, b.body
            FROM unnest(${positions}::integer[], ${ids}::text[], ${parents}::text[], ${types}::text[],
                        ${timestamps}::text[], ${bodies}::text[])
              AS b(position, id, parent_id, type, timestamp, body)`.execute(trx);
        }
        await sql`
          UPDATE transcripts SET leaf_id = ${leafId}, updated_at = ${now}
          WHERE agent_id = ${this.agentId} AND session_id = ${this.sessionId}`.execute(trx);
      });
    } catch (error) {
      this.failure =
        error instanceof SessionStoreError
          ? error
          : new TranscriptFlushError(
              `transcript ${this.agentId}/${this.sessionId}: ${to - from} buffered entr${to - from === 1 ? "y" : "ies"} ` +
                `could not be written (${isUniqueViolation(error) ? "another writer appended to this session meanwhile" : describe(error)}); ` +
                "reload it with store.loadTranscript",
              { cause: error },
            );
      throw this.failure;
    }
    this.persistedCount = Math.max(this.persistedCount, to);
    this.persistedLeafId = leafId;
    this.headerPersisted = true;
  }
}

/** A view of one loaded session. */
export class PostgresTranscriptHandle implements PostgresTranscript {
  readonly agentId: string;
  readonly sessionId: string;
  readonly #buffer: TranscriptBuffer;

  constructor(buffer: TranscriptBuffer) {
    this.#buffer = buffer;
    this.agentId = buffer.agentId;
    this.sessionId = buffer.sessionId;
  }

  getHeader(): TranscriptHeader | undefined {
    this.#buffer.check();
    return this.#buffer.header;
  }

  append(entry: TranscriptEntry): void {
    const buffer = this.#buffer;
    buffer.check();
    buffer.add(entry);
    buffer.schedule();
  }

  appendMany(entries: readonly TranscriptEntry[]): void {
    const buffer = this.#buffer;
    buffer.check();
    const count = buffer.entries.length;
    const leafId = buffer.leafId;
    try {
      for (const entry of entries) buffer.add(entry);
    } catch (error) {
      buffer.truncate(count, leafId);
      throw error;
    }
    buffer.schedule();
  }

  appendAtLeaf(draft: TranscriptEntryDraft): TranscriptEntry {
    this.#buffer.check();
    const entry: TranscriptEntry = {
      ...draft,
      type: draft.type,
      id: draft.id,
      timestamp: draft.timestamp,
      parentId: this.#buffer.leafId,
    };
    this.append(entry);
    return this.getEntry(entry.id) ?? entry;
  }

  setLeaf(id: string | null): void {
    const buffer = this.#buffer;
    buffer.check();
    if (id !== null && !buffer.positions.has(id)) {
      throw new TranscriptConflictError(`cannot move the leaf of session ${this.sessionId}: no entry ${id}`);
    }
    buffer.leafId = id;
    buffer.schedule();
  }

  getLeafId(): string | null {
    this.#buffer.check();
    return this.#buffer.leafId;
  }

  getEntry(id: string): TranscriptEntry | undefined {
    const buffer = this.#buffer;
    buffer.check();
    const position = buffer.positions.get(id);
    return position === undefined ? undefined : buffer.entries[position];
  }

  /** An unknown `leafId` (or a null leaf) gives an empty branch, as pi's `getBranch` does. */
  getBranch(leafId?: string | null): TranscriptEntry[] {
    const buffer = this.#buffer;
    buffer.check();
    const branch: TranscriptEntry[] = [];
    let wanted = leafId === undefined ? buffer.leafId : leafId;
    while (wanted !== null) {
      const position = buffer.positions.get(wanted);
      const entry = position === undefined ? undefined : buffer.entries[position];
      if (entry === undefined) break;
      branch.push(entry);
      wanted = entry.parentId;
    }
    return branch.reverse();
  }

  getEntries(): TranscriptEntry[] {
    this.#buffer.check();
    return [...this.#buffer.entries];
  }

  getChildren(parentId: string | null): TranscriptEntry[] {
    this.#buffer.check();
    return this.#buffer.entries.filter((entry) => entry.parentId === parentId);
  }

  count(): number {
    this.#buffer.check();
    return this.#buffer.entries.length;
  }

  flush(): Promise<void> {
    if (this.#buffer.failure !== undefined) return Promise.reject(this.#buffer.failure);
    return this.#buffer.flush();
  }

  pendingChanges(): number {
    return this.#buffer.pendingChanges();
  }
}

/** Entries are shared between every reader of a session, so they are frozen (as on SQLite). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && "code" in error && error.code === "23505";
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
