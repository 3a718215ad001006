// Queue items: messages waiting for a session's lane (followups, collected inbound messages). Owns: keyed
// enqueue (idempotent by itemId), claiming the oldest available item with a lease (compare-and-set, so two
// workers never hold the same item), completion and failure with retry. Does not own: queue modes,
// debounce or drop policy (the kernel and apps decide those).
import type { Kysely, Selectable } from "kysely";
import { IdempotencyConflictError, RecordNotFoundError } from "./errors.ts";
import type { ControlPlaneDatabase, QueueItemsTable } from "./schema.ts";

export type QueueItemStatus = "pending" | "claimed" | "done" | "failed";

export interface QueueItem {
  readonly itemId: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly kind: string;
  readonly payload: unknown;
  readonly status: QueueItemStatus;
  readonly enqueuedAt: number;
  readonly availableAt: number;
  readonly attempts: number;
  readonly claimedBy?: string;
  readonly leaseUntil?: number;
  readonly lastError?: string;
}

export interface EnqueueInput {
  readonly itemId: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly kind: string;
  readonly payload: unknown;
  readonly availableAt?: number;
  readonly now?: number;
}

export interface ClaimInput {
  readonly agentId: string;
  readonly sessionKey?: string;
  readonly owner: string;
  readonly leaseMs: number;
  readonly now?: number;
}

export interface QueueApi {
  /** Enqueueing the same itemId again with the same content returns the stored item; other content throws. */
  enqueue(input: EnqueueInput): Promise<QueueItem>;
  /** The oldest available item (pending, or claimed with an expired lease), now claimed by `owner`. */
  claimNext(input: ClaimInput): Promise<QueueItem | undefined>;
  complete(itemId: string, owner: string): Promise<QueueItem>;
  /** Back to pending at `retryAt`, or `failed` for good when `retryAt` is absent. */
  fail(
    itemId: string,
    owner: string,
    error: string,
    options?: { readonly retryAt?: number },
  ): Promise<QueueItem>;
  get(itemId: string): Promise<QueueItem | undefined>;
  /** In enqueue order. */
  list(filter: {
    readonly agentId: string;
    readonly sessionKey?: string;
    readonly status?: QueueItemStatus;
  }): Promise<QueueItem[]>;
}

export class KyselyQueue implements QueueApi {
  readonly #db: Kysely<ControlPlaneDatabase>;

  constructor(db: Kysely<ControlPlaneDatabase>) {
    this.#db = db;
  }

  async enqueue(input: EnqueueInput): Promise<QueueItem> {
    const now = input.now ?? Date.now();
    const payload = JSON.stringify(input.payload ?? null);
    await this.#db
      .insertInto("queue_items")
      .values({
        item_id: input.itemId,
        agent_id: input.agentId,
        session_key: input.sessionKey,
        kind: input.kind,
        payload,
        status: "pending",
        enqueued_at: now,
        available_at: input.availableAt ?? now,
        attempts: 0,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.column("item_id").doNothing())
      .execute();
    const stored = await this.#require(input.itemId);
    assertSameEnqueue(stored, input, payload);
    return stored;
  }

  async claimNext(input: ClaimInput): Promise<QueueItem | undefined> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const now = input.now ?? Date.now();
      let query = this.#db
        .selectFrom("queue_items")
        .select(["item_id", "status", "lease_until"])
        .where("agent_id", "=", input.agentId)
        .where((eb) =>
          eb.or([
            eb.and([eb("status", "=", "pending"), eb("available_at", "<=", now)]),
            eb.and([eb("status", "=", "claimed"), eb("lease_until", "<", now)]),
          ]),
        )
        .orderBy("enqueued_at")
        .orderBy("item_id")
        .limit(1);
      if (input.sessionKey !== undefined) query = query.where("session_key", "=", input.sessionKey);
      const candidate = await query.executeTakeFirst();
      if (candidate === undefined) return undefined;
      const claimed = await this.#db
        .updateTable("queue_items")
        .set((eb) => ({
          status: "claimed",
          claimed_by: input.owner,
          lease_until: now + input.leaseMs,
          attempts: eb("attempts", "+", 1),
          updated_at: now,
        }))
        .where("item_id", "=", candidate.item_id)
        .where("status", "=", candidate.status)
        .where((eb) =>
          candidate.lease_until === null
            ? eb("lease_until", "is", null)
            : eb("lease_until", "=", candidate.lease_until),
        )
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 1) return this.#require(candidate.item_id);
    }
    return undefined;
  }

  async complete(itemId: string, owner: string): Promise<QueueItem> {
    return this.#finish(itemId, owner, { status: "done", lease_until: null, updated_at: Date.now() });
  }

  async fail(
    itemId: string,
    owner: string,
    error: string,
    options: { readonly retryAt?: number } = {},
  ): Promise<QueueItem> {
    const now = Date.now();
    return this.#finish(
      itemId,
      owner,
      options.retryAt === undefined
        ? { status: "failed", last_error: error, lease_until: null, updated_at: now }
        : {
            status: "pending",
            last_error: error,
            available_at: options.retryAt,
            claimed_by: null,
            lease_until: null,
            updated_at: now,
          },
    );
  }

  async get(itemId: string): Promise<QueueItem | undefined> {
    const row = await this.#db
      .selectFrom("queue_items")
      .selectAll()
      .where("item_id", "=", itemId)
      .executeTakeFirst();
    return row === undefined ? undefined : toQueueItem(row);
  }

  async list(filter: {
    readonly agentId: string;
    readonly sessionKey?: string;
    readonly status?: QueueItemStatus;
  }): Promise<QueueItem[]> {
    let query = this.#db.selectFrom("queue_items").selectAll().where("agent_id", "=", filter.agentId);
    if (filter.sessionKey !== undefined) query = query.where("session_key", "=", filter.sessionKey);
    if (filter.status !== undefined) query = query.where("status", "=", filter.status);
    return (await query.orderBy("enqueued_at").orderBy("item_id").execute()).map(toQueueItem);
  }

  async #finish(itemId: string, owner: string, changes: Partial<QueueItemsTable>): Promise<QueueItem> {
    const result = await this.#db
      .updateTable("queue_items")
      .set(changes)
      .where("item_id", "=", itemId)
      .where("status", "=", "claimed")
      .where("claimed_by", "=", owner)
      .executeTakeFirst();
    const stored = await this.#require(itemId);
    if (Number(result.numUpdatedRows) === 0) assertAlreadyFinished(stored, changes.status, owner);
    return stored;
  }

  async #require(itemId: string): Promise<QueueItem> {
    const item = await this.get(itemId);
    if (item === undefined) throw new RecordNotFoundError(`no queue item ${itemId}`);
    return item;
  }
}

/** An item enqueued again must carry the same content (`payload` is the new item's JSON). */
export function assertSameEnqueue(stored: QueueItem, input: EnqueueInput, payload: string): void {
  if (
    stored.agentId !== input.agentId ||
    stored.sessionKey !== input.sessionKey ||
    stored.kind !== input.kind ||
    JSON.stringify(stored.payload) !== payload
  ) {
    throw new IdempotencyConflictError(`queue item ${input.itemId} already exists with other content`);
  }
}

/** A complete/fail that changed nothing is fine only as a repeat by the same owner to the same status. */
export function assertAlreadyFinished(stored: QueueItem, status: string | undefined, owner: string): void {
  if (stored.status === status && stored.claimedBy === owner) return;
  throw new IdempotencyConflictError(
    `queue item ${stored.itemId} is ${stored.status}${stored.claimedBy === undefined ? "" : ` (claimed by ${stored.claimedBy})`}, not claimed by ${owner}`,
  );
}

export function toQueueItem(row: Selectable<QueueItemsTable>): QueueItem {
  return {
    itemId: row.item_id,
    agentId: row.agent_id,
    sessionKey: row.session_key,
    kind: row.kind,
    payload: JSON.parse(row.payload) as unknown,
    status: row.status as QueueItemStatus,
    enqueuedAt: row.enqueued_at,
    availableAt: row.available_at,
    attempts: row.attempts,
    ...(row.claimed_by === null ? {} : { claimedBy: row.claimed_by }),
    ...(row.lease_until === null ? {} : { leaseUntil: row.lease_until }),
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
  };
}
