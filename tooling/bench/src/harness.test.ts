import { describe, expect, it } from "vitest";
import { defineSuite, formatSuite, median, runSuite } from "./harness.ts";

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
    // A fake clock: each case advances it by a known amount, so every figure is exact.
    let clock = 0;
    const states: number[] = [];
    let next = 0;
    const result = await runSuite(
      defineSuite({
        name: "fake clock",
        baseline: "slow",
        iterations: 5,
        warmup: 1,
        bytesPerIteration: 1_000_000,
        itemsPerIteration: 10,
        cases: [
          {
            name: "slow",
            run: () => {
              clock += 8;
            },
          },
          {
            name: "fast",
            before: () => next++,
            run: (state: number) => {
              states.push(state);
              clock += state === 3 ? 10 : 2; // one outlier: the median ignores it, the mean does not
            },
          },
        ],
      }),
      { now: () => clock },
    );
    // One warm-up iteration, then five timed ones, each with its own state.
    expect(states).toEqual([0, 1, 2, 3, 4, 5]);
    const [slow, fast] = result.cases;
    expect(slow).toMatchObject({ iterations: 5, medianMs: 8, minMs: 8, maxMs: 8, speedupVsBaseline: 1 });
    expect(fast).toMatchObject({
      iterations: 5,
      medianMs: 2,
      minMs: 2,
      maxMs: 10,
      meanMs: 3.6,
      speedupVsBaseline: 4,
    });
    expect(fast?.mbPerSecond).toBe(500);
    expect(fast?.itemsPerSecond).toBe(5000);
    expect(formatSuite(result)).toContain("| slow (baseline) | 8.000 | 8.000 | 1.00× | 125.00 | 1250 |");
  });

  it("takes a case's measured figure instead of its time, in the suite's unit, with the target met against it", async () => {
    const result = await runSuite(
      defineSuite({
        name: "memory",
        baseline: "small",
        unit: "KiB",
        iterations: 3,
        warmup: 0,
        cases: [
          { name: "small", run: () => {}, measure: () => 40 },
          {
            name: "large",
            run: () => {},
            measure: () => 100,
            target: { minSpeedup: 0.5, label: "≤ 2× small" },
          },
        ],
      }),
      { now: () => 0 },
    );
    expect(result.unit).toBe("KiB");
    expect(result.cases[1]).toMatchObject({ medianMs: 100, speedupVsBaseline: 0.4, targetMet: false });
    expect(formatSuite(result)).toContain("| case | median KiB | min KiB |");
  });
});
