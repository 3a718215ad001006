// The kernel's own work on one turn, timed per phase for `TurnOutcome.timings` (see `KernelPhaseTimings`).
// Owns: the phase clock — which phase is running, entering and pausing it, spans timed elsewhere, the total.
// Does not own: when a phase starts or pauses (the kernel decides, around every await that is not its own
// work), prepareSession's cost (prepare-cache.ts hands it over), or the outcome's other timings (run-outcome.ts).
import { performance } from "node:perf_hooks";
import type { KernelPhaseTimings } from "./types.ts";

export type MeasuredPhase = "validateMs" | "bookkeepingMs" | "runRecordMs" | "sessionUpdateMs" | "outcomeMs";

/**
 * The kernel's own work on one turn, per phase (see `KernelPhaseTimings`): a phase is timed from `enter`
 * until the next `enter` or `pause`; the kernel pauses right before every await that is not its own work
 * (the lane, the executor, a store call's promise), so time other turns use meanwhile is never charged here.
 */
export class PhaseClock {
  readonly phases: { -readonly [K in keyof KernelPhaseTimings]: KernelPhaseTimings[K] } = {
    prepareMs: 0,
    prepareCache: "none",
    validateMs: 0,
    bookkeepingMs: 0,
    runRecordMs: 0,
    sessionUpdateMs: 0,
    outcomeMs: 0,
  };
  #phase: MeasuredPhase | undefined;
  #since = 0;

  constructor(first: MeasuredPhase) {
    this.#phase = first;
    this.#since = performance.now();
  }

  enter(phase: MeasuredPhase): void {
    const now = performance.now();
    if (this.#phase !== undefined) this.phases[this.#phase] += now - this.#since;
    this.#phase = phase;
    this.#since = now;
  }

  pause(): void {
    if (this.#phase === undefined) return;
    this.phases[this.#phase] += performance.now() - this.#since;
    this.#phase = undefined;
  }

  /** A span timed elsewhere (the event fan-out, which runs inside the executor's time). */
  add(phase: MeasuredPhase, ms: number): void {
    this.phases[phase] += ms;
  }

  get totalMs(): number {
    const p = this.phases;
    return p.prepareMs + p.validateMs + p.bookkeepingMs + p.runRecordMs + p.sessionUpdateMs + p.outcomeMs;
  }
}
