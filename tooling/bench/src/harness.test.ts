import { describe, expect, it } from "vitest";
import { defineSuite, formatSuite, median, runSuite } from "./harness.ts";

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy wait: a deterministic amount of work per call
  }
}

describe("bench harness", () => {
  it("takes the median", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it("refuses a baseline that is not a case", () => {
    expect(() => defineSuite({ name: "s", baseline: "nope", cases: [{ name: "a", run: () => 0 }] })).toThrow(
      'bench suite "s": baseline "nope" is not one of its cases',
    );
  });

  it("reports each case against the baseline, with fresh state per iteration", async () => {
    const states: number[] = [];
    let next = 0;
    const result = await runSuite(
      defineSuite({
        name: "spin",
        baseline: "slow",
        iterations: 5,
        warmup: 1,
        bytesPerIteration: 1_000_000,
        cases: [
          { name: "slow", run: () => spin(8) },
          {
            name: "fast",
            before: () => next++,
            run: (state: number) => {
              states.push(state);
              spin(2);
            },
          },
        ],
      }),
    );
    // One warm-up iteration, then five timed ones, each with its own state.
    expect(states).toEqual([0, 1, 2, 3, 4, 5]);
    const [slow, fast] = result.cases;
    expect(slow?.speedupVsBaseline).toBe(1);
    expect(fast?.speedupVsBaseline).toBeGreaterThan(2);
    expect(fast?.iterations).toBe(5);
    expect(fast?.mbPerSecond).toBeGreaterThan(slow?.mbPerSecond ?? Number.POSITIVE_INFINITY);
    expect(formatSuite(result)).toContain("| slow (baseline) |");
  });
});
