// The adapter's memory of handled inbound work (Slack event ids, message keys), so a redelivered event is
// acknowledged without being handled twice — within one process (an in-memory set in front, and one attempt
// per key however many deliveries arrive at once) and across restarts (a mark per key in the session store's
// channel state, `store.channelState`, under (`slack`, account, `dedupe:<key>`), expiring after `ttlMs`:
// Slack retries an event for about an hour, the default keeps marks two hours). Only accepted work is marked,
// so a retry after a failed handler is handled again. Owns the order check → handle → mark and the periodic
// purge of expired marks. Does not own what a key means (channel.ts) nor the store (reached through a
// structural interface, as the layer rules keep channels-* from importing session-store).
import { ChannelError } from "@agent-kernel/channels-core";
import { ExpiringSet } from "./expiring-set.ts";
import { SLACK_CHANNEL_ID } from "./web-api.ts";

/** How long a handled event stays marked in the channel state: Slack retries for up to about an hour. */
export const SLACK_DEDUPE_TTL_MS = 2 * 60 * 60 * 1000;
/** At most one `purgeExpired` per this interval (the first mark purges at once). */
export const SLACK_DEDUPE_PURGE_INTERVAL_MS = 10 * 60 * 1000;
/** Channel-state keys this log writes start with this. */
export const SLACK_DEDUPE_KEY_PREFIX = "dedupe:";

/**
 * The part of `@agent-kernel/session-store`'s `ChannelStateApi` (`store.channelState`) the log uses; any
 * object with these methods works. Without `purgeExpired` expired marks are skipped but never deleted here.
 */
export interface SlackChannelStateLike {
  get(
    channel: string,
    accountId: string,
    key: string,
    options?: { readonly now?: number },
  ): Promise<{ readonly value: unknown } | undefined>;
  put(
    channel: string,
    accountId: string,
    key: string,
    value: unknown,
    options?: { readonly expiresAt?: number; readonly now?: number },
  ): Promise<unknown>;
  purgeExpired?(options?: { readonly now?: number }): Promise<number>;
}

/**
 * What a piece of work did: `handled` is remembered in memory and marked in the channel state, `ignored`
 * (nothing to do, e.g. the bot's own message) only in memory, as redoing it after a restart costs nothing;
 * `failed` is not remembered, so a redelivery tries again.
 */
export type WorkOutcome = "handled" | "ignored" | "failed";

export interface HandledLogOptions {
  readonly accountId: string;
  /** How long the in-memory set remembers a key (the fast path; the channel state backs it up). */
  readonly memoryTtlMs: number;
  /** Where marks survive a restart; unset = memory only. */
  readonly channelState?: SlackChannelStateLike;
  /** Lifetime of a persisted mark (default 2 h). */
  readonly ttlMs?: number;
  readonly purgeIntervalMs?: number;
  readonly now?: () => number;
  /** Channel-state failures (a failed lookup also refuses the delivery, so Slack redelivers it). */
  readonly onError?: (error: Error) => void;
}

export class HandledLog {
  readonly #accountId: string;
  readonly #memory: ExpiringSet;
  readonly #state: SlackChannelStateLike | undefined;
  readonly #ttlMs: number;
  readonly #purgeIntervalMs: number;
  readonly #now: () => number;
  readonly #onError: (error: Error) => void;
  readonly #inFlight = new Map<string, Promise<boolean>>();
  #lastPurge = Number.NEGATIVE_INFINITY;

  constructor(options: HandledLogOptions) {
    const ttlMs = options.ttlMs ?? SLACK_DEDUPE_TTL_MS;
    if (!Number.isFinite(ttlMs) || ttlMs <= 0)
      throw new Error(`slack: dedupeTtlMs must be a positive number of ms (got ${String(options.ttlMs)})`);
    this.#accountId = options.accountId;
    this.#memory = new ExpiringSet(options.memoryTtlMs);
    this.#state = options.channelState;
    this.#ttlMs = ttlMs;
    this.#purgeIntervalMs = options.purgeIntervalMs ?? SLACK_DEDUPE_PURGE_INTERVAL_MS;
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError ?? (() => {});
  }

  /**
   * Runs `work` unless `key` is already handled; true when the key is handled or ignored (now or before),
   * false when `work` failed or the channel state could not be read. Deliveries of a key while an attempt
   * runs share it.
   */
  once(key: string, work: () => Promise<WorkOutcome>): Promise<boolean> {
    if (this.#memory.has(key, this.#now())) return Promise.resolve(true);
    const running = this.#inFlight.get(key);
    if (running) return running;
    const attempt = this.#attempt(key, work).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, attempt);
    return attempt;
  }

  async #attempt(key: string, work: () => Promise<WorkOutcome>): Promise<boolean> {
    const marked = await this.#isMarked(key);
    if (marked === undefined) return false;
    if (marked) {
      this.#memory.add(key, this.#now());
      return true;
    }
    let outcome: WorkOutcome;
    try {
      outcome = await work();
    } catch (error) {
      this.#report(`handling ${key} failed`, error);
      return false;
    }
    if (outcome === "failed") return false;
    this.#memory.add(key, this.#now());
    if (outcome === "handled") await this.#mark(key);
    return true;
  }

  /** Whether a live mark exists; undefined when the lookup failed. */
  async #isMarked(key: string): Promise<boolean | undefined> {
    if (!this.#state) return false;
    try {
      const entry = await this.#state.get(SLACK_CHANNEL_ID, this.#accountId, stateKey(key), {
        now: this.#now(),
      });
      return entry !== undefined;
    } catch (error) {
      this.#report(
        `cannot read the handled mark of ${key}; refusing the delivery so Slack retries it`,
        error,
      );
      return undefined;
    }
  }

  /** Marks the key handled; a failed write is reported (the work is done and stays acknowledged). */
  async #mark(key: string): Promise<void> {
    const state = this.#state;
    if (!state) return;
    const now = this.#now();
    try {
      await state.put(
        SLACK_CHANNEL_ID,
        this.#accountId,
        stateKey(key),
        { handledAt: now },
        { expiresAt: now + this.#ttlMs, now },
      );
    } catch (error) {
      this.#report(
        `cannot record ${key} as handled; a redelivery after a restart would be handled again`,
        error,
      );
    }
    if (state.purgeExpired && now - this.#lastPurge >= this.#purgeIntervalMs) {
      this.#lastPurge = now;
      try {
        await state.purgeExpired({ now });
      } catch (error) {
        this.#report("cannot purge expired channel state", error);
      }
    }
  }

  #report(message: string, cause: unknown): void {
    const detail = cause instanceof Error ? cause.message : String(cause);
    this.#onError(new ChannelError(SLACK_CHANNEL_ID, `${message}: ${detail}`, { retryable: true, cause }));
  }
}

function stateKey(key: string): string {
  return `${SLACK_DEDUPE_KEY_PREFIX}${key}`;
}
