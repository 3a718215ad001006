// The run journal of one SQLite control plane: what the per-turn run writes (start, update, events, finish)
// go through, like transcript appends go through the append journal (./append-journal.ts) of an agent
// database. Owns: the journal file (one per open store, named after its owner: host, pid and the store's
// token, next to the control plane), a run write as one line in one write(2) (durable against a crash of the
// process when it returns), folding the pending lines into SQLite in one transaction (the group commit, in
// the next event-loop turn, or before any read through this process's store), what a fold refused (reported
// by the next runs call), and applying the journals of other owners before a read (read-through: a reader in
// another process sees a journaled run write that its owner has not folded yet; a gone owner's journal is
// removed once applied). Does not own: the runs' rules for a write that is not journaled (./runs.ts, ../runs.ts)
// or deciding when a write may be journaled (./runs.ts: only for runs this store started and knows).
//
// Why every line can be applied more than once, by anyone, in the file's order: a start inserts or does
// nothing, events insert or do nothing (the same seq with other content is a refusal), an update changes a
// run only while it is running, and a finish only a running run (a run final already with the same status is
// kept, another status is a refusal). A reader applies another owner's file under the write lock, so the
// owner's own fold of the same lines comes wholly before or after it; lines folded before a file's truncation
// are older than every line left in it, so replaying what is left in order ends at the latest state.
import {
  closeSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type Database from "better-sqlite3";
import { PRIVATE_FILE_MODE } from "../private-files.ts";
import { type RunOwner, sameRunEventData } from "../runs.ts";

const SEPARATOR = "+";
/** This many lines pending are folded at once (a process that never leaves its microtasks still folds). */
export const FOLD_RUNS_AT_LINES = 256;

/** `COALESCE(?, column)` values of an update, in `UPDATE_COLUMNS` order (./runs.ts). */
export type JournaledUpdateValues = [
  provider: string | null,
  model: string | null,
  thinkingLevel: string | null,
  fallbackChain: string | null,
  authProfileId: string | null,
  usage: string | null,
  costUsd: number | null,
];

/** One event as stored: its data as the JSON text the row holds. */
export interface JournaledEvent {
  readonly seq: number;
  readonly ts: number;
  readonly stream: string;
  readonly data: string;
}

/** The run row's columns a start inserts (./runs.ts `insertRow` order). */
export type JournaledStart = [
  runId: string,
  agentId: string,
  sessionKey: string,
  sessionId: string,
  entryPoint: string,
  startedAt: number,
  provider: string | null,
  model: string | null,
  thinkingLevel: string | null,
  ownerHost: string,
  ownerPid: number,
  ownerToken: string,
  ownerStartTime: number | null,
  ownerBootId: string | null,
  updatedAt: number,
];

/** One run write as a journal line. */
export type RunOp =
  | { readonly o: "start"; readonly v: JournaledStart }
  | { readonly o: "update"; readonly id: string; readonly v: JournaledUpdateValues; readonly t: number }
  | { readonly o: "events"; readonly id: string; readonly e: readonly JournaledEvent[] }
  | {
      readonly o: "finish";
      readonly id: string;
      readonly v: JournaledUpdateValues;
      readonly s: string;
      readonly at: number;
      readonly r: string | null;
      readonly m: string | null;
      readonly e: readonly JournaledEvent[];
    };

/** What applying a journal could not store, one sentence each. */
export type RunRefusal = string;

/** A journal of another owner applied before a read, or replayed and removed because its owner is gone. */
export interface RunJournalReplay {
  readonly path: string;
  readonly owner: RunOwner;
  readonly applied: number;
  /** Lines that could not be stored or read: a torn last line, a conflicting event, a finish of a final run. */
  readonly problems: readonly { readonly line: number; readonly problem: string }[];
}

/** The statements that apply run writes (prepared once per control-plane connection). */
export class RunOpStatements {
  readonly #insertRun: Database.Statement<unknown[]>;
  readonly #updateRunning: Database.Statement<unknown[]>;
  readonly #finishRunning: Database.Statement<unknown[]>;
  readonly #selectStatus: Database.Statement<[string], { status: string }>;
  readonly #insertEvent: Database.Statement<[string, number, number, string, string]>;
  readonly #selectEvent: Database.Statement<[string, number], { ts: number; stream: string; data: string }>;

  constructor(raw: Database.Database, updateColumns: string) {
    this.#insertRun = raw.prepare(
      "INSERT INTO runs (run_id, agent_id, session_key, session_id, entry_point, status, started_at, provider, " +
        "model, thinking_level, fallback_chain, owner_host, owner_pid, owner_token, owner_start_time, " +
        "owner_boot_id, updated_at) " +
        "VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, '[]', ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING",
    );
    this.#updateRunning = raw.prepare(
      `UPDATE runs SET ${updateColumns}, updated_at = ? WHERE run_id = ? AND status = 'running'`,
    );
    this.#finishRunning = raw.prepare(
      `UPDATE runs SET ${updateColumns}, status = ?, ended_at = ?, error_reason = ?, error_message = ?, ` +
        "updated_at = ? WHERE run_id = ? AND status = 'running'",
    );
    this.#selectStatus = raw.prepare("SELECT status FROM runs WHERE run_id = ?");
    this.#insertEvent = raw.prepare(
      "INSERT INTO run_events (run_id, seq, ts, stream, data) VALUES (?, ?, ?, ?, ?) " +
        "ON CONFLICT (run_id, seq) DO NOTHING",
    );
    this.#selectEvent = raw.prepare("SELECT ts, stream, data FROM run_events WHERE run_id = ? AND seq = ?");
  }

  /** Inside a write transaction: applies one line; undefined, or why it could not be stored. */
  apply(op: RunOp): RunRefusal | undefined {
    switch (op.o) {
      case "start":
        this.#insertRun.run(...op.v);
        return undefined;
      case "update":
        this.#updateRunning.run(...op.v, op.t, op.id);
        return undefined;
      case "events":
        return this.#events(op.id, op.e);
      case "finish": {
        const refused = this.#events(op.id, op.e);
        if (refused !== undefined) return refused;
        const changed = this.#finishRunning.run(...op.v, op.s, op.at, op.r, op.m, op.at, op.id).changes;
        if (changed > 0) return undefined;
        const stored = this.#selectStatus.get(op.id)?.status;
        if (stored === op.s) return undefined;
        return stored === undefined
          ? `run ${op.id} cannot be finished: it does not exist`
          : `run ${op.id} already ended as ${stored}; its journaled finish as ${op.s} was not stored`;
      }
    }
  }

  #events(runId: string, events: readonly JournaledEvent[]): RunRefusal | undefined {
    if (events.length > 0 && this.#selectStatus.get(runId) === undefined)
      return `events of run ${runId} were not stored: the run does not exist`;
    for (const event of events) {
      if (this.#insertEvent.run(runId, event.seq, event.ts, event.stream, event.data).changes > 0) continue;
      const stored = this.#selectEvent.get(runId, event.seq);
      if (
        stored?.ts !== event.ts ||
        stored.stream !== event.stream ||
        !sameRunEventData(stored.data, event.data)
      )
        return `run ${runId} already has a different event with seq ${event.seq}; the journaled one was not stored`;
    }
    return undefined;
  }
}

/** This store's run journal: the lines written and not folded yet. */
export class RunJournal {
  readonly path: string;
  readonly #scheduleFold: () => void;
  #fd: number | undefined;
  #unusable = false;
  #pending: RunOp[] = [];
  #foldScheduled = false;

  constructor(controlPlanePath: string, owner: RunOwner, scheduleFold: () => void) {
    this.path = runJournalPath(controlPlanePath, owner);
    this.#scheduleFold = scheduleFold;
  }

  get pending(): readonly RunOp[] {
    return this.#pending;
  }

  /** True when the pending lines should be folded now rather than in the group commit. */
  get full(): boolean {
    return this.#pending.length >= FOLD_RUNS_AT_LINES;
  }

  /** False when the journal cannot be written (never used again then): the caller commits directly. */
  write(op: RunOp): boolean {
    if (this.#unusable) return false;
    // Encoded once: its length is the bytes to write (a string would be measured, then encoded again).
    const line = Buffer.from(runJournalLine(op));
    try {
      this.#fd ??= openSync(this.path, "a", PRIVATE_FILE_MODE);
      if (writeSync(this.#fd, line) !== line.length) throw new Error("short write");
    } catch {
      // A torn line, if any, is reported by whoever applies this file, and skipped.
      this.#unusable = true;
      return false;
    }
    this.#pending.push(op);
    if (!this.#foldScheduled) {
      this.#foldScheduled = true;
      setImmediate(() => {
        this.#foldScheduled = false;
        this.#scheduleFold();
      });
    }
    return true;
  }

  /** The pending lines are in SQLite: forgets them and empties the file. */
  folded(count: number): void {
    this.#pending = this.#pending.slice(count);
    if (this.#pending.length > 0 || this.#fd === undefined) return;
    try {
      ftruncateSync(this.#fd, 0);
    } catch {
      // Left as it is: applying those lines again stores nothing new.
    }
  }

  /** Closes the file; removes it when nothing is pending (otherwise the next reader or opener applies it). */
  close(): void {
    this.#unusable = true;
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    if (this.#pending.length === 0) {
      try {
        unlinkSync(this.path);
      } catch {
        // Already gone, or a read-only folder: applying it again stores nothing new.
      }
    }
  }
}

/**
 * One run write as its journal line (newline included). An event's data is embedded as the JSON it already is
 * (`"d": {...}`), not as a string of it (`"data": "{\\"...`): serialised once, not escaped a second time.
 */
export function runJournalLine(op: RunOp): string {
  if ((op.o !== "events" && op.o !== "finish") || op.e.length === 0) return `${JSON.stringify(op)}\n`;
  const head = JSON.stringify({ ...op, e: undefined });
  let events = "";
  for (const event of op.e) {
    events +=
      `${events === "" ? "" : ","}{"seq":${JSON.stringify(event.seq)},"ts":${JSON.stringify(event.ts)},` +
      `"stream":${JSON.stringify(event.stream)},"d":${event.data}}`;
  }
  return `${head.slice(0, -1)},"e":[${events}]}\n`;
}

/** An event as a line carries it: its data's text (`data`, older lines) or the data itself (`d`). */
function journaledEventOf(value: unknown): JournaledEvent | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const event = value as { seq?: unknown; ts?: unknown; stream?: unknown; data?: unknown; d?: unknown };
  if (typeof event.seq !== "number" || typeof event.ts !== "number" || typeof event.stream !== "string")
    return undefined;
  const data =
    typeof event.data === "string" ? event.data : "d" in event ? JSON.stringify(event.d) : undefined;
  return data === undefined ? undefined : { seq: event.seq, ts: event.ts, stream: event.stream, data };
}

/** The op read from a line with its events as stored texts; undefined when some event is not one. */
function withStoredEvents(op: RunOp): RunOp | undefined {
  if (op.o !== "events" && op.o !== "finish") return op;
  const events: JournaledEvent[] = [];
  for (const raw of op.e as readonly unknown[]) {
    const event = journaledEventOf(raw);
    if (event === undefined) return undefined;
    events.push(event);
  }
  return { ...op, e: events };
}

function runJournalPath(controlPlanePath: string, owner: RunOwner): string {
  const name = [
    `${basename(controlPlanePath)}-runs`,
    encodeURIComponent(owner.host),
    String(owner.pid),
    encodeURIComponent(owner.token),
  ].join(SEPARATOR);
  return join(dirname(controlPlanePath), `${name}.jsonl`);
}

/** The run journals next to `controlPlanePath` that hold lines (any owner), with the owner each name gives. */
export function listRunJournals(controlPlanePath: string): { path: string; owner: RunOwner }[] {
  const prefix = `${basename(controlPlanePath)}-runs${SEPARATOR}`;
  let names: string[];
  try {
    names = readdirSync(dirname(controlPlanePath));
  } catch {
    return [];
  }
  const journals: { path: string; owner: RunOwner }[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(".jsonl")) continue;
    const [host, pid, token] = name.slice(prefix.length, -".jsonl".length).split(SEPARATOR);
    if (host === undefined || pid === undefined || token === undefined || !/^\d+$/.test(pid)) continue;
    journals.push({
      path: join(dirname(controlPlanePath), name),
      owner: { host: decodeURIComponent(host), pid: Number(pid), token: decodeURIComponent(token) },
    });
  }
  return journals;
}

/** True when the file holds something to apply (a file folded and emptied by its live owner does not). */
export function hasLines(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

/** Reads a run journal: its lines in order; a line that is not a complete run write is a problem, never fatal. */
export function readRunJournal(path: string): {
  ops: { line: number; op: RunOp }[];
  problems: { line: number; problem: string }[];
} {
  const ops: { line: number; op: RunOp }[] = [];
  const problems: { line: number; problem: string }[] = [];
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    problems.push({ line: 0, problem: `cannot read it: ${(error as Error).message}` });
    return { ops, problems };
  }
  text.split("\n").forEach((raw, index) => {
    if (raw === "") return;
    try {
      const parsed = JSON.parse(raw) as RunOp;
      const op = isRunOp(parsed) ? withStoredEvents(parsed) : undefined;
      if (op === undefined) throw new Error("not a run write");
      ops.push({ line: index + 1, op });
    } catch {
      problems.push({ line: index + 1, problem: "not a complete run write (a write cut short?)" });
    }
  });
  return { ops, problems };
}

function isRunOp(value: unknown): value is RunOp {
  if (value === null || typeof value !== "object") return false;
  const op = value as { o?: unknown; id?: unknown; v?: unknown; e?: unknown };
  switch (op.o) {
    case "start":
      return Array.isArray(op.v) && op.v.length === 15;
    case "update":
      return typeof op.id === "string" && Array.isArray(op.v) && op.v.length === 7;
    case "events":
      return typeof op.id === "string" && Array.isArray(op.e);
    case "finish":
      return typeof op.id === "string" && Array.isArray(op.v) && op.v.length === 7 && Array.isArray(op.e);
    default:
      return false;
  }
}
