// Streamed text kept as a few large strings: ReplyStream's raw-text collector, the join of small pieces, and
// the decode of one-code-unit deltas collected as code units. Owns only the string representation (what V8
// allocates and copies); does not own what the text is used for (reply-stream.ts, partial-text.ts).

/** Small pieces (TextCollector's, the partial deltas) are joined into one string per this many characters. */
export const COLLECT_CHUNK = 256 * 1024;
/** joinPieces concatenates up to this many pieces as a rope and joins more. */
const ROPE_PIECES = 64;
/** TextCollector keeps a batch this long as it is (see there). */
const KEEP_PIECE = 1024;
/** The largest batch decodeCodeUnits decodes without allocating (ReplyStream's default input batch). */
const SCRATCH_CODE_UNITS = 4096;

/**
 * A message's raw text, appended once per processed batch of deltas. A batch of at least KEEP_PIECE characters
 * is kept as it is: joining such pieces into larger strings cost more (a fresh large allocation per join) than
 * the young-generation collections that copy each once or twice on its way to the old generation. Smaller
 * batches (a slow stream can process a few characters per event-loop turn) are joined per COLLECT_CHUNK, so a
 * long message is never held as millions of tiny pieces.
 */
export class TextCollector {
  readonly #chunks: string[] = [];
  readonly #recent: string[] = [];
  #recentLength = 0;

  append(text: string): void {
    if (text.length >= KEEP_PIECE) {
      if (this.#recent.length > 0) this.#joinRecent();
      this.#chunks.push(text);
      return;
    }
    this.#recent.push(text);
    this.#recentLength += text.length;
    if (this.#recentLength >= COLLECT_CHUNK) this.#joinRecent();
  }

  /**
   * The whole text. The large pieces are concatenated, not joined: V8 keeps the result as a rope and copies
   * it into one string only when something reads its characters, which the common consumer of `rawText`
   * (a channel that streamed blocks) never does.
   */
  text(): string {
    if (this.#recent.length > 0) this.#joinRecent();
    const chunks = this.#chunks;
    if (chunks.length > 1) {
      let whole = chunks[0] ?? "";
      for (let index = 1; index < chunks.length; index++) whole += chunks[index];
      chunks.length = 0;
      chunks.push(whole);
    }
    return chunks[0] ?? "";
  }

  #joinRecent(): void {
    this.#chunks.push(this.#recent.join(""));
    this.#recent.length = 0;
    this.#recentLength = 0;
  }
}

/**
 * The pieces as one string: a few (large) pieces are concatenated as a rope (no copy: joining them allocated
 * a fresh large string each time), many (small) ones joined into one string, so no rope grows one node per line.
 */
export function joinPieces(pieces: readonly string[]): string {
  if (pieces.length > ROPE_PIECES) return pieces.join("");
  let text = "";
  for (const piece of pieces) text += piece;
  return text;
}

const latin1Scratch = new Uint8Array(SCRATCH_CODE_UNITS);

/**
 * The first `count` code units as a string, exactly (lone surrogates included). Decoded by Node's Buffer:
 * `String.fromCharCode.apply` over a typed array costs about 25 times as much. Code units that all fit a byte
 * become a one-byte string (as V8 keeps the text providers send), which the passes after scan faster.
 */
export function decodeCodeUnits(codes: Uint16Array, count: number, bits: number): string {
  if (bits < 256) {
    const bytes = count <= latin1Scratch.length ? latin1Scratch : new Uint8Array(count);
    bytes.set(codes.subarray(0, count));
    return Buffer.from(bytes.buffer, bytes.byteOffset, count).toString("latin1");
  }
  return Buffer.from(codes.buffer, codes.byteOffset, count * 2).toString("utf16le");
}
