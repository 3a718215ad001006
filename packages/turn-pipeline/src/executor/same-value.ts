// Structural equality of plain data, for the executor's per-session memos (a warm session's next turn reuses
// what its last turn built when the inputs are the same). Owns: comparing primitives, arrays and plain
// objects by value, and everything else (class instances, functions, maps) by identity. Does not own what is
// memoised or when a memo is dropped (turn-tools.ts, attempt-run.ts).

/**
 * True when `a` and `b` are the same value: equal primitives, the same object, or arrays / plain objects
 * whose items are the same values. Anything that is not plain data counts only as itself, so a memo keyed by
 * it is never reused for a different object that merely looks alike.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!sameValue(a[index], b[index])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key)) return false;
    if (!sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
