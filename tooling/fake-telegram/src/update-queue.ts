// The updates side of the fake: the queue of updates the bot has not confirmed, update ids, getUpdates long
// polling (offset confirmation, `allowed_updates`, the 409 when a second poller arrives or a webhook is set)
// and the webhook methods that switch polling off. Owns the queue and the parked poll; does not own building
// the messages inside updates (inbound-messages.ts) or the HTTP front (http-front.ts).
import type http from "node:http";
import { ApiError } from "./api-error.ts";
import type { CallLog, RecordedCall } from "./call-log.ts";
import { optionalBool, optionalInt, optionalString, optionalStringArray } from "./request-body.ts";
import type { TgUpdate, TgUpdateKind } from "./types.ts";

const ALL_DEFAULT_KINDS: readonly TgUpdateKind[] = [
  "message",
  "edited_message",
  "channel_post",
  "edited_channel_post",
  "callback_query",
];

/** The getUpdates call parked waiting for an update. */
interface Waiter {
  readonly res: http.ServerResponse;
  readonly wake: () => void;
  readonly conflict: () => void;
}

export class UpdateQueue {
  readonly #log: CallLog;
  #queue: TgUpdate[] = [];
  #nextUpdateId: number;
  #allowedKinds: readonly TgUpdateKind[] = ALL_DEFAULT_KINDS;
  #waiter: Waiter | undefined;
  #webhookUrl = "";
  readonly #parkListeners = new Set<() => void>();

  constructor(firstUpdateId: number, log: CallLog) {
    this.#nextUpdateId = firstUpdateId;
    this.#log = log;
  }

  /** Appends an update (the id is assigned) and wakes a waiting long poll. */
  push(update: Omit<TgUpdate, "update_id">): TgUpdate {
    const full: TgUpdate = { update_id: this.#nextUpdateId++, ...update };
    this.#queue.push(full);
    this.#waiter?.wake();
    return full;
  }

  /** Updates not yet confirmed by a getUpdates offset. */
  pending(): readonly TgUpdate[] {
    return [...this.#queue];
  }

  /** The getUpdates method: answers at once, or parks the call until an update, the timeout or a rival. */
  getUpdates(values: Record<string, unknown>, res: http.ServerResponse, call: RecordedCall): void {
    if (this.#webhookUrl !== "") {
      throw new ApiError(
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    }
    const offset = optionalInt(values, "offset");
    const limit = Math.min(100, Math.max(1, optionalInt(values, "limit") ?? 100));
    const timeout = Math.max(0, optionalInt(values, "timeout") ?? 0);
    const allowed = optionalStringArray(values, "allowed_updates");
    if (allowed !== undefined) {
      this.#allowedKinds =
        allowed.length === 0
          ? ALL_DEFAULT_KINDS
          : allowed.filter((kind): kind is TgUpdateKind => ALL_DEFAULT_KINDS.includes(kind as TgUpdateKind));
    }
    this.#waiter?.conflict();
    this.#confirm(offset);
    const ready = this.#deliverable(limit);
    if (ready.length > 0 || timeout === 0) {
      this.#log.answer(res, call, { ok: true, result: ready });
      return;
    }
    const finish = (): void => {
      clearTimeout(timer);
      if (this.#waiter === self) this.#waiter = undefined;
      res.off("close", onClose);
    };
    const onClose = (): void => {
      // the client went away (aborted): nothing was delivered, nothing is confirmed
      finish();
      call.served = "aborted";
    };
    const self: Waiter = {
      res,
      wake: () => {
        const woken = this.#deliverable(limit);
        if (woken.length === 0) return;
        finish();
        this.#log.answer(res, call, { ok: true, result: woken });
      },
      conflict: () => {
        finish();
        this.#log.answer(res, call, {
          ok: false,
          error_code: 409,
          description:
            "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
        });
      },
    };
    const timer = setTimeout(() => {
      finish();
      this.#log.answer(res, call, { ok: true, result: [] });
    }, timeout * 1000);
    res.on("close", onClose);
    this.#waiter = self;
    for (const listener of [...this.#parkListeners]) listener();
  }

  /** Resolves once a getUpdates long poll is parked waiting for an update (at once if one is). */
  waitForLongPoll(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.#waiter !== undefined) return resolve();
      const listener = (): void => {
        this.#parkListeners.delete(listener);
        resolve();
      };
      this.#parkListeners.add(listener);
    });
  }

  /** On close: the parked poll is gone with its connection. */
  forgetParkedPoll(): void {
    this.#waiter = undefined;
  }

  /** Sets a webhook: getUpdates answers 409 until deleteWebhook. */
  setWebhook(url: string): void {
    this.#webhookUrl = url;
  }

  /** The deleteWebhook method (`drop_pending_updates` empties the queue). */
  deleteWebhookMethod(values: Record<string, unknown>): true {
    this.#webhookUrl = "";
    if (optionalBool(values, "drop_pending_updates") === true) this.#queue = [];
    return true;
  }

  /** The setWebhook method. */
  setWebhookMethod(values: Record<string, unknown>): true {
    this.#webhookUrl = optionalString(values, "url") ?? "";
    return true;
  }

  /** The getWebhookInfo method. */
  webhookInfo(): { url: string; has_custom_certificate: false; pending_update_count: number } {
    return { url: this.#webhookUrl, has_custom_certificate: false, pending_update_count: this.#queue.length };
  }

  /** Confirms (drops) updates below `offset`; negative: keeps only the last `-offset` updates. */
  #confirm(offset: number | undefined): void {
    if (offset === undefined || offset === 0) return;
    if (offset < 0) this.#queue = this.#queue.slice(Math.max(0, this.#queue.length + offset));
    else this.#queue = this.#queue.filter((update) => update.update_id >= offset);
  }

  #deliverable(limit: number): TgUpdate[] {
    // updates of kinds the bot did not ask for are dropped, as Telegram never stores them for the bot
    this.#queue = this.#queue.filter((update) =>
      this.#allowedKinds.some((kind) => update[kind] !== undefined),
    );
    return this.#queue.slice(0, limit);
  }
}
