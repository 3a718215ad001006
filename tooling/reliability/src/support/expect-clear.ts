// The fuzzing property shared by every parser of outside input: it returns a valid result or throws its
// package's own error class with a message that names the problem — never a TypeError, RangeError or any
// other error it did not mean to throw. Owns the property; the parsers are the packages'.
import { expect } from "vitest";

// biome-ignore lint/suspicious/noExplicitAny: any error class constructor
type ErrorClass = abstract new (...args: any[]) => Error;

/**
 * Runs `parse`; a thrown error must be an instance of one of `allowed` with a non-empty message (checked by
 * `names` when given). Returns the result, or undefined when it threw a clear error.
 */
export function clearErrorOrResult<T>(
  parse: () => T,
  allowed: readonly ErrorClass[],
  names?: (message: string) => boolean,
): T | undefined {
  try {
    return parse();
  } catch (error) {
    const ownClass = allowed.some((errorClass) => error instanceof errorClass);
    if (!ownClass) {
      throw new Error(
        `expected ${allowed.map((errorClass) => errorClass.name).join(" or ")}, got ${String(error)}` +
          `${error instanceof Error && error.stack ? `\n${error.stack}` : ""}`,
      );
    }
    const message = (error as Error).message;
    expect(message.trim().length, "the error says what is wrong").toBeGreaterThan(0);
    if (names !== undefined) expect(names(message), `the message names the problem: ${message}`).toBe(true);
    return undefined;
  }
}
