// Fenced writes on SQLite: what a turn holding its session's lease writes through, so that a holder that lost
// the lease (it stalled past its TTL and another process took the session) cannot write any more. Owns: the
// run writes checked against the lease — a journaled write (./run-journal.ts) by a read just before its
// line is written, like a transcript append; a direct one inside the same control-plane write transaction
// (atomic: an acquisition is a write to that file, so it cannot land between the check and the write) — and the transcript
// handle whose writes check the lease first (while a turn holds one). Does not own: the leases (./leases.ts), the runs' rules
// (./runs.ts, ../runs.ts) or the transcript's (../transcript.ts).
//
// Why the transcript check is not in the write's transaction: a session's transcript lives in its agent's
// database, another file. The check reads the lease row just before each write; the remaining window (the
// holder stalls past its TTL exactly between the check and the write, microseconds) is the one PostgreSQL
// closes and SQLite cannot without a write lock on both files per append.
import type Database from "better-sqlite3";
import { RecordNotFoundError } from "../errors.ts";
import type { SessionLease } from "../leases.ts";
import {
  type FinishRunInput,
  type RunEvent,
  type RunRecord,
  type RunsApi,
  type RunUpdate,
  type StartRunInput,
  toRunRecord,
  WritesOwnReadsFrom,
} from "../runs.ts";
import type {
  QuarantinedRow,
  SqliteTranscript,
  TranscriptEntry,
  TranscriptEntryDraft,
  TranscriptHeader,
} from "../transcript.ts";
import type { SqliteLeaseFence } from "./leases.ts";
import { SqliteRuns } from "./runs.ts";

/** Run writes refused with `LeaseLostError` unless `lease` holds its session's newest token. */
export function fencedSqliteRuns(
  db: Database.Database,
  fence: SqliteLeaseFence,
  runs: RunsApi,
  lease: SessionLease,
): RunsApi {
  return runs instanceof SqliteRuns
    ? new FencedSqliteRuns(db, fence, runs, lease)
    : new CheckedRuns(fence, runs, lease);
}

type Guarded = <T>(doing: string, write: () => T) => T;

const guards = new WeakMap<Database.Database, (lease: SessionLease, fence: SqliteLeaseFence) => Guarded>();

/** One IMMEDIATE transaction per write: the fencing check, then the write. Made once per connection. */
function guardFor(db: Database.Database, fence: SqliteLeaseFence, lease: SessionLease): Guarded {
  let make = guards.get(db);
  if (make === undefined) {
    const run = db.transaction((check: () => void, write: () => unknown): unknown => {
      check();
      return write();
    }).immediate;
    make = (held, check) => (doing, write) =>
      run(() => check.assert(held, doing), write) as ReturnType<typeof write>;
    guards.set(db, make);
  }
  return make(lease, fence);
}

class FencedSqliteRuns extends WritesOwnReadsFrom {
  readonly #runs: SqliteRuns;
  readonly #guard: Guarded;
  readonly #fence: SqliteLeaseFence;
  readonly #lease: SessionLease;

  constructor(db: Database.Database, fence: SqliteLeaseFence, runs: SqliteRuns, lease: SessionLease) {
    super(runs);
    this.#runs = runs;
    this.#guard = guardFor(db, fence, lease);
    this.#fence = fence;
    this.#lease = lease;
  }

  // Journaled (./run-journal.ts) when the runs API can: the lease is checked by a read just before the line is
  // written, as a transcript append checks it; otherwise the check and the write in one transaction.

  async start(input: StartRunInput): Promise<RunRecord> {
    const doing = `starting run ${input.runId}`;
    this.#fence.assert(this.#lease, doing);
    const journaled = this.#runs.journalStart(input);
    if (journaled !== undefined) return toRunRecord(journaled);
    this.#runs.beforeWrite(input.runId);
    const row = this.#guard(doing, () => this.#runs.insertRow(input));
    // Not inserted: the same runId again; its rules only read.
    return row === undefined ? this.#runs.start(input) : toRunRecord(row);
  }

  async update(runId: string, update: RunUpdate): Promise<RunRecord> {
    const doing = `updating run ${runId}`;
    this.#fence.assert(this.#lease, doing);
    const journaled = this.#runs.journalUpdate(runId, update);
    if (journaled !== undefined) return toRunRecord(journaled);
    this.#runs.beforeWrite(runId);
    const row = this.#guard(doing, () => this.#runs.updateRow(runId, update));
    if (row === undefined) throw new RecordNotFoundError(`no run ${runId}`);
    return toRunRecord(row);
  }

  async finish(runId: string, input: FinishRunInput): Promise<RunRecord> {
    const doing = `finishing run ${runId}`;
    this.#fence.assert(this.#lease, doing);
    const journaled = this.#runs.journalFinish(runId, input);
    if (journaled !== undefined) return toRunRecord(journaled);
    this.#runs.beforeWrite(runId);
    const row = this.#guard(doing, () => this.#runs.finishRunRow(runId, input));
    return row === undefined ? this.#runs.finishedAlready(runId, input) : toRunRecord(row);
  }

  async appendEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    if (events.length === 0) return;
    const doing = `appending events to run ${runId}`;
    this.#fence.assert(this.#lease, doing);
    if (this.#runs.journalEvents(runId, events)) return;
    this.#runs.beforeWrite(runId);
    this.#guard(doing, () => this.#runs.appendEventsNow(runId, events));
  }
}

/**
 * The store opened with `controlPlaneQueries: "kysely"` (a conformance-testing mode): each write checks the
 * lease first, in its own statement.
 */
class CheckedRuns extends WritesOwnReadsFrom {
  readonly #fence: SqliteLeaseFence;
  readonly #runs: RunsApi;
  readonly #lease: SessionLease;

  constructor(fence: SqliteLeaseFence, runs: RunsApi, lease: SessionLease) {
    super(runs);
    this.#fence = fence;
    this.#runs = runs;
    this.#lease = lease;
  }

  async start(input: StartRunInput): Promise<RunRecord> {
    this.#fence.assert(this.#lease, `starting run ${input.runId}`);
    return this.#runs.start(input);
  }
  async update(runId: string, update: RunUpdate): Promise<RunRecord> {
    this.#fence.assert(this.#lease, `updating run ${runId}`);
    return this.#runs.update(runId, update);
  }
  async finish(runId: string, input: FinishRunInput): Promise<RunRecord> {
    this.#fence.assert(this.#lease, `finishing run ${runId}`);
    return this.#runs.finish(runId, input);
  }
  async appendEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    this.#fence.assert(this.#lease, `appending events to run ${runId}`);
    return this.#runs.appendEvents(runId, events);
  }
}

/**
 * A transcript whose writes (append, appendMany, appendAtLeaf, setLeaf) check, first, the lease its session's
 * turn holds right now (`fences`, by transcript key; looked up at each write, so a handle kept between turns —
 * pi's warm bindings — is fenced by whichever turn uses it, and by none between turns).
 */
export class FencedTranscript implements SqliteTranscript {
  readonly #inner: SqliteTranscript;
  readonly #fence: SqliteLeaseFence;
  readonly #fences: ReadonlyMap<string, SessionLease>;
  readonly #key: string;

  constructor(
    inner: SqliteTranscript,
    fence: SqliteLeaseFence,
    fences: ReadonlyMap<string, SessionLease>,
    key: string,
  ) {
    this.#inner = inner;
    this.#fence = fence;
    this.#fences = fences;
    this.#key = key;
  }

  get agentId(): string {
    return this.#inner.agentId;
  }
  get sessionId(): string {
    return this.#inner.sessionId;
  }

  #check(doing: string): void {
    const lease = this.#fences.get(this.#key);
    if (lease !== undefined) {
      this.#fence.assert(lease, `${doing} to the transcript of session ${this.#inner.sessionId}`);
    }
  }

  append(entry: TranscriptEntry): void {
    this.#check(`appending entry ${entry.id}`);
    this.#inner.append(entry);
  }
  appendMany(entries: readonly TranscriptEntry[]): void {
    this.#check(`appending ${entries.length} entries`);
    this.#inner.appendMany(entries);
  }
  appendAtLeaf(draft: TranscriptEntryDraft): TranscriptEntry {
    this.#check(`appending entry ${draft.id}`);
    return this.#inner.appendAtLeaf(draft);
  }
  setLeaf(id: string | null): void {
    this.#check(`moving the leaf`);
    this.#inner.setLeaf(id);
  }
  getHeader(): TranscriptHeader | undefined {
    return this.#inner.getHeader();
  }
  getLeafId(): string | null {
    return this.#inner.getLeafId();
  }
  getEntry(id: string): TranscriptEntry | undefined {
    return this.#inner.getEntry(id);
  }
  getBranch(leafId?: string | null): TranscriptEntry[] {
    return this.#inner.getBranch(leafId);
  }
  getEntries(): TranscriptEntry[] {
    return this.#inner.getEntries();
  }
  getChildren(parentId: string | null): TranscriptEntry[] {
    return this.#inner.getChildren(parentId);
  }
  count(): number {
    return this.#inner.count();
  }
  syncState(): { readonly count: number; readonly leafId: string | null } {
    return this.#inner.syncState?.() ?? { count: this.#inner.count(), leafId: this.#inner.getLeafId() };
  }
  quarantined(): QuarantinedRow[] {
    return this.#inner.quarantined?.() ?? [];
  }
}
