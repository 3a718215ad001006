// The follow-up runner: messages that arrive for a session are stored durably in the kernel store's queue
// before `accept` returns, then handled by the session's queue mode — `steer` into the running turn (falling
// back to a follow-up turn when the turn cannot take it), `followup` (one later turn each, in order),
// `collect` (a quiet window, then one merged turn per route), `interrupt` (abort the running turn, supersede
// older queued messages, run the newest) — under the cap and its drop policy (`summarize`, `old`, `new`).
// Owns: the queue modes — accepting, steering, draining per session, running a batch as one turn, recovery
// after a crash and stopping. Does not own: queue IO and claims (queue-access.ts), which items make a turn
// and its prompt (batch.ts), cap drops (dropping.ts), the debounce (quiet-window.ts), any turn logic (the
// kernel runs every turn), queue settings (the kernel resolves them for the session; session-settings.ts),
// or the queue table's rules (the store, reached only through the kernel).
//
// Exactly once across crashes: every item is claimed with a lease and completed in the same store the
// kernel records runs in; the run of an item has an id derived from the item's id, so a runner that finds
// an item whose run already ended (the process died between the turn and the completion) completes the item
// without running it again.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { KernelConfig } from "@agent-kernel/config";
import { type AnyKernelStore, createKernel, type Kernel, openKernelStore } from "@agent-kernel/kernel";
import { type Batch, batchPrompt, claimBatch } from "./batch.ts";
import { type Clock, systemClock } from "./clock.ts";
import { dropForCap, supersedeOlder } from "./dropping.ts";
import { FollowupEmitter } from "./events.ts";
import { type InboundMessage, ITEM_KIND, type MessagePayload, validateInbound } from "./inbound.ts";
import { planOverflow } from "./overflow.ts";
import { isMessage, messagePayload, QueueAccess, RELEASED_ON_STOP } from "./queue-access.ts";
import { QuietWindows } from "./quiet-window.ts";
import type {
  AcceptResult,
  DrainReport,
  FollowupEvent,
  FollowupEventType,
  FollowupRunnerOptions,
  QueueItem,
} from "./runner-types.ts";
import { prepareFollowup, routingOf, settingsOf } from "./session-settings.ts";

export type {
  AcceptResult,
  DrainReport,
  DropReason,
  FollowupEvent,
  FollowupEventType,
  FollowupRunnerOptions,
  FollowupSettings,
  QueueItem,
  ReplyPayload,
} from "./runner-types.ts";

const DEFAULT_LEASE_MS = 15 * 60_000;

export class FollowupRunner {
  readonly kernel: Kernel;
  readonly store: AnyKernelStore;
  readonly config: KernelConfig;
  readonly owner: string;
  readonly #ownsStore: boolean;
  readonly #clock: Clock;
  readonly #events = new FollowupEmitter();
  /** Queue IO, the per-session mutation lock and the enqueue stamp. */
  readonly #queue: QueueAccess;
  readonly #quiet: QuietWindows;
  /** Drains under way, per session, and whether another pass was asked for meanwhile. */
  readonly #drains = new Map<string, Promise<DrainReport>>();
  readonly #again = new Set<string>();
  /** Collect-mode sessions draining one message at a time because their queue spans routes (OpenClaw). */
  readonly #individualCollect = new Set<string>();
  readonly #steering = new Set<Promise<boolean>>();
  #started = false;
  #stopped = false;
  /** Aborted by `stop({ abort: true })`: the running follow-up turns end, their items go back to pending. */
  readonly #abort = new AbortController();
  #stopping: Promise<string[]> | undefined;
  /** `drain()` calls under way: `stop` waits for them before closing the store under them. */
  readonly #publicDrains = new Set<Promise<DrainReport>>();

  constructor(options: {
    readonly kernel: Kernel;
    readonly store: AnyKernelStore;
    readonly config: KernelConfig;
    readonly ownsStore: boolean;
    readonly clock?: Clock | undefined;
    readonly owner?: string | undefined;
    readonly leaseMs?: number | undefined;
  }) {
    this.kernel = options.kernel;
    this.store = options.store;
    this.config = options.config;
    this.#ownsStore = options.ownsStore;
    this.#clock = options.clock ?? systemClock;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.#quiet = new QuietWindows(this.#clock);
    this.#queue = new QueueAccess({
      store: this.store,
      config: this.config,
      clock: this.#clock,
      owner: this.owner,
      leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
    });
  }

  /** Subscribes to one kind of event; returns the unsubscribe function. */
  on<T extends FollowupEventType>(
    type: T,
    listener: (event: Extract<FollowupEvent, { type: T }>) => void,
  ): () => void {
    return this.#events.on(type, listener);
  }

  // ── accept ──────────────────────────────────────────────────────────────────────────────────────────

  /**
   * Stores the message durably and returns once it is stored (or refused by the cap). Steering, dropping
   * and superseding happen before it returns; the turn runs later (`start` runs it on its own; `drain`
   * runs everything pending now).
   */
  async accept(raw: InboundMessage): Promise<AcceptResult> {
    const inbound = validateInbound(raw);
    const prepared = await prepareFollowup(this.kernel, inbound);
    const agentId = prepared.runtimeContext.agentId.value;
    const sessionKey = prepared.runtimeContext.sessionKey.value;
    const settings = settingsOf(prepared);
    const itemId = inbound.id ?? randomUUID();
    const now = this.#clock.now();
    const base = { itemId, agentId, sessionKey, settings };
    const result = await this.#queue.withLock(sessionKey, async (): Promise<AcceptResult> => {
      const busy = this.#isBusy(sessionKey);
      if ((await this.store.queue.get(itemId)) !== undefined) {
        return { ...base, status: "duplicate", busy, dropped: [] };
      }
      const pending = (await this.#queue.pending(agentId, sessionKey)).filter(isMessage);
      const plan = planOverflow(pending.length, settings.cap, settings.dropPolicy);
      if (!plan.accept) {
        this.#events.emit({ type: "dropped", agentId, sessionKey, itemId, reason: "cap-new" });
        return { ...base, status: "refused", busy, dropped: [] };
      }
      const drops = { store: this.store, queue: this.#queue, events: this.#events, agentId, sessionKey };
      const victims = pending.slice(0, plan.dropOldest);
      const dropped = victims.length > 0 ? await dropForCap(drops, victims, settings.dropPolicy, now) : [];
      const sender = inbound.sender ?? inbound.messageContext?.senderId;
      const payload: MessagePayload = {
        text: inbound.text,
        receivedAt: now,
        ...(sender === undefined ? {} : { sender }),
        ...(inbound.messageContext === undefined ? {} : { messageContext: inbound.messageContext }),
        ...(inbound.queueMode === undefined ? {} : { queueMode: inbound.queueMode }),
      };
      const stored = await this.store.queue.enqueue({
        itemId,
        agentId,
        sessionKey,
        kind: ITEM_KIND.message,
        payload,
        now: this.#queue.stamp(),
        availableAt: now,
      });
      if (!busy) return { ...base, status: "queued", busy, dropped };
      this.#quiet.arrived(sessionKey, now);
      if (settings.mode === "interrupt") {
        await supersedeOlder(drops, pending, dropped);
        this.kernel.abortSession({ agentId, sessionKey });
        return { ...base, status: "queued", busy, dropped };
      }
      if (settings.mode === "steer") {
        const claimed = await this.#queue.claimItems(agentId, sessionKey, [itemId]);
        if (claimed.length === 1) {
          const steering = this.#steer(stored, inbound.text);
          return { ...base, status: "queued", busy, dropped, steering };
        }
      }
      return { ...base, status: "queued", busy, dropped };
    });
    if (result.status === "queued" && result.steering === undefined) this.#schedule(agentId, sessionKey);
    return result;
  }

  #steer(item: QueueItem, text: string): Promise<boolean> {
    const { agentId, sessionKey, itemId } = item;
    const steering = this.kernel.steer(sessionKey, text).then(async (delivered) => {
      await this.#queue.withLock(sessionKey, async () => {
        if (delivered) {
          await this.store.queue.complete(itemId, this.owner);
          this.#events.emit({ type: "steered", agentId, sessionKey, itemId });
        } else {
          // The turn could not take it: back to pending at its place in arrival order, run as a follow-up.
          await this.store.queue.fail(itemId, this.owner, "steering did not apply; runs as a follow-up", {
            retryAt: item.availableAt,
          });
        }
      });
      if (!delivered) this.#schedule(agentId, sessionKey);
      return delivered;
    });
    this.#steering.add(steering);
    const forget = () => this.#steering.delete(steering);
    steering.then(forget, forget);
    return steering;
  }

  // ── draining ────────────────────────────────────────────────────────────────────────────────────────

  /**
   * Runs every pending item of every session now, without waiting for debounce windows (a running turn of
   * a session is still waited for). Resolves once the queue has nothing left this runner can take.
   */
  drain(): Promise<DrainReport> {
    const draining = this.#drainAll();
    this.#publicDrains.add(draining);
    const forget = () => this.#publicDrains.delete(draining);
    draining.then(forget, forget);
    return draining;
  }

  async #drainAll(): Promise<DrainReport> {
    let turns = 0;
    let items = 0;
    while (!this.#stopped) {
      const sessions = await this.#queue.sessionsWithPending();
      const reports = await Promise.all(
        sessions.map(({ agentId, sessionKey }) => this.#drainSession(agentId, sessionKey, false)),
      );
      for (const report of reports) {
        turns += report.turns;
        items += report.items;
      }
      await Promise.all([...this.#steering].map((steering) => steering.catch(() => false)));
      const left = await this.#queue.sessionsWithPending();
      if (left.length === 0 || reports.every((report) => report.items === 0)) break;
    }
    return { turns, items };
  }

  /** Processes messages as they are accepted (after each session's debounce window), starting with what is
   * already pending (left by a crashed or stopped runner). */
  async start(): Promise<void> {
    if (this.#stopped) throw new Error("this follow-up runner was stopped; create a new one");
    this.#started = true;
    for (const { agentId, sessionKey } of await this.#queue.sessionsWithPending())
      this.#schedule(agentId, sessionKey);
  }

  /** Resolves once no drain or steering of this runner is under way. */
  async whenIdle(): Promise<void> {
    while (this.#drains.size > 0 || this.#steering.size > 0) {
      await Promise.all(
        [...this.#drains.values(), ...this.#steering].map((work) => work.catch(() => undefined)),
      );
    }
  }

  /**
   * Stops taking new work, waits for what is under way, and closes the store if this runner opened it. With
   * `abort`, running follow-up turns are aborted first (Ctrl-C, a daemon's shutdown): their items are
   * released — pending again at their place in arrival order — instead of waiting out the claim's lease.
   * Resolves to the ids of the items released.
   */
  stop(options: { readonly abort?: boolean } = {}): Promise<string[]> {
    // A later `stop({ abort: true })` still aborts the turns an earlier plain stop is waiting for.
    if (options.abort === true) this.#abort.abort();
    this.#stopping ??= (async () => {
      this.#started = false;
      this.#stopped = true;
      this.#quiet.stop();
      await Promise.allSettled([...this.#publicDrains]);
      await this.whenIdle();
      const released = await this.#releaseClaimed();
      if (this.#ownsStore) await this.store.close();
      return released;
    })();
    return this.#stopping;
  }

  /** Hands back every item this runner still holds (a claim left by an interrupted step). */
  async #releaseClaimed(): Promise<string[]> {
    const released = await this.#queue.releaseOwned(RELEASED_ON_STOP);
    if (released.length > 0) {
      const first = await this.store.queue.get(released[0] as string);
      this.#events.emit({
        type: "released",
        agentId: first?.agentId ?? "",
        sessionKey: first?.sessionKey ?? "",
        itemIds: released,
      });
    }
    return released;
  }

  /** Stored items, oldest first: of one session, or of every configured agent. */
  async list(
    filter: {
      readonly agentId?: string;
      readonly sessionKey?: string;
      readonly status?: QueueItem["status"];
    } = {},
  ): Promise<QueueItem[]> {
    return this.#queue.list(filter);
  }

  #schedule(agentId: string, sessionKey: string): void {
    if (!this.#started) return;
    void this.#drainSession(agentId, sessionKey, true).catch(() => undefined);
  }

  /** One drain per session at a time; a request meanwhile makes the running one go round again. */
  #drainSession(agentId: string, sessionKey: string, debounce: boolean): Promise<DrainReport> {
    const running = this.#drains.get(sessionKey);
    if (running !== undefined) {
      this.#again.add(sessionKey);
      return debounce ? running : running.then(() => this.#drainSession(agentId, sessionKey, debounce));
    }
    const drain = this.#drainLoop(agentId, sessionKey, debounce).finally(() => {
      this.#drains.delete(sessionKey);
      if (this.#again.delete(sessionKey) && this.#started) this.#schedule(agentId, sessionKey);
    });
    this.#drains.set(sessionKey, drain);
    return drain;
  }

  async #drainLoop(agentId: string, sessionKey: string, debounce: boolean): Promise<DrainReport> {
    let turns = 0;
    let items = 0;
    for (;;) {
      this.#again.delete(sessionKey);
      await this.#waitForIdleSession(sessionKey);
      if (this.#stopped) break;
      const pending = await this.#queue.pending(agentId, sessionKey);
      if (pending.length === 0) break;
      const newest = [...pending].reverse().find(isMessage);
      const prepared = await prepareFollowup(this.kernel, {
        agentId,
        sessionKey,
        text: "",
        ...(newest === undefined ? {} : routingOf(messagePayload(newest))),
      });
      const settings = settingsOf(prepared);
      if (debounce) {
        await this.#quiet.wait(sessionKey, settings.debounceMs);
        if (this.#stopped) break;
        // A turn may have started (an interrupt's newer message, another entry point) while we waited.
        if (this.#isBusy(sessionKey)) continue;
      }
      const batch = await this.#queue.withLock(sessionKey, () =>
        claimBatch(this.#queue, { agentId, sessionKey, settings }, this.#individualCollect),
      );
      if (batch === undefined) break;
      const ran = await this.#runBatch(agentId, sessionKey, batch);
      items += batch.summaries.length + batch.messages.length;
      if (ran === "ran") turns += 1;
      if (ran === "failed") break;
    }
    return { turns, items };
  }

  async #runBatch(
    agentId: string,
    sessionKey: string,
    batch: Batch,
  ): Promise<"ran" | "recovered" | "failed"> {
    const all = [...batch.summaries, ...batch.messages];
    const itemIds = all.map((item) => item.itemId);
    const leader = batch.messages[0] ?? batch.summaries[0];
    if (leader === undefined) return "failed";
    try {
      const { runId, ended } = await this.#queue.nextRunId(
        leader.itemId,
        leader.lastError === RELEASED_ON_STOP,
      );
      if (ended !== undefined) {
        await this.#queue.completeAll(sessionKey, itemIds);
        this.#events.emit({ type: "recovered", agentId, sessionKey, itemIds, runId: ended.runId });
        return "recovered";
      }
      const prompt = batchPrompt(batch);
      const last = batch.messages.map(messagePayload).at(-1);
      const prepared = await prepareFollowup(this.kernel, {
        agentId,
        sessionKey,
        text: prompt,
        ...(last === undefined ? {} : routingOf(last)),
      });
      const outcome = await this.kernel.executeTurn(prepared, {
        prompt: prompt.trim(),
        runId,
        signal: this.#abort.signal,
      });
      if (outcome.status === "aborted" && this.#abort.signal.aborted) {
        // Stopped mid-turn: the message was not answered; it goes back to the queue for the next runner.
        await this.#queue.withLock(sessionKey, async () => {
          for (const item of all)
            await this.store.queue.fail(item.itemId, this.owner, RELEASED_ON_STOP, {
              retryAt: item.availableAt,
            });
        });
        this.#events.emit({ type: "released", agentId, sessionKey, itemIds });
        return "failed";
      }
      // Delivered before the items are completed: a crash in between leaves a finished run that the next
      // runner finds by its id (recovered, not run again).
      this.#events.emit({
        type: "delivered",
        agentId,
        sessionKey,
        itemIds,
        runId,
        status: outcome.status,
        prompt,
        payloads: outcome.result.payloads,
        outcome,
      });
      await this.#queue.completeAll(sessionKey, itemIds);
      return "ran";
    } catch (error) {
      // The turn could not start (store failure, invalid input): release the items for a later try.
      await this.#queue.withLock(sessionKey, async () => {
        for (const item of all) {
          await this.store.queue
            .fail(item.itemId, this.owner, error instanceof Error ? error.message : String(error), {
              retryAt: this.#clock.now() + 1000,
            })
            .catch(() => undefined);
        }
      });
      this.#events.emit({ type: "error", agentId, sessionKey, itemIds, error });
      return "failed";
    }
  }

  // ── sessions and settings ───────────────────────────────────────────────────────────────────────────

  #isBusy(sessionKey: string): boolean {
    return this.kernel.activeRuns({ sessionKey }).length > 0;
  }

  async #waitForIdleSession(sessionKey: string): Promise<void> {
    for (;;) {
      const runs = this.kernel.activeRuns({ sessionKey });
      if (runs.length === 0) return;
      await Promise.all(runs.map((run) => this.kernel.wait(run.runId)?.catch(() => undefined)));
    }
  }
}

/** A runner over a new or given kernel and store; call `start()` for live processing or `drain()`. */
export async function createFollowupRunner(options: FollowupRunnerOptions): Promise<FollowupRunner> {
  if (options.kernel !== undefined && options.store === undefined) {
    throw new Error("createFollowupRunner: a `kernel` needs the `store` it runs on");
  }
  const stateDir = options.stateDir ?? options.config.store.stateDir;
  if (options.store === undefined && stateDir === undefined) {
    throw new Error(
      "createFollowupRunner: no state dir (pass `stateDir`, or set store.stateDir in the config)",
    );
  }
  const store =
    options.store ?? (await openKernelStore({ stateDir: stateDir as string, config: options.config }));
  const kernel =
    options.kernel ?? createKernel({ ...(options.kernelOptions ?? {}), config: options.config, store });
  return new FollowupRunner({
    kernel,
    store,
    config: options.config,
    ownsStore: options.store === undefined,
    clock: options.clock,
    owner: options.owner,
    leaseMs: options.leaseMs,
  });
}
