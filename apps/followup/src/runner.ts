// The follow-up runner: messages that arrive for a session are stored durably in the kernel store's queue
// before `accept` returns, then handled by the session's queue mode — `steer` into the running turn (falling
// back to a follow-up turn when the turn cannot take it), `followup` (one later turn each, in order),
// `collect` (a quiet window, then one merged turn per route), `interrupt` (abort the running turn, supersede
// older queued messages, run the newest) — under the cap and its drop policy (`summarize`, `old`, `new`).
// Owns: IO and routing of the queue (claiming with a lease, completion, recovery after a crash) and building
// the prompt. Does not own: any turn logic (the kernel runs every turn), queue settings (the kernel resolves
// them for the session), or the queue table's rules (the store, reached only through the kernel).
//
// Exactly once across crashes: every item is claimed with a lease and completed in the same store the
// kernel records runs in; the run of an item has an id derived from the item's id, so a runner that finds
// an item whose run already ended (the process died between the turn and the completion) completes the item
// without running it again.
import { createHash, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { defaultAgentId, type KernelConfig, listAgentIds, QUEUE_DEFAULTS } from "@agent-kernel/config";
import {
  type AnyKernelStore,
  createKernel,
  type Kernel,
  type KernelOptions,
  openKernelStore,
  type PreparedSession,
  type RunRecord,
  type TurnOutcome,
  type TurnStatus,
} from "@agent-kernel/kernel";
import { type Clock, systemClock } from "./clock.ts";
import {
  type InboundMessage,
  ITEM_KIND,
  type MessagePayload,
  type QueueMode,
  routeKey,
  type SummaryPayload,
  validateInbound,
} from "./inbound.ts";
import { droppedSummaryLine, keptSummaryLines, planOverflow } from "./overflow.ts";
import { collectPrompt, followupPrompt, overflowSummaryPrompt } from "./prompts.ts";

type QueueApi = AnyKernelStore["queue"];
export type QueueItem = NonNullable<Awaited<ReturnType<QueueApi["get"]>>>;
export type ReplyPayload = TurnOutcome["result"]["payloads"][number];

/** The queue settings that apply to a session (the kernel's resolution, with the config's debounce). */
export interface FollowupSettings {
  readonly mode: QueueMode;
  readonly debounceMs: number;
  readonly cap: number;
  readonly dropPolicy: "summarize" | "old" | "new";
}

export type DropReason = "cap-old" | "cap-summarize" | "cap-new" | "interrupt";

export type FollowupEvent =
  /** A follow-up turn ended: what to deliver, and the whole outcome. */
  | {
      readonly type: "delivered";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemIds: readonly string[];
      readonly runId: string;
      readonly status: TurnStatus;
      readonly prompt: string;
      readonly payloads: readonly ReplyPayload[];
      readonly outcome: TurnOutcome;
    }
  /** A message reached a running turn by steering; no turn of its own. */
  | {
      readonly type: "steered";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemId: string;
    }
  /** A message was dropped (by the cap, or superseded by an interrupt) or refused (`drop: new`). */
  | {
      readonly type: "dropped";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemId: string;
      readonly reason: DropReason;
    }
  /** Items handed back to the queue (pending again, at their place) because the runner stopped mid-turn. */
  | {
      readonly type: "released";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemIds: readonly string[];
    }
  /** Items whose run had already ended before a crash: completed now, not run again. */
  | {
      readonly type: "recovered";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemIds: readonly string[];
      readonly runId: string;
    }
  | {
      readonly type: "error";
      readonly agentId: string;
      readonly sessionKey: string;
      readonly itemIds: readonly string[];
      readonly error: unknown;
    };

export type FollowupEventType = FollowupEvent["type"];

export interface AcceptResult {
  /** `queued`: stored (and being steered when `steering` is set); `refused`: the cap with `drop: new`;
   * `duplicate`: an item with this id was already accepted (nothing new stored). */
  readonly status: "queued" | "refused" | "duplicate";
  readonly itemId: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly settings: FollowupSettings;
  /** A turn was running (or queued) for the session when the message arrived. */
  readonly busy: boolean;
  /** Items dropped to make room (oldest first), or superseded by an interrupt. */
  readonly dropped: readonly string[];
  /** Steer mode on a busy session: true once the message reached the running turn, false when it fell back
   * to a follow-up turn. */
  readonly steering?: Promise<boolean>;
}

export interface DrainReport {
  /** Turns run. */
  readonly turns: number;
  /** Items completed by those turns (and by recovery). */
  readonly items: number;
}

export interface FollowupRunnerOptions {
  readonly config: KernelConfig;
  /** Default `config.store.stateDir`. Ignored when `store` is given. */
  readonly stateDir?: string | undefined;
  /** An open store (the caller closes it); default one opened under the state dir (closed by `stop`). */
  readonly store?: AnyKernelStore | undefined;
  /** A kernel over `store` (then `store` is required); default one made here. */
  readonly kernel?: Kernel | undefined;
  /** Extra options for the kernel made here (paths, executor settings, native providers). */
  readonly kernelOptions?: Partial<Omit<KernelOptions, "config" | "store">> | undefined;
  readonly clock?: Clock | undefined;
  /** This worker's name in claims; default `<host>:<pid>:<random>`. */
  readonly owner?: string | undefined;
  /** How long a claim holds before another worker may take the item over (ms); default 15 minutes. */
  readonly leaseMs?: number | undefined;
}

/** Claimed items that become one turn. */
interface Batch {
  readonly summaries: readonly QueueItem[];
  readonly messages: readonly QueueItem[];
  readonly mode: QueueMode;
  readonly cap: number;
}

const DEFAULT_LEASE_MS = 15 * 60_000;
/** The `lastError` of an item a stopping runner handed back: its aborted run is not its answer. */
const RELEASED_ON_STOP = "released: the runner stopped before the turn finished";
const FINAL_RUN_STATUSES: ReadonlySet<string> = new Set(["succeeded", "failed", "aborted", "timed_out"]);

function isMessage(item: QueueItem): boolean {
  return item.kind === ITEM_KIND.message;
}

function messagePayload(item: QueueItem): MessagePayload {
  return item.payload as MessagePayload;
}

/** The run id of an item's n-th run (n ≥ 1): derived from the item id so a restart finds it. */
function runIdFor(itemId: string, attempt: number): string {
  const base = `followup-${createHash("sha256").update(itemId).digest("hex").slice(0, 32)}`;
  return attempt === 1 ? base : `${base}-${attempt}`;
}

export class FollowupRunner {
  readonly kernel: Kernel;
  readonly store: AnyKernelStore;
  readonly config: KernelConfig;
  readonly owner: string;
  readonly #ownsStore: boolean;
  readonly #clock: Clock;
  readonly #leaseMs: number;
  readonly #listeners = new Map<FollowupEventType, Set<(event: FollowupEvent) => void>>();
  /** One queue mutation at a time per session (accept, claim, drop, steer settle). */
  readonly #locks = new Map<string, Promise<unknown>>();
  /** Drains under way, per session, and whether another pass was asked for meanwhile. */
  readonly #drains = new Map<string, Promise<DrainReport>>();
  readonly #again = new Set<string>();
  /** Collect-mode sessions draining one message at a time because their queue spans routes (OpenClaw). */
  readonly #individualCollect = new Set<string>();
  /** When a message last arrived for a busy session: the debounce window runs from there. */
  readonly #lastBusyEnqueue = new Map<string, number>();
  readonly #steering = new Set<Promise<boolean>>();
  readonly #sleepers = new Set<() => void>();
  #started = false;
  #stopped = false;
  /** Aborted by `stop({ abort: true })`: the running follow-up turns end, their items go back to pending. */
  readonly #abort = new AbortController();
  #stopping: Promise<string[]> | undefined;
  /** `drain()` calls under way: `stop` waits for them before closing the store under them. */
  readonly #publicDrains = new Set<Promise<DrainReport>>();
  #lastStamp = 0;

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
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  }

  // ── events ──────────────────────────────────────────────────────────────────────────────────────────

  /** Subscribes to one kind of event; returns the unsubscribe function. */
  on<T extends FollowupEventType>(
    type: T,
    listener: (event: Extract<FollowupEvent, { type: T }>) => void,
  ): () => void {
    let set = this.#listeners.get(type);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    const stored = listener as (event: FollowupEvent) => void;
    set.add(stored);
    return () => set.delete(stored);
  }

  #emit(event: FollowupEvent): void {
    for (const listener of this.#listeners.get(event.type) ?? []) {
      try {
        listener(event);
      } catch {
        // A listener's failure must not undo the queue's bookkeeping (or another listener's delivery).
      }
    }
  }

  // ── accept ──────────────────────────────────────────────────────────────────────────────────────────

  /**
   * Stores the message durably and returns once it is stored (or refused by the cap). Steering, dropping
   * and superseding happen before it returns; the turn runs later (`start` runs it on its own; `drain`
   * runs everything pending now).
   */
  async accept(raw: InboundMessage): Promise<AcceptResult> {
    const inbound = validateInbound(raw);
    const prepared = await this.#prepare(inbound);
    const agentId = prepared.runtimeContext.agentId.value;
    const sessionKey = prepared.runtimeContext.sessionKey.value;
    const settings = this.#settingsOf(prepared);
    const itemId = inbound.id ?? randomUUID();
    const now = this.#clock.now();
    const base = { itemId, agentId, sessionKey, settings };
    const result = await this.#withLock(sessionKey, async (): Promise<AcceptResult> => {
      const busy = this.#isBusy(sessionKey);
      if ((await this.store.queue.get(itemId)) !== undefined) {
        return { ...base, status: "duplicate", busy, dropped: [] };
      }
      const pending = (await this.#pending(agentId, sessionKey)).filter(isMessage);
      const dropped: string[] = [];
      const plan = planOverflow(pending.length, settings.cap, settings.dropPolicy);
      if (!plan.accept) {
        this.#emit({ type: "dropped", agentId, sessionKey, itemId, reason: "cap-new" });
        return { ...base, status: "refused", busy, dropped };
      }
      if (plan.dropOldest > 0) {
        const victims = pending.slice(0, plan.dropOldest);
        for (const victim of victims) {
          if (settings.dropPolicy === "summarize") {
            // Stored before the victim is dropped: a crash in between keeps the message, never loses it.
            const summary: SummaryPayload = {
              droppedItemId: victim.itemId,
              line: droppedSummaryLine(messagePayload(victim).text),
            };
            await this.store.queue.enqueue({
              itemId: `${victim.itemId}#summary`,
              agentId,
              sessionKey,
              kind: ITEM_KIND.summary,
              payload: summary,
              now: this.#stamp(),
              availableAt: now,
            });
          }
          const reason = settings.dropPolicy === "summarize" ? "cap-summarize" : "cap-old";
          if (
            await this.#dropItem(agentId, sessionKey, victim.itemId, `dropped by the queue cap (${reason})`)
          ) {
            dropped.push(victim.itemId);
            this.#emit({ type: "dropped", agentId, sessionKey, itemId: victim.itemId, reason });
          }
        }
      }
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
        now: this.#stamp(),
        availableAt: now,
      });
      if (!busy) return { ...base, status: "queued", busy, dropped };
      this.#lastBusyEnqueue.set(sessionKey, now);
      if (settings.mode === "interrupt") {
        for (const older of pending) {
          if (dropped.includes(older.itemId)) continue;
          if (
            await this.#dropItem(
              agentId,
              sessionKey,
              older.itemId,
              "superseded by a newer message (interrupt)",
            )
          ) {
            dropped.push(older.itemId);
            this.#emit({ type: "dropped", agentId, sessionKey, itemId: older.itemId, reason: "interrupt" });
          }
        }
        this.kernel.abortSession({ agentId, sessionKey });
        return { ...base, status: "queued", busy, dropped };
      }
      if (settings.mode === "steer") {
        const claimed = await this.#claimItems(agentId, sessionKey, [itemId]);
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
      await this.#withLock(sessionKey, async () => {
        if (delivered) {
          await this.store.queue.complete(itemId, this.owner);
          this.#emit({ type: "steered", agentId, sessionKey, itemId });
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
      const sessions = await this.#sessionsWithPending();
      const reports = await Promise.all(
        sessions.map(({ agentId, sessionKey }) => this.#drainSession(agentId, sessionKey, false)),
      );
      for (const report of reports) {
        turns += report.turns;
        items += report.items;
      }
      await Promise.all([...this.#steering].map((steering) => steering.catch(() => false)));
      const left = await this.#sessionsWithPending();
      if (left.length === 0 || reports.every((report) => report.items === 0)) break;
    }
    return { turns, items };
  }

  /** Processes messages as they are accepted (after each session's debounce window), starting with what is
   * already pending (left by a crashed or stopped runner). */
  async start(): Promise<void> {
    if (this.#stopped) throw new Error("this follow-up runner was stopped; create a new one");
    this.#started = true;
    for (const { agentId, sessionKey } of await this.#sessionsWithPending())
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
      for (const wake of this.#sleepers) wake();
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
    const released: string[] = [];
    for (const item of await this.list({ status: "claimed" })) {
      if (item.claimedBy !== this.owner) continue;
      await this.store.queue
        .fail(item.itemId, this.owner, RELEASED_ON_STOP, { retryAt: item.availableAt })
        .then(() => released.push(item.itemId))
        .catch(() => undefined);
    }
    if (released.length > 0) {
      const first = await this.store.queue.get(released[0] as string);
      this.#emit({
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
    const agents = filter.agentId === undefined ? this.#agentIds() : [filter.agentId];
    const lists = await Promise.all(
      agents.map((agentId) =>
        this.store.queue.list({
          agentId,
          ...(filter.sessionKey === undefined ? {} : { sessionKey: filter.sessionKey }),
          ...(filter.status === undefined ? {} : { status: filter.status }),
        }),
      ),
    );
    return lists.flat().sort((a, b) => a.enqueuedAt - b.enqueuedAt);
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
      const pending = await this.#pending(agentId, sessionKey);
      if (pending.length === 0) break;
      const newest = [...pending].reverse().find(isMessage);
      const prepared = await this.#prepare({
        agentId,
        sessionKey,
        text: "",
        ...(newest === undefined ? {} : this.#routing(messagePayload(newest))),
      });
      const settings = this.#settingsOf(prepared);
      if (debounce) {
        await this.#quietWindow(sessionKey, settings.debounceMs);
        if (this.#stopped) break;
        // A turn may have started (an interrupt's newer message, another entry point) while we waited.
        if (this.#isBusy(sessionKey)) continue;
      }
      const batch = await this.#withLock(sessionKey, () => this.#claimBatch(agentId, sessionKey, settings));
      if (batch === undefined) break;
      const ran = await this.#runBatch(agentId, sessionKey, batch);
      items += batch.summaries.length + batch.messages.length;
      if (ran === "ran") turns += 1;
      if (ran === "failed") break;
    }
    return { turns, items };
  }

  /** Claims the next batch: pending summaries plus the next message (followup, steer, interrupt), or in
   * collect mode every queued message when they share one route, else the next one on its own. */
  async #claimBatch(
    agentId: string,
    sessionKey: string,
    settings: FollowupSettings,
  ): Promise<Batch | undefined> {
    const pending = await this.#pending(agentId, sessionKey);
    const messages = pending.filter(isMessage);
    const first = messages[0];
    const chosen: QueueItem[] = [];
    let mode = settings.mode;
    if (first !== undefined) {
      if (settings.mode === "collect") {
        // OpenClaw: while the queued messages span more than one route they drain one at a time (plain
        // follow-ups), and keep doing so until two or more of one route are left; then they merge.
        const crossRoute = new Set(messages.map((message) => routeKey(messagePayload(message)))).size > 1;
        if (crossRoute) this.#individualCollect.add(sessionKey);
        else if (messages.length > 1) this.#individualCollect.delete(sessionKey);
        if (this.#individualCollect.has(sessionKey)) {
          chosen.push(first);
          mode = "followup";
        } else {
          chosen.push(...messages);
        }
      } else {
        chosen.push(first);
      }
    }
    const summaries = pending.filter((item) => item.kind === ITEM_KIND.summary);
    if (chosen.length === 0 && summaries.length === 0) return undefined;
    const wanted = [...summaries, ...chosen].map((item) => item.itemId);
    const claimed = await this.#claimItems(agentId, sessionKey, wanted);
    const claimedIds = new Set(claimed.map((item) => item.itemId));
    const batch = {
      summaries: summaries.filter((item) => claimedIds.has(item.itemId)),
      messages: chosen.filter((item) => claimedIds.has(item.itemId)),
      mode,
      cap: settings.cap,
    };
    return batch.summaries.length + batch.messages.length === 0 ? undefined : batch;
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
      const { runId, ended } = await this.#nextRunId(leader.itemId, leader.lastError === RELEASED_ON_STOP);
      if (ended !== undefined) {
        await this.#completeAll(sessionKey, itemIds);
        this.#emit({ type: "recovered", agentId, sessionKey, itemIds, runId: ended.runId });
        return "recovered";
      }
      const summary = overflowSummaryPrompt({
        droppedCount: batch.summaries.length,
        summaryLines: keptSummaryLines(
          batch.summaries.map((item) => (item.payload as SummaryPayload).line),
          batch.cap,
        ),
      });
      const texts = batch.messages.map(messagePayload);
      // The overflow block goes first, then the message or the collect prompt (OpenClaw 2026.9.6's
      // `buildLocalQueuedPrompt`).
      const prompt = followupPrompt(
        batch.mode === "collect" && texts.length > 0
          ? collectPrompt(texts.map((payload) => ({ text: payload.text, sender: payload.sender })))
          : (texts[0]?.text ?? ""),
        summary,
      );
      const last = texts.at(-1);
      const prepared = await this.#prepare({
        agentId,
        sessionKey,
        text: prompt,
        ...(last === undefined ? {} : this.#routing(last)),
      });
      const outcome = await this.kernel.executeTurn(prepared, {
        prompt: prompt.trim(),
        runId,
        signal: this.#abort.signal,
      });
      if (outcome.status === "aborted" && this.#abort.signal.aborted) {
        // Stopped mid-turn: the message was not answered; it goes back to the queue for the next runner.
        await this.#withLock(sessionKey, async () => {
          for (const item of all)
            await this.store.queue.fail(item.itemId, this.owner, RELEASED_ON_STOP, {
              retryAt: item.availableAt,
            });
        });
        this.#emit({ type: "released", agentId, sessionKey, itemIds });
        return "failed";
      }
      // Delivered before the items are completed: a crash in between leaves a finished run that the next
      // runner finds by its id (recovered, not run again).
      this.#emit({
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
      await this.#completeAll(sessionKey, itemIds);
      return "ran";
    } catch (error) {
      // The turn could not start (store failure, invalid input): release the items for a later try.
      await this.#withLock(sessionKey, async () => {
        for (const item of all) {
          await this.store.queue
            .fail(item.itemId, this.owner, error instanceof Error ? error.message : String(error), {
              retryAt: this.#clock.now() + 1000,
            })
            .catch(() => undefined);
        }
      });
      this.#emit({ type: "error", agentId, sessionKey, itemIds, error });
      return "failed";
    }
  }

  /**
   * The first unused run id of an item; or the run that already ended for it (a crash before completion). An
   * item released by a stopping runner skips its aborted runs: they were cut short, not answered.
   */
  async #nextRunId(itemId: string, skipAborted: boolean): Promise<{ runId: string; ended?: RunRecord }> {
    for (let attempt = 1; ; attempt++) {
      const runId = runIdFor(itemId, attempt);
      const record = await this.store.runs.get(runId);
      if (record === undefined) return { runId };
      if (skipAborted && record.status === "aborted") continue;
      if (FINAL_RUN_STATUSES.has(record.status)) return { runId, ended: record };
      // Interrupted by a crash mid-turn: the message gets a new run.
    }
  }

  async #completeAll(sessionKey: string, itemIds: readonly string[]): Promise<void> {
    await this.#withLock(sessionKey, async () => {
      for (const itemId of itemIds) await this.store.queue.complete(itemId, this.owner);
    });
  }

  // ── queue helpers ───────────────────────────────────────────────────────────────────────────────────

  /** Items available to claim (pending, or claimed by a worker whose lease ran out), oldest first. */
  async #pending(agentId: string, sessionKey?: string): Promise<QueueItem[]> {
    const now = this.#clock.now();
    const scope = { agentId, ...(sessionKey === undefined ? {} : { sessionKey }) };
    // Two status-filtered reads: finished items (most of the table over time) are never read.
    const [pending, claimed] = await Promise.all([
      this.store.queue.list({ ...scope, status: "pending" }),
      this.store.queue.list({ ...scope, status: "claimed" }),
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
  async #claimItems(agentId: string, sessionKey: string, itemIds: readonly string[]): Promise<QueueItem[]> {
    const wanted = new Set(itemIds);
    const claimed: QueueItem[] = [];
    const passed: QueueItem[] = [];
    while (claimed.length < wanted.size) {
      const next = await this.store.queue.claimNext({
        agentId,
        sessionKey,
        owner: this.owner,
        leaseMs: this.#leaseMs,
        now: this.#clock.now(),
      });
      if (next === undefined) break;
      if (wanted.has(next.itemId)) claimed.push(next);
      else passed.push(next);
    }
    for (const item of passed) {
      await this.store.queue.fail(item.itemId, this.owner, "released", { retryAt: item.availableAt });
    }
    return claimed;
  }

  /** Claims and fails one item for good; false when another worker holds it. */
  async #dropItem(agentId: string, sessionKey: string, itemId: string, why: string): Promise<boolean> {
    const [claimed] = await this.#claimItems(agentId, sessionKey, [itemId]);
    if (claimed === undefined) return false;
    await this.store.queue.fail(itemId, this.owner, why);
    return true;
  }

  async #sessionsWithPending(): Promise<{ agentId: string; sessionKey: string }[]> {
    const seen = new Map<string, { agentId: string; sessionKey: string }>();
    for (const agentId of this.#agentIds()) {
      for (const item of await this.#pending(agentId)) {
        if (!seen.has(item.sessionKey)) seen.set(item.sessionKey, { agentId, sessionKey: item.sessionKey });
      }
    }
    return [...seen.values()];
  }

  #agentIds(): string[] {
    return [...new Set([...listAgentIds(this.config), defaultAgentId(this.config)])];
  }

  #withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
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

  // ── sessions and settings ───────────────────────────────────────────────────────────────────────────

  /**
   * The enqueue time of a new item: the clock, but strictly after this runner's previous item. The store
   * orders by enqueue time and then by id, so two messages in the same millisecond keep arrival order.
   */
  #stamp(): number {
    this.#lastStamp = Math.max(this.#clock.now(), this.#lastStamp + 1);
    return this.#lastStamp;
  }

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

  /** Waits until no message has arrived for a busy session for `debounceMs` (OpenClaw's quiet window). */
  async #quietWindow(sessionKey: string, debounceMs: number): Promise<void> {
    for (;;) {
      const last = this.#lastBusyEnqueue.get(sessionKey);
      if (last === undefined || this.#stopped) return;
      const wait = last + debounceMs - this.#clock.now();
      if (wait <= 0) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#sleepers.delete(wake);
          this.#clock.clearTimeout(handle);
          resolve();
        };
        const handle = this.#clock.setTimeout(wake, wait);
        this.#sleepers.add(wake);
      });
    }
  }

  #routing(payload: Pick<MessagePayload, "messageContext" | "queueMode">) {
    return {
      ...(payload.messageContext === undefined ? {} : { messageContext: payload.messageContext }),
      ...(payload.queueMode === undefined ? {} : { queueMode: payload.queueMode }),
    };
  }

  #prepare(inbound: InboundMessage): Promise<PreparedSession> {
    return this.kernel.prepareSession({
      ...(inbound.agentId === undefined ? {} : { agentId: inbound.agentId }),
      ...(inbound.sessionKey === undefined ? {} : { sessionKey: inbound.sessionKey }),
      ...(inbound.messageContext === undefined ? {} : { messageContext: inbound.messageContext }),
      runOptions: {
        entryPoint: "followup",
        useSessionContextTokens: true,
        ...(inbound.queueMode === undefined ? {} : { queueMode: inbound.queueMode }),
      },
    });
  }

  /**
   * The kernel's resolution (inline → session → `byChannel` → `messages.queue` → defaults). The kernel, like
   * OpenClaw, does not read `messages.queue.debounceMs` (only the session's and `debounceMsByChannel`); this
   * runner does, when nothing more specific set the window.
   */
  #settingsOf(prepared: PreparedSession): FollowupSettings {
    const queue = prepared.runtimeContext.queue;
    const configured = prepared.config.messages.queue.debounceMs;
    return {
      mode: queue.mode,
      debounceMs: queue.debounceMs === QUEUE_DEFAULTS.debounceMs ? configured : queue.debounceMs,
      cap: queue.cap,
      dropPolicy: queue.dropPolicy,
    };
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
