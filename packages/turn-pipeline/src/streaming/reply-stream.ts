// ReplyStream: the one normalisation path from pi's assistant events to what a channel delivers.
// Owns: batching the deltas, composing the reasoning-tag stripper, the partial text (partial-text.ts), the block
// chunker and coalescer (block replies), the final-text strippers (final payload list) and the payloads
// (reply-payloads.ts: directives, silent tokens, the messaging-tool duplicate filter), and publishing all of it
// as events of one stream. Callbacks (onPartialReply, onBlockReply, onReasoningStream) are subscribers of that
// stream (reply-callbacks.ts), never separate code paths. Does not own running pi, tool execution or delivery.
//
// Event mapping: text_delta → collected until INPUT_BATCH characters arrived or the event loop turns (the
// deltas of one network read are processed together), then strip tags → partial text (unless
// `partials: false`, partial-text.ts) + chunker, both fed at content positions (each line end, every
// PARTIAL_SPAN characters of a line) and the chunker drained there in `text_end` mode, so block boundaries and
// the partial text do not depend on how the provider split the deltas (OpenClaw drains per delta; its block
// boundaries move with the deltas). The partial text of a processed batch's lines is one event, published
// before that batch's blocks. After each processed batch the decided start of the line still arriving is
// published as partial text too (a preview: text shows as it arrives, never text the line's end could still
// hide); text_end → forced drain in `text_end` mode; thinking_delta, tool start,
// done and error first process the collected deltas, so ordering is kept; thinking_delta and hidden tag
// text → reasoning (mode `stream`); toolcall_start or `toolStart()` → forced drain and coalescer flush so text precedes tool output;
// done/error → message end: forced drain, final payload for that message (errors become isError payloads).
// The final payload's whole-text passes run on a skeleton collected while the text streams, in which the
// paragraphs no pass can change stand in as short keys (final-text-skeleton.ts), so the end of a long message
// does not strip tags and parse directives over all of it again; the result is the same.

import { type BlockChunk, BlockChunker, type BlockChunking } from "@agent-kernel/markdown";
import type { AssistantMessageEvent } from "@earendil-works/pi-ai";
import { BlockCoalescer, type CoalesceSettings, type TimerScheduler } from "./block-coalescer.ts";
import { FinalTextSkeleton } from "./final-text-skeleton.ts";
import { PARTIAL_SPAN, PartialText } from "./partial-text.ts";
import { ReasoningStreamStripper } from "./reasoning-stream.ts";
import { stripReasoningTagsFromText } from "./reasoning-tags.ts";
import type { ReplyPayload } from "./reply-payload.ts";
import { BlockDirectiveCarry, type ReplyPayloadOptions, toReplyPayload } from "./reply-payloads.ts";
import { SILENT_REPLY_TOKEN } from "./silent-tokens.ts";
import { decodeCodeUnits, TextCollector } from "./text-collector.ts";

export type ReasoningMode = "off" | "on" | "stream";

/** Deltas are collected until this many characters arrived or the event loop turns (see `handle`). */
const INPUT_BATCH = 4096;
/** #pendingCodes until a one-code-unit delta needs the buffer. */
const NO_CODES = new Uint16Array(0);

export type ReplyStreamOptions = {
  /** `stream` publishes reasoning as it arrives; `on` keeps it for the end; `off` drops it. */
  reasoningMode?: ReasoningMode;
  enforceFinalTag?: boolean;
  /**
   * Publish `partial` events (default true): after each processed batch (the decided start of the line
   * still arriving) and at each content position. Off for a consumer that never shows partial text (a channel
   * that streams blocks or only sends the final reply): the per-line directive and silent-token pass that
   * partial text needs is then skipped. Blocks, reasoning and the final payloads are the same either way.
   */
  partials?: boolean;
  /** Characters of deltas collected before they are processed when the event loop has not turned (default 4096; tests use small ones). */
  inputBatchChars?: number;
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
  /** Replaced, never changed in place: a listener added or removed while an event is published takes effect from the next event. */
  #listeners: readonly ReplyStreamListener[] = [];
  readonly #chunker: BlockChunker | undefined;
  readonly #coalescer: BlockCoalescer | undefined;
  #stripper: ReasoningStreamStripper;
  #partial: PartialText;
  #finalSkeleton = new FinalTextSkeleton();
  #rawText = new TextCollector();
  #reasoningText = "";
  #blocksStreamed = false;
  readonly #payloadOptions: ReplyPayloadOptions;
  #blockCarry: BlockDirectiveCarry;
  /** Characters of the current line since its last content position (under PARTIAL_SPAN). */
  #heldLength = 0;
  readonly #partialsOn: boolean;
  /** A `setImmediate` that processes the collected deltas is pending. */
  #processScheduled = false;
  readonly #processOnTurn = (): void => {
    this.#processScheduled = false;
    try {
      this.#processPending();
    } catch (error) {
      // a listener threw: outside any caller's stack here, so the next call into the stream throws it
      this.#deferredError ??= { error };
    }
  };
  /** What a listener threw while the collected deltas were processed on an event-loop turn. */
  #deferredError: { readonly error: unknown } | undefined;
  /** How many code units #collect's fast path may hold before #collectText takes over (see #refreshCodeRoom). */
  #codeRoom = 0;
  readonly #silentToken: string;
  readonly #drainEachPiece: boolean;
  readonly #emitChunk = (chunk: BlockChunk): void => this.#emitBlock(chunk.text, chunk.sourceText);
  readonly #publishPartial = (text: string, delta: string): void =>
    this.#publish({ type: "partial", text, delta });
  #pendingText = "";
  /**
   * One-code-unit deltas, as code units, after #pendingText: a string per delta would be one allocation per
   * delta (a rope node), and millions of them cost more in young-generation collections than the rest of
   * the per-delta work. Turned into a string (exactly these code units) when the text is processed.
   */
  #pendingCodes: Uint16Array = NO_CODES;
  /**
   * The collected code units OR-ed together: below 256, they fit a one-byte string. (OR-ing them once per
   * batch instead, in the decode, took 3 % more instructions for 1-byte deltas: counted with valgrind.)
   */
  #pendingCodeBits = 0;
  readonly #inputBatch: number;
  #pendingCodeCount = 0;
  #messageOpen = false;
  /** The pieces (see #newPieces) are as the constructor made them: no message used them yet. */
  #piecesFresh = true;
  readonly #payloads: ReplyPayload[] = [];

  constructor(options: ReplyStreamOptions = {}) {
    this.#options = options;
    this.#silentToken = options.silentToken ?? SILENT_REPLY_TOKEN;
    this.#partialsOn = options.partials ?? true;
    this.#inputBatch = Math.max(1, Math.floor(options.inputBatchChars ?? INPUT_BATCH));
    this.#drainEachPiece =
      options.blockStreaming !== undefined && (options.blockStreaming.breakMode ?? "text_end") === "text_end";
    this.#stripper = new ReasoningStreamStripper({ enforceFinalTag: options.enforceFinalTag ?? false });
    this.#partial = new PartialText(this.#silentToken, this.#publishPartial);
    this.#payloadOptions = {
      currentMessageId: options.currentMessageId,
      silentToken: this.#silentToken,
      messagingToolSentTexts: options.messagingToolSentTexts,
    };
    this.#blockCarry = new BlockDirectiveCarry(this.#payloadOptions);
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
    if (!this.#listeners.includes(listener)) this.#listeners = [...this.#listeners, listener];
    return () => {
      this.#listeners = this.#listeners.filter((subscribed) => subscribed !== listener);
    };
  }

  /** Feeds one pi assistant event (`message_update.assistantMessageEvent`). */
  handle(event: AssistantMessageEvent): void {
    // hot path (one call per provider delta): only collect; the text is processed in batches, when
    // INPUT_BATCH characters arrived or the event loop turns (pi delivers the deltas of one network read in
    // one turn), whichever comes first; every other event processes them first, so order is kept. Kept small
    // so that a caller's loop inlines it, and only `event`'s fields are passed on: an event object that is
    // only read need not be allocated (V8's escape analysis), one handed to another call must be.
    const type = event.type;
    if (type === "text_delta") this.#collect(event.delta);
    else if (type === "thinking_delta") this.#thinkingDelta(event.delta);
    else if (type === "error") this.#endMessage(event.error.errorMessage ?? `assistant ${event.reason}`);
    else this.#handleEvent(type);
  }

  /**
   * One delta. One-code-unit deltas go into a code-unit buffer (no allocation per delta); the rest, and the
   * first delta of a batch, take #collectText.
   */
  #collect(delta: string): void {
    const count = this.#pendingCodeCount;
    if (delta.length !== 1 || count + 1 >= this.#codeRoom) {
      this.#collectText(delta);
      return;
    }
    const code = delta.charCodeAt(0);
    this.#pendingCodes[count] = code;
    this.#pendingCodeBits |= code;
    this.#pendingCodeCount = count + 1;
  }

  /** #collect's other cases: a longer delta, the first of a batch, the one that fills it. */
  #collectText(delta: string): void {
    this.#throwDeferred();
    if (!this.#messageOpen) this.#startMessage();
    if (!this.#processScheduled) this.#scheduleProcessing();
    if (delta.length === 1) {
      // made on the first one-code-unit delta: a stream whose deltas are longer (most providers') never needs it
      if (this.#pendingCodes.length === 0) this.#pendingCodes = new Uint16Array(this.#inputBatch);
      const count = this.#pendingCodeCount + 1;
      const code = delta.charCodeAt(0);
      this.#pendingCodes[count - 1] = code;
      this.#pendingCodeBits |= code;
      this.#pendingCodeCount = count;
      if (this.#pendingText.length + count >= this.#inputBatch) this.#processPending();
    } else {
      // longer deltas are concatenated (a rope, flattened once when processed)
      const pending = this.#takePending() + delta;
      this.#pendingText = pending;
      if (pending.length >= this.#inputBatch) this.#processPending();
    }
    this.#refreshCodeRoom();
  }

  /** What #collect's one-code-unit path may still take: none unless a message is open and processing is scheduled. */
  #refreshCodeRoom(): void {
    this.#codeRoom =
      this.#messageOpen && this.#processScheduled && this.#pendingCodes.length > 0
        ? this.#inputBatch - this.#pendingText.length
        : 0;
  }

  #thinkingDelta(delta: string): void {
    this.#throwDeferred();
    this.#processPending();
    this.#pushReasoning(delta);
  }

  #scheduleProcessing(): void {
    this.#processScheduled = true;
    setImmediate(this.#processOnTurn);
  }

  /** Throws (once) what a listener threw during processing on an event-loop turn. */
  #throwDeferred(): void {
    const deferred = this.#deferredError;
    if (deferred === undefined) return;
    this.#deferredError = undefined;
    throw deferred.error;
  }

  #handleEvent(type: AssistantMessageEvent["type"]): void {
    this.#throwDeferred();
    switch (type) {
      case "start":
        this.#startMessage();
        return;
      case "text_end":
        this.#processPending();
        if ((this.#options.blockStreaming?.breakMode ?? "text_end") === "text_end") this.#drainBlocks(true);
        return;
      case "toolcall_start":
        this.toolStart();
        return;
      case "done":
        this.#endMessage(undefined);
        return;
      default:
        return;
    }
  }

  /** A tool is about to run: deliver pending text first. */
  toolStart(): void {
    this.#throwDeferred();
    this.#processPending();
    this.#drainBlocks(true);
    this.#coalescer?.flush();
  }

  /** Turn end: publishes and returns the final payload list. */
  finish(): ReplyPayload[] {
    this.#throwDeferred();
    this.#applyPending();
    if (this.#messageOpen) this.#endMessage(undefined);
    this.#coalescer?.flush();
    const payloads = [...this.#payloads];
    this.#publish({ type: "final", payloads, blocksStreamed: this.#blocksStreamed });
    return payloads;
  }

  #startMessage(): void {
    if (this.#messageOpen) this.#endMessage(undefined);
    this.#messageOpen = true;
    // The constructor's pieces serve the first message; every later one gets new ones.
    if (this.#piecesFresh) this.#piecesFresh = false;
    else this.#newPieces();
    this.#heldLength = 0;
    this.#pendingText = "";
    this.#pendingCodeCount = 0;
    this.#pendingCodeBits = 0;
  }

  /** A message's own pieces: its raw text, reasoning stripper, partial text, skeleton and directive carry. */
  #newPieces(): void {
    this.#rawText = new TextCollector();
    this.#stripper = new ReasoningStreamStripper({ enforceFinalTag: this.#options.enforceFinalTag ?? false });
    this.#partial = new PartialText(this.#silentToken, this.#publishPartial);
    this.#finalSkeleton = new FinalTextSkeleton();
    this.#blockCarry = new BlockDirectiveCarry(this.#payloadOptions);
  }

  /** A processed batch: the collected deltas applied, with the partial text's preview of the line arriving. */
  #processPending(): void {
    this.#applyPending(true);
  }

  /** Runs the collected deltas through the stripper, the partial text and the chunker; false: there were none. */
  #applyPending(preview = false): boolean {
    const text = this.#takePending();
    this.#pendingText = "";
    this.#refreshCodeRoom();
    if (!text) return false;
    this.#rawText.append(text);
    if (!this.#options.enforceFinalTag) this.#finalSkeleton.push(text);
    this.#applyStripped(this.#stripper.push(text), false, preview);
    return true;
  }

  /** The collected deltas as one string (#pendingText, then the collected code units). */
  #takePending(): string {
    const count = this.#pendingCodeCount;
    if (count === 0) return this.#pendingText;
    this.#pendingCodeCount = 0;
    const codes = decodeCodeUnits(this.#pendingCodes, count, this.#pendingCodeBits);
    this.#pendingCodeBits = 0;
    return this.#pendingText === "" ? codes : this.#pendingText + codes;
  }

  #applyStripped(stripped: { visible: string; reasoning: string }, final: boolean, preview = false): void {
    if (stripped.reasoning) this.#pushReasoning(stripped.reasoning);
    this.#feedVisible(stripped.visible, final, preview);
  }

  /**
   * Visible text goes to the partial text (which gives it to its directive accumulator at content positions
   * and publishes what the call added, before any block of it: partial-text.ts) and to the chunker at content
   * positions: after each newline and every PARTIAL_SPAN characters of a line, never at delta boundaries.
   * The partial text (but for its previews) and block boundaries are then the same however the deltas were
   * split, and tiny deltas do not cost one pass each. The chunker is drained (`text_end` mode) at each such
   * position, as if the text had arrived in line-sized deltas.
   *
   * The chunker is given its text lazily: a drain emits nothing and changes nothing while the chunker holds
   * fewer than `minChars` characters, so the text up to the first content position where it would hold
   * that many is appended in one piece (one call and one probe pass instead of one per line), and the content
   * positions before it are not visited at all (#skipQuietPositions).
   */
  #feedVisible(visible: string, final: boolean, preview: boolean): void {
    if (this.#partialsOn) this.#partial.feed(visible, final, preview);
    const chunker = this.#chunker;
    const length = visible.length;
    /** The chunker has visible[0, appended). */
    let appended = 0;
    if (this.#drainEachPiece && chunker !== undefined) {
      const minChars = chunker.chunking.minChars;
      let at = 0;
      // the next newline, looked up again only once passed (a long line is cut every PARTIAL_SPAN characters:
      // searching from each cut would read the rest of the line again each time)
      let newline = -2;
      while (at < length) {
        // content positions before `quietEnd` see the chunker below minChars: their drains are no-ops
        const quietEnd = Math.min(length, appended + (minChars - chunker.pendingLength) - 1);
        if (quietEnd > at) {
          newline = this.#skipQuietPositions(visible, at, quietEnd, newline);
          at = quietEnd;
          continue;
        }
        const held = this.#heldLength;
        if (newline !== -1 && newline < at) newline = visible.indexOf("\n", at);
        const end = Math.min(newline === -1 ? length : newline + 1, at + (PARTIAL_SPAN - held));
        const heldLength = held + (end - at);
        at = end;
        // a content position: the piece ends a line or fills PARTIAL_SPAN (a piece that only ends the
        // visible text of this call waits for more text, so delta boundaries never drain anything)
        if (heldLength >= PARTIAL_SPAN || visible.charCodeAt(end - 1) === 10) {
          this.#heldLength = 0;
          if (chunker.pendingLength + (end - appended) >= minChars) {
            chunker.append(appended === 0 && end === length ? visible : visible.slice(appended, end));
            chunker.drain(false, this.#emitChunk);
            appended = end;
          }
        } else this.#heldLength = heldLength;
      }
    } else this.#skipQuietPositions(visible, 0, length, -2);
    if (chunker !== undefined && appended < length)
      chunker.append(appended === 0 ? visible : visible.slice(appended));
    if (final) this.#heldLength = 0;
  }

  /**
   * Moves the content-position state (#heldLength) from `from` to `to` without visiting the positions in
   * between; returns the next newline at or after `to` (-1: none). `newline` is #feedVisible's cached next
   * newline (-2: unknown).
   */
  #skipQuietPositions(visible: string, from: number, to: number, newline: number): number {
    // the last newline in [from, to): positions after it are counted from the line start
    let lastNewline = -1;
    let next = newline >= from || newline === -1 ? newline : visible.indexOf("\n", from);
    if (next !== -1 && next < to) {
      // two searches, not one per line: the backward one stops at `next` at the latest
      lastNewline = next + 1 < to ? visible.lastIndexOf("\n", to - 1) : next;
      next = visible.indexOf("\n", to);
    }
    this.#heldLength =
      lastNewline === -1
        ? (this.#heldLength + (to - from)) % PARTIAL_SPAN
        : (to - lastNewline - 1) % PARTIAL_SPAN;
    return next;
  }

  #pushReasoning(delta: string): void {
    const mode = this.#options.reasoningMode ?? "off";
    if (mode === "off" || !delta) return;
    this.#reasoningText += delta;
    if (mode === "stream") this.#publish({ type: "reasoning", text: this.#reasoningText, delta });
  }

  #drainBlocks(force: boolean): void {
    this.#chunker?.drain(force, this.#emitChunk);
  }

  #emitBlock(text: string, chunkSource: string): void {
    const block = this.#blockCarry.take(text, chunkSource);
    if (block === undefined) return;
    if (this.#coalescer) this.#coalescer.enqueue(block.payload, block.sourceText);
    else {
      this.#blocksStreamed = true;
      this.#publish({ type: "block", payload: block.payload, sourceText: block.sourceText });
    }
  }

  #endMessage(errorMessage: string | undefined): void {
    this.#throwDeferred();
    this.#applyPending();
    if (!this.#messageOpen && errorMessage === undefined) return;
    this.#piecesFresh = false;
    this.#applyStripped(this.#stripper.finish(), true);
    this.#drainBlocks(true);
    this.#messageOpen = false;
    this.#refreshCodeRoom();
    const rawText = this.#rawText.text();
    let payload: ReplyPayload | undefined;
    const payloadOptions = this.#payloadOptions;
    if (this.#options.enforceFinalTag)
      payload = toReplyPayload(visibleOfWhole(rawText, true), payloadOptions);
    else {
      // the whole-text passes run on the skeleton (paragraphs no pass can change stand in as keys)
      const skeleton = this.#finalSkeleton.skeletonText();
      payload =
        skeleton === undefined
          ? toReplyPayload(stripReasoningTagsFromText(rawText), payloadOptions)
          : toReplyPayload(stripReasoningTagsFromText(skeleton), payloadOptions, this.#finalSkeleton);
    }
    if (errorMessage !== undefined)
      payload = { ...(payload ?? {}), text: payload?.text ?? errorMessage, isError: true };
    if (payload) this.#payloads.push(payload);
    this.#publish({ type: "message_end", payload, rawText });
  }

  #publish(event: ReplyStreamEvent): void {
    const listeners = this.#listeners;
    for (let index = 0; index < listeners.length; index++) listeners[index]?.(event);
  }
}

function visibleOfWhole(text: string, enforceFinalTag: boolean): string {
  const stripper = new ReasoningStreamStripper({ enforceFinalTag });
  return (stripper.push(text).visible + stripper.finish().visible).trim();
}
