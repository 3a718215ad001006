// The PartialText before partial text was published once per processed call (kept only for
// partial-batching.property.test.ts, which checks the new one against it). Not used by the package.

import { StreamingDirectiveAccumulator } from "./reply-directives.ts";
import { COLLECT_CHUNK, joinPieces } from "./text-collector.ts";

type PartialPublisher = (text: string, delta: string) => void;

export class PreviousPartialText {
  readonly #silentToken: string;
  readonly #publish: PartialPublisher;
  readonly #accumulator = new StreamingDirectiveAccumulator();
  /** What the accumulator returned so far (published or previewed up to here). */
  #text = "";
  /** #text up to the last join: a few large strings (see TextCollector for why). */
  #joined = "";
  /** Accumulator results since the last join (see #append for the run kept beside them). */
  readonly #recent: string[] = [];
  #recentLength = 0;
  /**
   * The latest results that were consecutive slices of one visible text, unchanged by the directive pass (the
   * usual lines): kept as that text and a range, and added to #recent as one slice, so the join copies a few
   * large pieces instead of one piece per line.
   */
  #runText = "";
  #runStart = 0;
  #runEnd = 0;
  /** Visible text since the last content position, not yet given to the accumulator. */
  #held = "";
  /** How much of #held a preview published. */
  #previewed = 0;
  /** The text the last preview published (#text and #held's start). */
  #previewText = "";

  constructor(silentToken: string, publish: PartialPublisher) {
    this.#silentToken = silentToken;
    this.#publish = publish;
  }

  /** Visible text before the next content position. */
  hold(piece: string): void {
    this.#held += piece;
  }

  /**
   * A content position: `piece` ends the held text, and all of it goes to the accumulator. `piece` is
   * source.slice(from, from + piece.length): when nothing was held before it, the result can extend the run
   * (see #runText).
   */
  commit(piece: string, source: string, from: number): void {
    const onlyPiece = this.#held === "";
    this.#held += piece;
    this.#consume(false, onlyPiece ? source : undefined, from);
  }

  /** The message end: whatever is held goes to the accumulator as the final chunk. */
  finish(): void {
    this.#consume(true, undefined, 0);
  }

  /**
   * The end of a processed batch: publishes the decided start of the held text (if it grew). Costs a scan of
   * what followed the last preview (decidedLength's `known`), the event and its strings: ≈ 0.5 µs a batch.
   */
  preview(): void {
    const held = this.#held;
    const shown = this.#previewed;
    if (held.length <= shown) return;
    const decided = this.#accumulator.decidedLength(held, this.#silentToken, shown);
    if (decided <= shown) return;
    this.#previewed = decided;
    const delta = held.slice(shown, decided);
    this.#previewText = (shown === 0 ? this.#text : this.#previewText) + delta;
    this.#publish(this.#previewText, delta);
  }

  #consume(final: boolean, source: string | undefined, from: number): void {
    const chunk = this.#held;
    this.#held = "";
    const previewed = this.#previewed;
    this.#previewed = 0;
    this.#previewText = "";
    if (!chunk && !final) return;
    const delta = final
      ? this.#accumulator.consumeText(chunk, { final, silentToken: this.#silentToken })
      : this.#accumulator.consumeLine(chunk, this.#silentToken);
    if (delta) this.#append(delta, delta === chunk ? source : undefined, from);
    if (previewed === 0) {
      if (delta) this.#publish(this.#text, delta);
    } else if (delta === chunk || delta?.startsWith(chunk.slice(0, previewed))) {
      // (the chunk unchanged, the usual line: its start is what the preview showed)
      if (delta.length > previewed) this.#publish(this.#text, delta.slice(previewed));
    } else {
      // never (decidedLength only vouches for what the accumulator returns as it is); should it happen, the
      // text published no longer extends the preview, which a consumer can tell (the partial text restarts)
      this.#publish(this.#text, delta ?? "");
    }
  }

  /** `source`/`from`: `delta` is source.slice(from, from + delta.length), the chunk unchanged. */
  #append(delta: string, source: string | undefined, from: number): void {
    if (source !== undefined) {
      if (source !== this.#runText || from !== this.#runEnd) {
        this.#endRun();
        this.#runText = source;
        this.#runStart = from;
      }
      this.#runEnd = from + delta.length;
    } else {
      this.#endRun();
      this.#recent.push(delta);
    }
    this.#recentLength += delta.length;
    if (this.#recentLength >= COLLECT_CHUNK) {
      // the same text, rebuilt from one joined string instead of one piece per line
      this.#endRun();
      this.#joined += joinPieces(this.#recent);
      this.#text = this.#joined;
      this.#recent.length = 0;
      this.#recentLength = 0;
    } else this.#text += delta;
  }

  #endRun(): void {
    const text = this.#runText;
    if (text === "") return;
    this.#recent.push(text.slice(this.#runStart, this.#runEnd));
    this.#runText = "";
  }
}
