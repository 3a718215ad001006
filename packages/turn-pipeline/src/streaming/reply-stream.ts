// ReplyStream: the one normalisation path from pi's assistant events to what a channel delivers.
// Owns: composing the reasoning-tag stripper, the streaming directive accumulator (partial replies), the block
// chunker and coalescer (block replies), the final-text strippers (final payload list), silent tokens and the
// messaging-tool duplicate filter, and publishing all of it as events of one stream. Callbacks
// (onPartialReply, onBlockReply, onReasoningStream) are subscribers of that stream (`subscribeReplyCallbacks`),
// never separate code paths. Does not own running pi, tool execution or delivery.
//
// Event mapping: text_delta → strip tags → partial + chunker (drained per delta in `text_end` mode);
// text_end → forced drain in `text_end` mode; thinking_delta and hidden tag text → reasoning (mode `stream`);
// toolcall_start or `toolStart()` → forced drain and coalescer flush so text precedes tool output;
// done/error → message end: forced drain, final payload for that message (errors become isError payloads).
import type { AssistantMessageEvent } from "@earendil-works/pi-ai";
import { BlockChunker, type BlockChunking } from "./block-chunker.ts";
import { BlockCoalescer, type CoalesceSettings, type TimerScheduler } from "./block-coalescer.ts";
import { isMessagingToolDuplicate } from "./messaging-dedupe.ts";
import { ReasoningStreamStripper } from "./reasoning-stream.ts";
import { stripReasoningTagsFromText } from "./reasoning-tags.ts";
import { parseReplyDirectives, StreamingDirectiveAccumulator } from "./reply-directives.ts";
import type { ReplyPayload } from "./reply-payload.ts";
import { SILENT_REPLY_TOKEN } from "./silent-tokens.ts";

export type ReasoningMode = "off" | "on" | "stream";

const PARTIAL_SPAN = 256;

export type ReplyStreamOptions = {
  /** `stream` publishes reasoning as it arrives; `on` keeps it for the end; `off` drops it. */
  reasoningMode?: ReasoningMode;
  enforceFinalTag?: boolean;
  /** Block replies; omitted = block streaming off (only partials and the final list). */
  blockStreaming?: {
    chunking: BlockChunking;
    breakMode?: "text_end" | "message_end";
    coalesce?: CoalesceSettings;
  };
  currentMessageId?: string;
  silentToken?: string;
  /** Texts the `message` tool already sent in this turn; matching replies are not delivered again. */
  messagingToolSentTexts?: () => readonly string[];
  timers?: TimerScheduler;
};

export type ReplyStreamEvent =
  | { type: "partial"; text: string; delta: string }
  | { type: "block"; payload: ReplyPayload; sourceText: string }
  | { type: "reasoning"; text: string; delta: string }
  | { type: "message_end"; payload: ReplyPayload | undefined; rawText: string }
  | { type: "final"; payloads: ReplyPayload[]; blocksStreamed: boolean };

export type ReplyStreamListener = (event: ReplyStreamEvent) => void;

export class ReplyStream {
  readonly #options: ReplyStreamOptions;
  readonly #listeners = new Set<ReplyStreamListener>();
  readonly #chunker: BlockChunker | undefined;
  readonly #coalescer: BlockCoalescer | undefined;
  #stripper: ReasoningStreamStripper;
  #partials = new StreamingDirectiveAccumulator();
  #rawText = "";
  #partialText = "";
  #reasoningText = "";
  #blocksStreamed = false;
  #heldDirectives: ReplyPayload = {};
  #heldSource = "";
  #partialPending = "";
  #messageOpen = false;
  readonly #payloads: ReplyPayload[] = [];

  constructor(options: ReplyStreamOptions = {}) {
    this.#options = options;
    this.#stripper = new ReasoningStreamStripper({ enforceFinalTag: options.enforceFinalTag ?? false });
    const blocks = options.blockStreaming;
    if (blocks) {
      this.#chunker = new BlockChunker(blocks.chunking);
      const send = (payload: ReplyPayload, sourceText: string): void => {
        this.#blocksStreamed = true;
        this.#publish({ type: "block", payload, sourceText });
      };
      this.#coalescer = blocks.coalesce
        ? new BlockCoalescer(blocks.coalesce, send, options.timers)
        : undefined;
    }
  }

  subscribe(listener: ReplyStreamListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Feeds one pi assistant event (`message_update.assistantMessageEvent`). */
  handle(event: AssistantMessageEvent): void {
    switch (event.type) {
      case "start":
        this.#startMessage();
        return;
      case "text_delta":
        if (!this.#messageOpen) this.#startMessage();
        this.#pushText(event.delta);
        return;
      case "text_end":
        this.#flushStripper(false);
        if ((this.#options.blockStreaming?.breakMode ?? "text_end") === "text_end") this.#drainBlocks(true);
        return;
      case "thinking_delta":
        this.#pushReasoning(event.delta);
        return;
      case "toolcall_start":
        this.toolStart();
        return;
      case "done":
        this.#endMessage(undefined);
        return;
      case "error":
        this.#endMessage(event.error.errorMessage ?? `assistant ${event.reason}`);
        return;
      default:
        return;
    }
  }

  /** A tool is about to run: deliver pending text first. */
  toolStart(): void {
    this.#flushStripper(false);
    this.#drainBlocks(true);
    this.#coalescer?.flush();
  }

  /** Turn end: publishes and returns the final payload list. */
  finish(): ReplyPayload[] {
    if (this.#messageOpen) this.#endMessage(undefined);
    this.#coalescer?.flush();
    const payloads = [...this.#payloads];
    this.#publish({ type: "final", payloads, blocksStreamed: this.#blocksStreamed });
    return payloads;
  }

  #startMessage(): void {
    if (this.#messageOpen) this.#endMessage(undefined);
    this.#messageOpen = true;
    this.#rawText = "";
    this.#partialText = "";
    this.#stripper = new ReasoningStreamStripper({ enforceFinalTag: this.#options.enforceFinalTag ?? false });
    this.#partials = new StreamingDirectiveAccumulator();
    this.#partialPending = "";
    this.#heldDirectives = {};
    this.#heldSource = "";
  }

  #pushText(delta: string): void {
    this.#rawText += delta;
    this.#applyStripped(this.#stripper.push(delta), false);
  }

  #flushStripper(final: boolean): void {
    if (final) this.#applyStripped(this.#stripper.finish(), true);
  }

  #applyStripped(stripped: { visible: string; reasoning: string }, final: boolean): void {
    if (stripped.reasoning) this.#pushReasoning(stripped.reasoning);
    const visible = stripped.visible;
    const silentToken = this.#options.silentToken ?? SILENT_REPLY_TOKEN;
    this.#feedPartials(visible, final, silentToken);
    if (visible && this.#chunker) {
      this.#chunker.append(visible);
      if ((this.#options.blockStreaming?.breakMode ?? "text_end") === "text_end") this.#drainBlocks(false);
    }
  }

  /**
   * Partial replies go through the directive accumulator at content positions (after each newline and every
   * PARTIAL_SPAN characters of a line), not at delta boundaries: the partial text is then the same however
   * the deltas were split, and 1-byte deltas do not cost one accumulator pass each.
   */
  #feedPartials(visible: string, final: boolean, silentToken: string): void {
    let rest = visible;
    while (rest) {
      const newline = rest.indexOf("\n");
      const room = PARTIAL_SPAN - this.#partialPending.length;
      const take = Math.min(newline === -1 ? rest.length : newline + 1, room);
      this.#partialPending += rest.slice(0, take);
      rest = rest.slice(take);
      if (this.#partialPending.length >= PARTIAL_SPAN || this.#partialPending.endsWith("\n"))
        this.#consumePartial(false, silentToken);
    }
    if (final) this.#consumePartial(true, silentToken);
  }

  #consumePartial(final: boolean, silentToken: string): void {
    const chunk = this.#partialPending;
    this.#partialPending = "";
    if (!chunk && !final) return;
    const partial = this.#partials.consume(chunk, { final, silentToken });
    if (partial?.text) {
      this.#partialText += partial.text;
      this.#publish({ type: "partial", text: this.#partialText, delta: partial.text });
    }
  }

  #pushReasoning(delta: string): void {
    const mode = this.#options.reasoningMode ?? "off";
    if (mode === "off" || !delta) return;
    this.#reasoningText += delta;
    if (mode === "stream") this.#publish({ type: "reasoning", text: this.#reasoningText, delta });
  }

  #drainBlocks(force: boolean): void {
    this.#chunker?.drain(force, (chunk) => this.#emitBlock(chunk.text, chunk.sourceText));
  }

  #emitBlock(text: string, chunkSource: string): void {
    const parsed = this.#toPayload(text.trimEnd());
    const sourceText = this.#heldSource + chunkSource;
    if (!parsed) {
      // a block with only directives: its reply target and voice flag carry to the next block
      const directives = parseReplyDirectives(text, { currentMessageId: this.#options.currentMessageId });
      if (directives.replyToTag || directives.audioAsVoice) {
        this.#heldDirectives = {
          ...this.#heldDirectives,
          ...(directives.replyToId !== undefined ? { replyToId: directives.replyToId } : {}),
          ...(directives.replyToCurrent ? { replyToCurrent: true } : {}),
          ...(directives.audioAsVoice ? { audioAsVoice: true } : {}),
        };
      }
      this.#heldSource = sourceText;
      return;
    }
    const payload = { ...this.#heldDirectives, ...parsed };
    this.#heldDirectives = {};
    this.#heldSource = "";
    if (this.#coalescer) this.#coalescer.enqueue(payload, sourceText);
    else {
      this.#blocksStreamed = true;
      this.#publish({ type: "block", payload, sourceText });
    }
  }

  #toPayload(text: string): ReplyPayload | undefined {
    const parsed = parseReplyDirectives(text, {
      currentMessageId: this.#options.currentMessageId,
      silentToken: this.#options.silentToken ?? SILENT_REPLY_TOKEN,
    });
    if (parsed.isSilent) return undefined;
    if (!parsed.text && !parsed.mediaUrls?.length) return undefined;
    const sent = this.#options.messagingToolSentTexts?.() ?? [];
    if (parsed.text && !parsed.mediaUrls?.length && isMessagingToolDuplicate(parsed.text, sent))
      return undefined;
    return {
      ...(parsed.text ? { text: parsed.text } : {}),
      ...(parsed.mediaUrls?.length ? { mediaUrls: parsed.mediaUrls } : {}),
      ...(parsed.replyToId !== undefined ? { replyToId: parsed.replyToId } : {}),
      ...(parsed.replyToCurrent ? { replyToCurrent: true } : {}),
      ...(parsed.audioAsVoice ? { audioAsVoice: true } : {}),
    };
  }

  #endMessage(errorMessage: string | undefined): void {
    if (!this.#messageOpen && errorMessage === undefined) return;
    this.#flushStripper(true);
    this.#drainBlocks(true);
    this.#messageOpen = false;
    const finalText = this.#options.enforceFinalTag
      ? visibleOfWhole(this.#rawText, true)
      : stripReasoningTagsFromText(this.#rawText);
    let payload = this.#toPayload(finalText);
    if (errorMessage !== undefined)
      payload = { ...(payload ?? {}), text: payload?.text ?? errorMessage, isError: true };
    if (payload) this.#payloads.push(payload);
    this.#publish({ type: "message_end", payload, rawText: this.#rawText });
  }

  #publish(event: ReplyStreamEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}

function visibleOfWhole(text: string, enforceFinalTag: boolean): string {
  const stripper = new ReasoningStreamStripper({ enforceFinalTag });
  return (stripper.push(text).visible + stripper.finish().visible).trim();
}

export type ReplyCallbacks = {
  onPartialReply?: (payload: { text: string; delta: string }) => void;
  onBlockReply?: (payload: ReplyPayload) => void;
  onReasoningStream?: (payload: { text: string; delta: string }) => void;
};

/** Callbacks as subscribers of the one stream. */
export function subscribeReplyCallbacks(stream: ReplyStream, callbacks: ReplyCallbacks): () => void {
  return stream.subscribe((event) => {
    if (event.type === "partial") callbacks.onPartialReply?.({ text: event.text, delta: event.delta });
    else if (event.type === "block") callbacks.onBlockReply?.(event.payload);
    else if (event.type === "reasoning")
      callbacks.onReasoningStream?.({ text: event.text, delta: event.delta });
  });
}
