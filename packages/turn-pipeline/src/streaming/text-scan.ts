// Substring tests for the streaming hot paths, for patterns that start with a space.
// Owns: `includes("  ")`, `includes("    ")`, `includes(" \n")` and `includes("\n ")` with the same answers.
// Does not own any Markdown meaning (callers decide what the pattern stands for).
//
// Why: V8's indexOf looks for a pattern's first character and compares the rest at each hit; in prose a
// space is every fifth character or so, and these searches cost several nanoseconds per character (about
// twenty times a one-character search). A run of n spaces always covers a position that is a multiple of n
// (minus one), so only every n-th character needs a look; a space next to a newline is found from the
// (rarer) newlines.

/** `text.includes(" ".repeat(length))` for a run length ≥ 2. */
export function hasSpaceRun(text: string, length: number): boolean {
  const end = text.length;
  for (let probe = length - 1; probe < end; probe += length) {
    if (text.charCodeAt(probe) !== 32) continue;
    let run = 1;
    for (let at = probe - 1; run < length && at >= 0 && text.charCodeAt(at) === 32; at--) run++;
    for (let at = probe + 1; run < length && at < end && text.charCodeAt(at) === 32; at++) run++;
    if (run >= length) return true;
  }
  return false;
}

/** `text.includes(" \n")`. */
export function hasSpaceBeforeNewline(text: string): boolean {
  for (let newline = text.indexOf("\n", 1); newline !== -1; newline = text.indexOf("\n", newline + 1))
    if (text.charCodeAt(newline - 1) === 32) return true;
  return false;
}

/** `text.includes("\n ")`. */
export function hasSpaceAfterNewline(text: string): boolean {
  for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", newline + 1))
    if (text.charCodeAt(newline + 1) === 32) return true;
  return false;
}
