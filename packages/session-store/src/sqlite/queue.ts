// The SQLite implementation of the queue API: every call as a better-sqlite3 statement prepared once per
// store, with the same rules and errors as `KyselyQueue` (queue.ts, the PostgreSQL path). Owns: those
// statements and claiming in one statement. Does not own: queue modes, debounce or drop policy.
//
// A claim is one `UPDATE ... WHERE item_id = (SELECT ... LIMIT 1) RETURNING *`: SQLite takes the write lock
// before that statement reads, so choosing the oldest available item and claiming it cannot be split by
// another connection, and two workers never hold the same item.
import type Database from "better-sqlite3";
import type { Selectable } from "kysely";
import { RecordNotFoundError } from "../errors.ts";
import {
  assertAlreadyFinished,
  assertSameEnqueue,
  type ClaimInput,
  type EnqueueInput,
  type QueueApi,
  type QueueItem,
  type QueueItemStatus,
  toQueueItem,
} from "../queue.ts";
import type { QueueItemsTable } from "../schema.ts";

type QueueRow = Selectable<QueueItemsTable>;
interface ListFilter {
  readonly agentId: string;
  readonly sessionKey?: string;
  readonly status?: QueueItemStatus;
}

const AVAILABLE =
  "((status = 'pending' AND available_at <= @now) OR (status = 'claimed' AND lease_until < @now))";

export class SqliteQueue implements QueueApi {
  readonly #raw: Database.Database;
  readonly #one: Database.Statement<[string], QueueRow>;
  readonly #insert: Database.Statement<unknown[], QueueRow>;
  readonly #claimInAgent: Database.Statement<[Record<string, unknown>], QueueRow>;
  readonly #claimInSession: Database.Statement<[Record<string, unknown>], QueueRow>;
  readonly #complete: Database.Statement<[number, string, string], QueueRow>;
  readonly #failForGood: Database.Statement<[string, number, string, string], QueueRow>;
  readonly #failForRetry: Database.Statement<[string, number, number, string, string], QueueRow>;
  /** One statement per filter shape (session key given or not, status given or not), prepared on first use. */
  readonly #lists = new Map<string, Database.Statement<unknown[], QueueRow>>();

  constructor(raw: Database.Database) {
    this.#raw = raw;
    this.#one = raw.prepare("SELECT * FROM queue_items WHERE item_id = ?");
    this.#insert = raw.prepare(
      "INSERT INTO queue_items (item_id, agent_id, session_key, kind, payload, status, enqueued_at, " +
        "available_at, attempts, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, 0, ?) " +
        "ON CONFLICT (item_id) DO NOTHING RETURNING *",
    );
    const claim = (sessionFilter: string) =>
      raw.prepare<[Record<string, unknown>], QueueRow>(
        "UPDATE queue_items SET status = 'claimed', claimed_by = @owner, lease_until = @leaseUntil, " +
          "attempts = attempts + 1, updated_at = @now WHERE item_id = (SELECT item_id FROM queue_items " +
          `WHERE agent_id = @agentId${sessionFilter} AND ${AVAILABLE} ORDER BY enqueued_at, item_id LIMIT 1) ` +
          "RETURNING *",
      );
    this.#claimInAgent = claim("");
    this.#claimInSession = claim(" AND session_key = @sessionKey");
    const finish = (set: string) =>
      `UPDATE queue_items SET ${set}, lease_until = NULL, updated_at = ? ` +
      "WHERE item_id = ? AND status = 'claimed' AND claimed_by = ? RETURNING *";
    this.#complete = raw.prepare(finish("status = 'done'"));
    this.#failForGood = raw.prepare(finish("status = 'failed', last_error = ?"));
    this.#failForRetry = raw.prepare(
      finish("status = 'pending', last_error = ?, available_at = ?, claimed_by = NULL"),
    );
  }

  async enqueue(input: EnqueueInput): Promise<QueueItem> {
    const now = input.now ?? Date.now();
    const payload = JSON.stringify(input.payload ?? null);
    const inserted = this.#insert.get(
      input.itemId,
      input.agentId,
      input.sessionKey,
      input.kind,
      payload,
      now,
      input.availableAt ?? now,
      now,
    );
    if (inserted !== undefined) return toQueueItem(inserted);
    const stored = this.#require(input.itemId);
    assertSameEnqueue(stored, input, payload);
    return stored;
  }

  async claimNext(input: ClaimInput): Promise<QueueItem | undefined> {
    const now = input.now ?? Date.now();
    const values = {
      owner: input.owner,
      leaseUntil: now + input.leaseMs,
      now,
      agentId: input.agentId,
      sessionKey: input.sessionKey,
    };
    const row = (input.sessionKey === undefined ? this.#claimInAgent : this.#claimInSession).get(values);
    return row === undefined ? undefined : toQueueItem(row);
  }

  async complete(itemId: string, owner: string): Promise<QueueItem> {
    return this.#finished(itemId, owner, "done", this.#complete.get(Date.now(), itemId, owner));
  }

  async fail(
    itemId: string,
    owner: string,
    error: string,
    options: { readonly retryAt?: number } = {},
  ): Promise<QueueItem> {
    const now = Date.now();
    return options.retryAt === undefined
      ? this.#finished(itemId, owner, "failed", this.#failForGood.get(error, now, itemId, owner))
      : this.#finished(
          itemId,
          owner,
          "pending",
          this.#failForRetry.get(error, options.retryAt, now, itemId, owner),
        );
  }

  async get(itemId: string): Promise<QueueItem | undefined> {
    const row = this.#one.get(itemId);
    return row === undefined ? undefined : toQueueItem(row);
  }

  async list(filter: ListFilter): Promise<QueueItem[]> {
    const parameters: unknown[] = [filter.agentId];
    let shape = "agent_id = ?";
    if (filter.sessionKey !== undefined) {
      shape += " AND session_key = ?";
      parameters.push(filter.sessionKey);
    }
    if (filter.status !== undefined) {
      shape += " AND status = ?";
      parameters.push(filter.status);
    }
    let statement = this.#lists.get(shape);
    if (statement === undefined) {
      statement = this.#raw.prepare(`SELECT * FROM queue_items WHERE ${shape} ORDER BY enqueued_at, item_id`);
      this.#lists.set(shape, statement);
    }
    return statement.all(...parameters).map(toQueueItem);
  }

  /** The updated item, or (nothing updated) the stored one if this is a repeat by the same owner. */
  #finished(
    itemId: string,
    owner: string,
    status: QueueItemStatus,
    updated: QueueRow | undefined,
  ): QueueItem {
    if (updated !== undefined) return toQueueItem(updated);
    const stored = this.#require(itemId);
    assertAlreadyFinished(stored, status, owner);
    return stored;
  }

  #require(itemId: string): QueueItem {
    const row = this.#one.get(itemId);
    if (row === undefined) throw new RecordNotFoundError(`no queue item ${itemId}`);
    return toQueueItem(row);
  }
}
