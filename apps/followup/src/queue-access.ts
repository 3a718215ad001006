// The follow-up runner's access to the kernel store's queue and run records: which items are available,
// claiming exactly the wanted ones under a lease, dropping, completing, the per-session mutation lock, the
// enqueue stamp, and the run id derived from an item (found again after a crash). Owns: queue IO and its
// ordering rules as the runner uses them. Does not own: which items make a turn (batch.ts), queue modes
// or the turn (runner.ts), or the queue table's rules (the store).
import { createHash } from "node:crypto";
import { defaultAgentId, type KernelConfig, listAgentIds } from "@agent-kernel/config";
import type { AnyKernelStore, RunRecord } from "@agent-kernel/kernel";
import type { Clock } from "./clock.ts";
import { ITEM_KIND, type MessagePayload } from "./inbound.ts";
import type { QueueItem } from "./runner-types.ts";

/** The `lastError` of an item a stopping runner handed back: its aborted run is not its answer. */
export const RELEASED_ON_STOP = "released: the runner stopped before the turn finished";
const FINAL_RUN_STATUSES: ReadonlySet<string> = new Set(["succeeded", "failed", "aborted", "timed_out"]);

export function isMessage(item: QueueItem): boolean {
  return item.kind === ITEM_KIND.message;
}

export function messagePayload(item: QueueItem): MessagePayload {
  return item.payload as MessagePayload;
}

/** The run id of an item's n-th run (n ≥ 1): derived from the item id so a restart finds it. */
function runIdFor(itemId: string, attempt: number): string {
  const base = `followup-${createHash("sha256").update(itemId).digest("hex").slice(0, 32)}`;
  return attempt === 1 ? base : `${base}-${attempt}`;
}

export class QueueAccess {
  readonly #store: AnyKernelStore;
  readonly #config: KernelConfig;
  readonly #clock: Clock;
  readonly #owner: string;
  readonly #leaseMs: number;
  /** One queue mutation at a time per session (accept, claim, drop, steer settle). */
  readonly #locks = new Map<string, Promise<unknown>>();
  #lastStamp = 0;

  constructor(options: {
    readonly store: AnyKernelStore;
    readonly config: KernelConfig;
    readonly clock: Clock;
    readonly owner: string;
    readonly leaseMs: number;
  }) {
    this.#store = options.store;
    this.#config = options.config;
    this.#clock = options.clock;
    this.#owner = options.owner;
    this.#leaseMs = options.leaseMs;
  }

  /** Items available to claim (pending, or claimed by a worker whose lease ran out), oldest first. */
  async pending(agentId: string, sessionKey?: string): Promise<QueueItem[]> {
    const now = this.#clock.now();
    const scope = { agentId, ...(sessionKey === undefined ? {} : { sessionKey }) };
    // Two status-filtered reads: finished items (most of the table over time) are never read.
    const [pending, claimed] = await Promise.all([
      this.#store.queue.list({ ...scope, status: "pending" }),
      this.#store.queue.list({ ...scope, status: "claimed" }),
    ]);
    return [
      ...pending.filter((item) => item.availableAt <= now),
      ...claimed.filter((item) => (item.leaseUntil ?? 0) < now),
    ].sort((a, b) => a.enqueuedAt - b.enqueuedAt || (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0));
  }

  /**
   * Claims exactly `itemIds` (those still available): the store claims oldest first, so items claimed on
   * the way are released again at their place in arrival order.
   */
  async claimItems(agentId: string, sessionKey: string, itemIds: readonly string[]): Promise<QueueItem[]> {
    const wanted = new Set(itemIds);
    const claimed: QueueItem[] = [];
    const passed: QueueItem[] = [];
    while (claimed.length < wanted.size) {
      const next = await this.#store.queue.claimNext({
        agentId,
        sessionKey,
        owner: this.#owner,
        leaseMs: this.#leaseMs,
        now: this.#clock.now(),
      });
      if (next === undefined) break;
      if (wanted.has(next.itemId)) claimed.push(next);
      else passed.push(next);
    }
    for (const item of passed) {
      await this.#store.queue.fail(item.itemId, this.#owner, "released", { retryAt: item.availableAt });
    }
    return claimed;
  }

  /** Claims and fails one item for good; false when another worker holds it. */
  async dropItem(agentId: string, sessionKey: string, itemId: string, why: string): Promise<boolean> {
    const [claimed] = await this.claimItems(agentId, sessionKey, [itemId]);
    if (claimed === undefined) return false;
    await this.#store.queue.fail(itemId, this.#owner, why);
    return true;
  }

  /** Hands back (pending again, at their place) every item this owner holds; returns their ids. */
  async releaseOwned(why: string): Promise<string[]> {
    const released: string[] = [];
    for (const item of await this.list({ status: "claimed" })) {
      if (item.claimedBy !== this.#owner) continue;
      await this.#store.queue
        .fail(item.itemId, this.#owner, why, { retryAt: item.availableAt })
        .then(() => released.push(item.itemId))
        .catch(() => undefined);
    }
    return released;
  }

  async completeAll(sessionKey: string, itemIds: readonly string[]): Promise<void> {
    await this.withLock(sessionKey, async () => {
      for (const itemId of itemIds) await this.#store.queue.complete(itemId, this.#owner);
    });
  }

  async sessionsWithPending(): Promise<{ agentId: string; sessionKey: string }[]> {
    const seen = new Map<string, { agentId: string; sessionKey: string }>();
    for (const agentId of this.agentIds()) {
      for (const item of await this.pending(agentId)) {
        if (!seen.has(item.sessionKey)) seen.set(item.sessionKey, { agentId, sessionKey: item.sessionKey });
      }
    }
    return [...seen.values()];
  }

  /** Stored items, oldest first: of one session, or of every configured agent. */
  async list(
    filter: {
      readonly agentId?: string;
      readonly sessionKey?: string;
      readonly status?: QueueItem["status"];
    } = {},
  ): Promise<QueueItem[]> {
    const agents = filter.agentId === undefined ? this.agentIds() : [filter.agentId];
    const lists = await Promise.all(
      agents.map((agentId) =>
        this.#store.queue.list({
          agentId,
          ...(filter.sessionKey === undefined ? {} : { sessionKey: filter.sessionKey }),
          ...(filter.status === undefined ? {} : { status: filter.status }),
        }),
      ),
    );
    return lists.flat().sort((a, b) => a.enqueuedAt - b.enqueuedAt);
  }

  agentIds(): string[] {
    return [...new Set([...listAgentIds(this.#config), defaultAgentId(this.#config)])];
  }

  withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.#locks.set(key, settled);
    void settled.then(() => {
      if (this.#locks.get(key) === settled) this.#locks.delete(key);
    });
    return next;
  }

  /**
   * The enqueue time of a new item: the clock, but strictly after this runner's previous item. The store
   * orders by enqueue time and then by id, so two messages in the same millisecond keep arrival order.
   */
  stamp(): number {
    this.#lastStamp = Math.max(this.#clock.now(), this.#lastStamp + 1);
    return this.#lastStamp;
  }

  /**
   * The first unused run id of an item; or the run that already ended for it (a crash before completion). An
   * item released by a stopping runner skips its aborted runs: they were cut short, not answered.
   */
  async nextRunId(itemId: string, skipAborted: boolean): Promise<{ runId: string; ended?: RunRecord }> {
    for (let attempt = 1; ; attempt++) {
      const runId = runIdFor(itemId, attempt);
      const record = await this.#store.runs.get(runId);
      if (record === undefined) return { runId };
      if (skipAborted && record.status === "aborted") continue;
      if (FINAL_RUN_STATUSES.has(record.status)) return { runId, ended: record };
      // Interrupted by a crash mid-turn: the message gets a new run.
    }
  }
}
