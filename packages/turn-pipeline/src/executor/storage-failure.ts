// A turn whose store could not be written or read: the disk holding a database is full, a file is read-only,
// a transcript row is damaged, a database is unreadable (session-store's `StorageFailure` names the file, the
// row and what to do). Owns: finding such a failure in what a store call threw (a bare SQLite error of a
// SQLite store is its control plane's: every agent-database call names its file itself), the turn's reason
// for it (`storage`), and the error thrown when the run record itself could not be finished — which carries
// the turn's result, so that a reply that was produced (and paid for) can still be shown. Does not own: the
// classification (session-store's storage-errors.ts) or what an entry point says about it.
import { controlPlanePathOf, type StorageFailure, toStorageFailure } from "@agent-kernel/session-store";
import type { TurnResult } from "./types.ts";

/** The reason a turn ends with when its store failed it; the run is stored as `failed` with this reason. */
export const STORAGE_REASON = "storage";

/** The storage failure in `error` (thrown by a call on `store`), or undefined for any other failure. */
export function storageFailureOf(error: unknown, store: unknown): StorageFailure | undefined {
  return toStorageFailure(error, controlPlanePathOf(store));
}

/**
 * The turn ran, but its run record could not be finished (the control plane is full, read-only or damaged):
 * nothing can record how it ended. Thrown by the executor instead of returning; `result` is what it would have
 * returned (its payloads, the reply, are what an entry point can still show), `cause` the `StorageFailure`.
 */
export class TurnNotRecordedError extends Error {
  override readonly name = "TurnNotRecordedError";
  readonly result: TurnResult;
  readonly failure: StorageFailure;

  constructor(result: TurnResult, failure: StorageFailure) {
    super(`run ${result.runId} could not be recorded: ${failure.message}`, { cause: failure });
    this.result = result;
    this.failure = failure;
  }
}
