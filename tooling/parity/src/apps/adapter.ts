// What the harness needs from each app: its declared delivery policy and a way to run a scenario's inbound
// messages through the app's programmatic entry in a prepared cell. Also the shared helper that aborts a
// cell's turn once the scripted model has seen the scenario's number of requests. Owns the adapter shape.
import type { Cell } from "../cell.ts";
import type { AppDeliveryPolicy, CellRun } from "../types.ts";

/**
 * Kernel-level differences an app declares (DESIGN §6: they are an app's explicit policy, never hidden):
 * the harness undoes prompt shaping before comparing transcripts, and does not run scenarios that need one
 * session across turns through an app whose every turn is a new session.
 */
export interface KernelDifferences {
  /** Maps the user message the app sent back to the inbound text (cron's `[cron:<id> <name>] …`). */
  readonly unshapePrompt?: (text: string) => string;
  /** Every turn runs in a new session (cron's isolated runs, the planner's throwaway sessions). */
  readonly isolatedSessions?: boolean;
  /**
   * Run options the app fixes whatever the config says (the planner: tools off, final tag, thinking high).
   * The app is then compared on the recovery view of the outcome (kernel-outcome.ts `recoveryView`), and
   * scenarios whose model calls tools do not apply.
   */
  readonly fixedRunOptions?: string;
}

export interface AppAdapter {
  readonly name: string;
  readonly policy: AppDeliveryPolicy;
  readonly kernelDifferences?: KernelDifferences;
  /** Set when the app's programmatic entry is not there yet: its cells report "not wired", nothing is faked. */
  readonly notWired?: string;
  run(cell: Cell): Promise<CellRun>;
}

/**
 * Calls `abort` once the cell's model requests reach the scenario's `abortAfterRequests` (the request is then
 * in flight: the scenario makes it stall). Returns the stop function.
 */
const ABORT_SETTLE_MS = 300;

export function abortWhenRequested(cell: Cell, abort: () => void): () => void {
  const wanted = cell.scenario.abortAfterRequests;
  if (wanted === undefined) return () => {};
  let stopped = false;
  const poll = () => {
    if (stopped) return;
    if (cell.requests() >= wanted) {
      stopped = true;
      // The request has arrived; give the stalled stream's first deltas time to reach the client, so the
      // abort always lands mid-stream (the same partial text and abort wording in every app).
      setTimeout(abort, ABORT_SETTLE_MS);
      return;
    }
    setTimeout(poll, 5);
  };
  poll();
  return () => {
    stopped = true;
  };
}
