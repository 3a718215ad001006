// The long-polling loop. Owns delivery guarantees: updates go to the handler one at a time in update-id order;
// the offset moves past an update only after its handler resolved (at-least-once), and the update id is
// recorded as handled before the offset is saved, so a crash between the two is caught at the next start and
// the handler never sees an update twice. `stop()` lets the handler in flight finish, saves its offset, and
// leaves the rest of the batch unconfirmed for the next poller. Polling failures back off and go on; a
// rejected token (401) or a store that cannot write stops the loop (reported through `onError`).
// Does not own normalisation (inbound.ts) or HTTP (bot-api.ts).
import { abortableSleep, ChannelError } from "@agent-kernel/channels-core";
import { CHANNEL_ID, type TelegramBotApi } from "./bot-api.ts";
import type { TelegramUpdate } from "./inbound.ts";
import type { OffsetStore } from "./offset-store.ts";

export interface PollerOptions {
  readonly api: TelegramBotApi;
  readonly store: OffsetStore;
  readonly timeoutSeconds: number;
  readonly allowedUpdates: readonly string[];
  /** Delivers one update (normalised and handed to the inbound handler); resolves once it is accepted. */
  readonly deliver: (update: TelegramUpdate) => Promise<void>;
  readonly onError: (error: Error) => void;
  readonly signal: AbortSignal;
  /** Handler attempts per update before it is reported and skipped (default 3). */
  readonly handlerAttempts: number;
  readonly backoff: { readonly baseDelayMs: number; readonly maxDelayMs: number };
}

/** The saved position: read before the loop starts so a broken store fails `start()`, not the loop. */
export interface PollPosition {
  readonly offset: number | undefined;
  readonly handled: readonly number[];
}

export async function loadPollPosition(
  store: OffsetStore,
  botId: number,
  onError: (error: Error) => void,
): Promise<PollPosition> {
  if (store.claimForBot !== undefined && !(await store.claimForBot(botId))) {
    onError(
      new ChannelError(
        CHANNEL_ID,
        `the saved polling offset belonged to another bot; starting fresh for bot ${botId}`,
        {
          retryable: false,
        },
      ),
    );
  }
  const offset = await store.load();
  const handled = store.loadHandled === undefined ? [] : await store.loadHandled();
  return { offset, handled };
}

/** Resolves when the loop ends: on abort, a rejected token or a store failure. */
export async function runPolling(options: PollerOptions, position: PollPosition): Promise<void> {
  const { api, store, signal } = options;
  let offset = position.offset;
  const handled = new Set(position.handled);
  let failures = 0;
  const backoff = (attempt: number): number =>
    Math.min(options.backoff.maxDelayMs, options.backoff.baseDelayMs * 2 ** Math.max(0, attempt - 1));

  while (!signal.aborted) {
    let updates: TelegramUpdate[];
    try {
      // the HTTP wait outlives Telegram's by a margin; past it the connection is presumed dead
      const deadline = AbortSignal.timeout((options.timeoutSeconds + 15) * 1000);
      updates = await api.call<TelegramUpdate[]>(
        "getUpdates",
        {
          ...(offset === undefined ? {} : { offset }),
          timeout: options.timeoutSeconds,
          allowed_updates: options.allowedUpdates,
        },
        { signal: AbortSignal.any([signal, deadline]), retry: false },
      );
      failures = 0;
    } catch (error) {
      if (signal.aborted) return;
      const failure = asError(error);
      options.onError(failure);
      if (failure instanceof ChannelError && failure.status === 401) return;
      failures += 1;
      const wait =
        failure instanceof ChannelError && failure.retryAfterMs !== undefined
          ? failure.retryAfterMs
          : backoff(failures);
      if (!(await sleepUnlessAborted(wait, signal))) return;
      continue;
    }
    for (const update of updates) {
      if (signal.aborted) return;
      const id = update.update_id;
      if (offset !== undefined && id < offset) continue;
      if (!handled.has(id)) {
        const accepted = await deliverWithRetries(update, options, backoff);
        if (accepted === "aborted") return;
        try {
          await store.markHandled?.(id);
        } catch (error) {
          options.onError(storeFailure(error, `record update ${id} as handled`));
          return;
        }
        handled.add(id);
      }
      offset = id + 1;
      try {
        await store.save(offset);
      } catch (error) {
        options.onError(storeFailure(error, `save offset ${offset}`));
        return;
      }
      for (const seen of handled) if (seen < offset) handled.delete(seen);
    }
  }
}

async function deliverWithRetries(
  update: TelegramUpdate,
  options: PollerOptions,
  backoff: (attempt: number) => number,
): Promise<"delivered" | "skipped" | "aborted"> {
  for (let attempt = 1; ; attempt++) {
    try {
      await options.deliver(update);
      return "delivered";
    } catch (error) {
      if (attempt >= options.handlerAttempts) {
        options.onError(
          new ChannelError(
            CHANNEL_ID,
            `the inbound handler failed ${attempt} times for update ${update.update_id}; skipped (${asError(error).message})`,
            { retryable: false, cause: error },
          ),
        );
        return "skipped";
      }
      if (!(await sleepUnlessAborted(backoff(attempt), options.signal))) return "aborted";
    }
  }
}

/** False when the signal aborted the sleep. */
async function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await abortableSleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}

function storeFailure(error: unknown, what: string): ChannelError {
  return new ChannelError(CHANNEL_ID, `polling stopped: cannot ${what} (${asError(error).message})`, {
    retryable: false,
    cause: error,
  });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
