// Block coalescing: merges small blocks from the chunker into fewer channel messages.
// Owns: OpenClaw's post-chunker coalescing (join with "\n\n" / "\n" / " " by break preference, emit once the
// merged text reaches minChars, when the next block would pass maxChars, after `idleMs` without a new block,
// or on flush), per-channel minimums (Discord, Signal and Slack default to 1500), and never merging blocks
// that carry media or a different reply target. The clock is injected so idle flushing is testable without
// sleeping. Does not own chunking (block-chunker.ts).
import type { BreakPreference } from "@agent-kernel/markdown";
import type { ReplyPayload } from "./reply-payload.ts";

export const COALESCE_MIN_CHARS_BY_CHANNEL: Readonly<Record<string, number>> = {
  discord: 1500,
  signal: 1500,
  slack: 1500,
};
export const DEFAULT_COALESCE_IDLE_MS = 1000;

export type CoalesceSettings = { idleMs: number; minChars: number; maxChars: number; joiner: string };

/** A timer source: `schedule` returns a cancel function. Real time by default, a manual clock in tests. */
export type TimerScheduler = { schedule(callback: () => void, delayMs: number): () => void };

export const realTimers: TimerScheduler = {
  schedule(callback, delayMs) {
    const handle = setTimeout(callback, delayMs);
    return () => clearTimeout(handle);
  },
};

/** Resolves coalescing from config: explicit values win, then the channel minimum, then the chunk minimum. */
export function resolveCoalesceSettings(params: {
  chunk: { minChars: number; maxChars: number; breakPreference?: BreakPreference };
  coalesce?: { idleMs?: number; minChars?: number | undefined; maxChars?: number | undefined };
  channel?: string;
}): CoalesceSettings {
  const channelMin = params.channel ? COALESCE_MIN_CHARS_BY_CHANNEL[params.channel.toLowerCase()] : undefined;
  const maxChars = Math.max(1, params.coalesce?.maxChars ?? params.chunk.maxChars);
  const minChars = Math.min(
    maxChars,
    Math.max(1, params.coalesce?.minChars ?? channelMin ?? params.chunk.minChars),
  );
  const preference = params.chunk.breakPreference ?? "paragraph";
  return {
    idleMs: params.coalesce?.idleMs ?? DEFAULT_COALESCE_IDLE_MS,
    minChars,
    maxChars,
    joiner: preference === "paragraph" ? "\n\n" : preference === "newline" ? "\n" : " ",
  };
}

export class BlockCoalescer {
  readonly #settings: CoalesceSettings;
  readonly #timers: TimerScheduler;
  readonly #send: (payload: ReplyPayload, sourceText: string) => void;
  #pending: ReplyPayload | undefined;
  #pendingSource = "";
  #cancelIdle: (() => void) | undefined;

  constructor(
    settings: CoalesceSettings,
    send: (payload: ReplyPayload, sourceText: string) => void,
    timers: TimerScheduler = realTimers,
  ) {
    this.#settings = settings;
    this.#send = send;
    this.#timers = timers;
  }

  /** `sourceText` is the streamed text behind the block (kept alongside for tracing and tests). */
  enqueue(payload: ReplyPayload, sourceText = payload.text ?? ""): void {
    const text = payload.text ?? "";
    const mergeable = !payload.mediaUrls?.length && !payload.isError && !payload.audioAsVoice;
    if (!mergeable) {
      this.flush();
      this.#send(payload, sourceText);
      return;
    }
    const pending = this.#pending;
    if (
      pending &&
      (pending.replyToId !== payload.replyToId ||
        (pending.text ?? "").length + this.#settings.joiner.length + text.length > this.#settings.maxChars)
    ) {
      this.flush();
    }
    this.#pendingSource = this.#pending
      ? `${this.#pendingSource}${this.#settings.joiner}${sourceText}`
      : sourceText;
    this.#pending = this.#pending
      ? { ...this.#pending, text: `${this.#pending.text ?? ""}${this.#settings.joiner}${text}` }
      : { ...payload };
    if ((this.#pending.text ?? "").length >= this.#settings.minChars) {
      this.flush();
      return;
    }
    this.#cancelIdle?.();
    this.#cancelIdle = this.#timers.schedule(() => {
      this.#cancelIdle = undefined;
      this.flush();
    }, this.#settings.idleMs);
  }

  flush(): void {
    this.#cancelIdle?.();
    this.#cancelIdle = undefined;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending) this.#send(pending, this.#pendingSource);
    this.#pendingSource = "";
  }
}
