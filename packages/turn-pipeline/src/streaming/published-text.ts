// The text partial events have published so far. Owns how it is kept: the latest pieces as they came, older
// text joined into large strings, and any published length read back. Does not own what the text is
// (partial-text.ts decides each piece) nor the events (reply-stream.ts).
//
// Why not one rope of every piece, as before: the pieces are slices of the visible text, and such a rope
// kept every batch of visible text alive as long as the message — about as much text again for the
// young-generation collections to copy twice and promote. Here the pieces are joined every CHUNK_SPAN
// characters into one string large enough for V8's large-object space, which collections never copy, and
// the text read back is rebuilt from those strings, so a batch of visible text lives at most until its
// span is joined. The gain is in memory traffic more than in instructions (5 MB reply at 16-byte deltas,
// partials on: cachegrind 775 → 761 M instructions a run; CPU time, paired in one process, about 2 ms less).
// (Keeping the text outside the heap, in a buffer, was tried: its growth counted as external memory and
// doubled the full collections. Events whose `text` is made only when read cost an accessor object per
// event: a slow stream's 80,000 previews took 1.5× as long.)

/**
 * The latest pieces are joined into one string once they hold this many characters: above V8's largest
 * regular object (128 KiB), so the string is allocated in the large-object space.
 */
const CHUNK_SPAN = 256 * 1024;

export class PublishedText {
  /** The text's first #joinedLength characters, in order: large flat strings. */
  readonly #chunks: string[] = [];
  #joinedLength = 0;
  /** Pieces after the chunks, in order (#windowLength characters). */
  #window: string[] = [];
  #windowLength = 0;
  /** The text's first #readLength characters, as last read. */
  #read = "";
  #readLength = 0;
  /** How many pieces of the window #read holds (-1: #read does not end in the window). */
  #readPieces = 0;

  /** Characters published so far. */
  get length(): number {
    return this.#joinedLength + this.#windowLength;
  }

  append(piece: string): void {
    if (piece === "") return;
    this.#window.push(piece);
    this.#windowLength += piece.length;
    if (this.#windowLength >= CHUNK_SPAN) this.#joinWindow();
  }

  /** The first `length` characters (a length this store had), then `extra`. */
  textAt(length: number, extra: string): string {
    const prefix = this.#prefix(length);
    return extra === "" ? prefix : prefix + extra;
  }

  #prefix(length: number): string {
    if (length === this.#readLength) return this.#read;
    let text = "";
    let at = 0;
    let index = 0;
    if (length > this.#readLength && this.#readPieces >= 0) {
      // read in order (each event's text in turn): go on from the last read
      text = this.#read;
      at = this.#readLength;
      index = this.#readPieces;
    } else {
      // an older event's text, or the first read since a join: from the chunks
      const chunks = this.#chunks;
      for (let chunk = 0; chunk < chunks.length && at < length; chunk++) {
        const whole = chunks[chunk] as string;
        const piece = at + whole.length <= length ? whole : whole.slice(0, length - at);
        text = at === 0 ? piece : text + piece;
        at += piece.length;
      }
    }
    const window = this.#window;
    while (at < length && index < window.length) {
      const piece = window[index++] as string;
      if (at + piece.length > length) {
        // inside a piece (never for an event's length)
        text = at === 0 ? piece.slice(0, length - at) : text + piece.slice(0, length - at);
        return text;
      }
      text = at === 0 ? piece : text + piece;
      at += piece.length;
    }
    if (at >= this.#joinedLength) {
      this.#read = text;
      this.#readLength = at;
      this.#readPieces = index;
    }
    return text;
  }

  #joinWindow(): void {
    this.#chunks.push(this.#window.join(""));
    this.#joinedLength += this.#windowLength;
    this.#window = [];
    this.#windowLength = 0;
    // the last read may be a rope of the window's pieces: rebuilt from the chunks on the next read
    this.#read = "";
    this.#readLength = 0;
    this.#readPieces = -1;
  }
}
