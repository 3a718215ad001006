// The partial text of one assistant message: what a consumer that shows text as it arrives (a terminal, a
// channel that edits a draft) sees. Owns walking the visible text's content positions for the streaming
// directive accumulator (each line end, every PARTIAL_SPAN characters of a line: the same positions ReplyStream
// drains the block chunker at), the text built from the accumulator's results, its publication — once per
// processed call (`feed`), not once per line — and the preview: at the end of each processed batch the start of
// the line still arriving is published as far as it is decided — the accumulator is sure to return it as it is,
// however the line goes on (StreamingDirectiveAccumulator.decidedLength) — so text shows at once, not only at
// line ends. Does not own the reasoning-tag stripping before it (the text it gets is visible text) or the blocks.
//
// Cost per batch, not per line: the usual line (no "[", no held tail, a first character that rules the silent
// token out, or a blank line) is settled in place (StreamingDirectiveAccumulator.consumePlainRange; "[" is
// looked for once per "[" found) and kept only as the end of a range of the visible text; a call's ranges and
// the few results of the general path become one delta string and one event. (Per line, a slice, a rope node
// kept until the next join and an event cost ≈ 230 ns a line, most of partial text's cost.)
//
// Every published text extends the one before it: a call's delta is what its lines added, a preview is a
// prefix of what the accumulator returns for the whole line, and the line's result then publishes only what
// the preview did not show. The concatenation of the deltas is the text, and the text at the message end does
// not depend on the previews or on how the deltas were split (streaming.property.test.ts); it is the text the
// accumulator's per-line results make, published no later than per line (partial-batching.property.test.ts).

import { PublishedText } from "./published-text.ts";
import { StreamingDirectiveAccumulator } from "./reply-directives.ts";
import { joinPieces } from "./text-collector.ts";

export type PartialPublisher = (text: string, delta: string) => void;

/** A content position every this many characters of a line (the chunker's too: ReplyStream). */
export const PARTIAL_SPAN = 256;

export class PartialText {
  readonly #silentToken: string;
  readonly #publish: PartialPublisher;
  readonly #accumulator = new StreamingDirectiveAccumulator();
  /** What the accumulator returned up to the last flush (published-text.ts: why not one rope of it all). */
  readonly #published = new PublishedText();
  /** Results since the last flush, in order (#rangeSource's current range after them). */
  readonly #pending: string[] = [];
  /** The range of consecutive lines returned as they are, not yet in #pending: #rangeSource.slice(#rangeStart, #rangeEnd). */
  #rangeSource = "";
  #rangeStart = 0;
  #rangeEnd = 0;
  /** The text searched for "[" last (#bracketFree) and the first "[" in it at or after the last search (-1: none). */
  #bracketSource = "";
  #nextBracket = -1;
  /** Characters of the current line since its last content position. */
  #spanLength = 0;
  /** Visible text since the last content position, not yet given to the accumulator. */
  #held = "";
  /** How much of #held a preview published. */
  #previewed = 0;
  /** What the last preview showed of #held (its start), after the published text. */
  #previewExtra = "";
  /** What a preview showed of the line whose result is the first in #pending (it is not published again). */
  #shownOfFirst = "";

  constructor(silentToken: string, publish: PartialPublisher) {
    this.#silentToken = silentToken;
    this.#publish = publish;
  }

  /** One event: the published text's first `length` characters and `extra`, and the delta. */
  #emit(length: number, extra: string, delta: string): void {
    this.#publish(this.#published.textAt(length, extra), delta);
  }

  /**
   * The visible text of one processed call: each content position in it gives the text since the last one to
   * the accumulator, the rest is held; then what the call added is published (one event). `final`: the
   * message end, whatever is held goes to the accumulator as the final chunk. `preview`: the call ends a
   * processed batch, and the same event also shows the decided start of the held line (see preview).
   */
  feed(visible: string, final: boolean, preview = false): void {
    const length = visible.length;
    let span = this.#spanLength;
    let at = 0;
    /** The accumulator has had visible[0, committed). */
    let committed = 0;
    // the next newline, looked up again only once passed (a long line is cut every PARTIAL_SPAN characters:
    // searching from each cut would read the rest of the line again each time)
    let newline = -2;
    while (at < length) {
      if (newline !== -1 && newline < at) newline = visible.indexOf("\n", at);
      const end = Math.min(newline === -1 ? length : newline + 1, at + (PARTIAL_SPAN - span));
      span += end - at;
      at = end;
      // a content position: the piece ends a line or fills PARTIAL_SPAN (a piece that only ends the
      // visible text of this call waits for more text, so delta boundaries never commit anything)
      if (span >= PARTIAL_SPAN || visible.charCodeAt(end - 1) === 10) {
        span = 0;
        this.#commit(visible, committed, end);
        committed = end;
      }
    }
    this.#spanLength = span;
    if (committed < length) this.#held += committed === 0 ? visible : visible.slice(committed);
    if (final) {
      this.#spanLength = 0;
      this.#consume(true);
    }
    this.#flush(preview && !final);
  }

  /**
   * The end of a processed batch: publishes the decided start of the held text (if it grew). Costs a scan of
   * what followed the last preview (decidedLength's `known`), the event and its strings: ≈ 0.5 µs a batch.
   */
  preview(): void {
    const delta = this.#previewDelta();
    if (delta !== "") this.#emit(this.#published.length, this.#previewExtra, delta);
  }

  /** What a preview shows beyond the text published so far ("": nothing new); #previewExtra is then all it shows. */
  #previewDelta(): string {
    const held = this.#held;
    const shown = this.#previewed;
    if (held.length <= shown) return "";
    const decided = this.#accumulator.decidedLength(held, this.#silentToken, shown);
    if (decided <= shown) return "";
    this.#previewed = decided;
    const delta = held.slice(shown, decided);
    this.#previewExtra = shown === 0 ? delta : this.#previewExtra + delta;
    return delta;
  }

  /** A content position: source[from, end) ends the held text, and all of it goes to the accumulator. */
  #commit(source: string, from: number, end: number): void {
    if (this.#held === "" && this.#bracketFree(source, from, end)) {
      const plain = this.#accumulator.consumePlainRange(source, from, end, this.#silentToken);
      if (plain === 0) return; // a blank line: nothing to show (nothing held, so nothing was previewed)
      if (plain === 1) {
        // returned as it is: extends the range
        if (from !== this.#rangeEnd || source !== this.#rangeSource) {
          this.#endRange();
          this.#rangeSource = source;
          this.#rangeStart = from;
        }
        this.#rangeEnd = end;
        return;
      }
    }
    this.#held += from === 0 && end === source.length ? source : source.slice(from, end);
    this.#consume(false);
  }

  /** source.slice(from, end) has no "[" (looked up once per "[" found, not once per line). */
  #bracketFree(source: string, from: number, end: number): boolean {
    let next = this.#nextBracket;
    if (source !== this.#bracketSource || (next !== -1 && next < from)) {
      next = source.indexOf("[", from);
      this.#bracketSource = source;
      this.#nextBracket = next;
    }
    return next === -1 || next >= end;
  }

  /** The held text goes to the accumulator (the general path: directives, tokens, held tails). */
  #consume(final: boolean): void {
    const chunk = this.#held;
    this.#held = "";
    const previewed = this.#previewed;
    this.#previewed = 0;
    this.#previewExtra = "";
    if (!chunk && !final) return;
    const delta = final
      ? this.#accumulator.consumeText(chunk, { final, silentToken: this.#silentToken })
      : this.#accumulator.consumeLine(chunk, this.#silentToken);
    if (previewed > 0) {
      // the first result since the preview (nothing committed since: the preview showed the held text's start)
      const shown = chunk.slice(0, previewed);
      if (delta === chunk || delta?.startsWith(shown)) this.#shownOfFirst = shown;
      else {
        // never (decidedLength only vouches for what the accumulator returns as it is); should it happen, the
        // text published no longer extends the preview, which a consumer can tell (the partial text restarts)
        this.#published.append(delta ?? "");
        this.#emit(this.#published.length, "", delta ?? "");
        return;
      }
    }
    if (delta) {
      this.#endRange();
      this.#pending.push(delta);
    }
  }

  #endRange(): void {
    const source = this.#rangeSource;
    if (source === "") return;
    this.#pending.push(
      this.#rangeStart === 0 && this.#rangeEnd === source.length
        ? source
        : source.slice(this.#rangeStart, this.#rangeEnd),
    );
    this.#rangeSource = "";
    this.#rangeEnd = 0;
  }

  /**
   * Publishes what the results since the last flush added, less what a preview showed, and with `preview`
   * what the preview shows now: one event.
   */
  #flush(preview: boolean): void {
    this.#endRange();
    const pending = this.#pending;
    if (pending.length === 0) {
      if (preview) this.preview();
      return;
    }
    // a rope of the pieces (slices of the visible text): copying them into a flat string here cost more than
    // the rope's nodes. A preview showed the start of the first result: the delta is published without it,
    // cut from that piece alone (slicing the rope would flatten it, a copy of the batch's text per batch)
    const shown = this.#shownOfFirst;
    this.#shownOfFirst = "";
    if (shown !== "") pending[0] = (pending[0] as string).slice(shown.length);
    const delta = pending.length === 1 ? (pending[0] as string) : joinPieces(pending);
    pending.length = 0;
    const published = this.#published;
    published.append(shown === "" ? delta : shown + delta);
    const previewed = preview ? this.#previewDelta() : "";
    if (previewed !== "") this.#emit(published.length, this.#previewExtra, delta + previewed);
    else if (delta !== "") this.#emit(published.length, "", delta);
  }
}
