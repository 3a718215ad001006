// Queue and cron work across processes on PostgreSQL, through pg-boss (DESIGN §7: no home-made distributed
// machinery). Owns: waking a worker in some process when a queue item is enqueued (a pg-boss job per item,
// fetched with SKIP LOCKED, re-delivered when a worker dies), claiming the item from the store's queue there,
// running the handler and completing or failing the item; and cron ticks (pg-boss schedules: one job per tick
// across every process) recorded in the store's `cron_state`. Does not own: the queue record (the store's
// `queue_items`, ../queue.ts) or cron state (../cron-state.ts).
//
// Why both: the store's QueueApi is the record — idempotent enqueue by item id with a content check, FIFO per
// session key, leases with owners, retry times, listing by status — which pg-boss jobs do not model (a job
// id is not ours, its data is not compared, its retention deletes it). pg-boss is the dispatch: it decides
// which process works next and notices dead workers. An item is handled by exactly one worker because
// handling starts with the queue's claim, a compare-and-set UPDATE (safe under READ COMMITTED: PostgreSQL
// re-checks the WHERE on the row it waited for), whatever pg-boss delivers twice.
import type { PgBoss as PgBossClass } from "pg-boss";
import { SessionStoreError } from "../errors.ts";
import type { EnqueueInput, QueueItem } from "../queue.ts";
import type { PostgresSessionStore } from "./store.ts";

export interface QueueDispatcherOptions {
  /** The same database as the store. */
  readonly connectionString: string;
  /** pg-boss's own schema (default `<store schema>_jobs`). */
  readonly bossSchema?: string;
  /** Names this worker in claims (`claimedBy`). */
  readonly owner: string;
  /** How long a claim lasts before another worker may take the item over (default 5 minutes). */
  readonly leaseMs?: number;
  /** Idle poll between wake-ups, a backstop (default 0.5 s). */
  readonly pollingIntervalSeconds?: number;
}

export type QueueItemHandler = (item: QueueItem) => Promise<void>;
export type CronTickHandler = (jobId: string, agentId: string | undefined) => Promise<void>;

interface WakeUp {
  readonly itemId: string;
  readonly agentId: string;
  readonly sessionKey: string;
}

interface CronTick {
  readonly jobId: string;
  readonly agentId?: string;
}

export interface QueueDispatcher {
  /** Records the item in the store (idempotent) and wakes one worker, in whatever process, to handle it. */
  enqueue(input: EnqueueInput): Promise<QueueItem>;
  /** Handles woken items: claim (exclusive), `handler`, then complete — or fail, with `retryAfterMs` a retry. */
  work(handler: QueueItemHandler, options?: { readonly retryAfterMs?: number }): Promise<void>;
  /** Registers (or replaces) a cron schedule; each tick fires once across every process. */
  schedule(
    jobId: string,
    cron: string,
    options?: { readonly agentId?: string; readonly tz?: string },
  ): Promise<void>;
  unschedule(jobId: string): Promise<void>;
  /** Fires one tick now (a manual run), handled like a scheduled one. */
  trigger(jobId: string, agentId?: string): Promise<void>;
  /** Handles ticks, recording `runningSince`, then the outcome, in the store's cron state. */
  workCron(handler: CronTickHandler): Promise<void>;
  stop(): Promise<void>;
}

const ITEMS = "agent-kernel-queue-items";
const TICKS = "agent-kernel-cron-ticks";

/** Starts pg-boss (creating or migrating its schema) next to `store`. */
export async function startQueueDispatcher(
  store: PostgresSessionStore,
  options: QueueDispatcherOptions,
): Promise<QueueDispatcher> {
  // Loaded here, not at the top: the `postgres` entry must not need pg-boss unless dispatch is used.
  const { PgBoss } = (await import("pg-boss")) as { PgBoss: typeof PgBossClass };
  const boss = new PgBoss({
    connectionString: options.connectionString,
    schema: options.bossSchema ?? `${store.schemaName}_jobs`,
    max: 4,
  });
  const failures: unknown[] = [];
  boss.on("error", (error: unknown) => failures.push(error));
  await boss.start();
  await boss.createQueue(ITEMS, { retryLimit: 5, retryDelay: 1 });
  await boss.createQueue(TICKS, { retryLimit: 0 });
  const leaseMs = options.leaseMs ?? 300_000;
  // Batches of 5: while a fetch comes back full, pg-boss fetches again at once instead of waiting a poll.
  const polling = { pollingIntervalSeconds: options.pollingIntervalSeconds ?? 0.5, batchSize: 5 };

  const handleItem = async (wake: WakeUp, handler: QueueItemHandler, retryAfterMs: number | undefined) => {
    // The claim is the exclusion: the oldest available item of this session (FIFO per session), which is
    // usually the one this wake-up was sent for; nothing when another worker got there first.
    const item = await store.queue.claimNext({
      agentId: wake.agentId,
      sessionKey: wake.sessionKey,
      owner: options.owner,
      leaseMs,
    });
    if (item === undefined) return;
    try {
      await handler(item);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (retryAfterMs === undefined) {
        await store.queue.fail(item.itemId, options.owner, message);
      } else {
        await store.queue.fail(item.itemId, options.owner, message, { retryAt: Date.now() + retryAfterMs });
        await boss.sendAfter(ITEMS, { ...wake, itemId: item.itemId }, null, Math.ceil(retryAfterMs / 1000));
      }
      return;
    }
    await store.queue.complete(item.itemId, options.owner);
  };

  return {
    async enqueue(input) {
      const item = await store.queue.enqueue(input);
      const wake: WakeUp = { itemId: item.itemId, agentId: item.agentId, sessionKey: item.sessionKey };
      const startAfter = item.availableAt > Date.now() ? new Date(item.availableAt) : undefined;
      await boss.send(ITEMS, wake, startAfter === undefined ? {} : { startAfter });
      return item;
    },
    async work(handler, workOptions = {}) {
      await boss.work<WakeUp>(ITEMS, polling, async (jobs) => {
        for (const job of jobs) await handleItem(job.data, handler, workOptions.retryAfterMs);
      });
    },
    async schedule(jobId, cron, scheduleOptions = {}) {
      const tick: CronTick =
        scheduleOptions.agentId === undefined ? { jobId } : { jobId, agentId: scheduleOptions.agentId };
      await boss.schedule(TICKS, cron, tick, {
        key: jobId,
        ...(scheduleOptions.tz === undefined ? {} : { tz: scheduleOptions.tz }),
      });
      await store.cron.update(jobId, (current) => ({
        ...current,
        ...(scheduleOptions.agentId === undefined ? {} : { agentId: scheduleOptions.agentId }),
      }));
    },
    async unschedule(jobId) {
      await boss.unschedule(TICKS, jobId);
    },
    async trigger(jobId, agentId) {
      const tick: CronTick = agentId === undefined ? { jobId } : { jobId, agentId };
      await boss.send(TICKS, tick);
    },
    async workCron(handler) {
      await boss.work<CronTick>(TICKS, polling, async (jobs) => {
        for (const job of jobs) {
          const { jobId, agentId } = job.data;
          const startedAt = Date.now();
          await store.cron.update(jobId, (current) => ({ ...current, runningSince: startedAt }));
          let error: string | undefined;
          try {
            await handler(jobId, agentId);
          } catch (failure) {
            error = failure instanceof Error ? failure.message : String(failure);
          }
          const endedAt = Date.now();
          await store.cron.update(jobId, (current) => {
            const { runningSince: _done, lastError: _previous, ...rest } = current;
            return {
              ...rest,
              lastRunAt: startedAt,
              lastDurationMs: endedAt - startedAt,
              lastStatus: error === undefined ? "ok" : "error",
              ...(error === undefined ? {} : { lastError: error }),
              consecutiveErrors: error === undefined ? 0 : current.consecutiveErrors + 1,
            };
          });
        }
      });
    },
    async stop() {
      await boss.stop({ graceful: true, timeout: 10_000 });
      if (failures.length > 0) {
        throw new SessionStoreError(
          `pg-boss reported ${failures.length} error(s); the first: ${String(failures[0])}`,
          {
            cause: failures[0],
          },
        );
      }
    },
  };
}
