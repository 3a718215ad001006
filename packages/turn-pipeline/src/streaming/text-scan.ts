// Substring tests for the streaming hot paths, for patterns that start with a space.
// Owns: `includes("  ")`, `includes("    ")`, `includes(" \n")` and `includes("\n ")` with the same answers.
// Does not own any Markdown meaning (callers decide what the pattern stands for).
//
// Why: V8's indexOf looks for a pattern's first character and compares the rest at each hit; in prose a
// space is every fifth character or so, and these searches cost several nanoseconds per character (about
// twenty times a one-character search). A run of spaces is found by a regex (irregexp reads the string's
// characters directly, even in a slice of a larger string, where each `charCodeAt` of a JS loop first finds
// the slice's parent: a loop probing every n-th character cost 2.5–5× the regex, measured on paragraph
// slices); a space next to a newline is found from the (rarer) newlines.

const SPACE_RUN_RES: RegExp[] = [];

/** `text.includes(" ".repeat(length))` for a run length ≥ 2. */
export function hasSpaceRun(text: string, length: number): boolean {
  let pattern = SPACE_RUN_RES[length];
  if (pattern === undefined) {
    pattern = new RegExp(` {${length}}`);
    SPACE_RUN_RES[length] = pattern;
  }
  return pattern.test(text);
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
