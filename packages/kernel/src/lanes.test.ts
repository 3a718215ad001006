import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LaneScheduler, LaneWaitAbortedError } from "./lanes.ts";

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("LaneScheduler", () => {
  it("keeps FIFO per lane, one task per lane, at most maxConcurrent overall (any schedule)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.record({ lane: fc.integer({ min: 0, max: 4 }), ticks: fc.integer({ min: 0, max: 3 }) }), {
          minLength: 1,
          maxLength: 30,
        }),
        async (cap, tasks) => {
          const lanes = new LaneScheduler(cap);
          const runningPerLane = new Map<number, number>();
          const started: number[][] = [[], [], [], [], []];
          let running = 0;
          let peak = 0;
          await Promise.all(
            tasks.map((task, index) =>
              lanes.run(`lane-${task.lane}`, async () => {
                running += 1;
                peak = Math.max(peak, running);
                runningPerLane.set(task.lane, (runningPerLane.get(task.lane) ?? 0) + 1);
                expect(runningPerLane.get(task.lane)).toBe(1);
                started[task.lane]?.push(index);
                for (let i = 0; i < task.ticks; i++) await tick();
                runningPerLane.set(task.lane, (runningPerLane.get(task.lane) ?? 0) - 1);
                running -= 1;
              }),
            ),
          );
          expect(peak).toBeLessThanOrEqual(cap);
          for (const order of started) expect(order).toEqual([...order].sort((a, b) => a - b));
          expect(lanes.stats()).toEqual({ running: 0, lanes: 0, maxConcurrent: cap });
        },
      ),
      { numRuns: 60 },
    );
  });

  it("uses every slot when lanes differ", async () => {
    const lanes = new LaneScheduler(3);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runs = [0, 1, 2, 3].map((index) => lanes.run(`s${index}`, () => held));
    await tick();
    expect(lanes.stats()).toMatchObject({ running: 3, lanes: 4 });
    release();
    await Promise.all(runs);
    expect(lanes.stats()).toMatchObject({ running: 0, lanes: 0 });
  });

  it("drops a queued task whose signal aborts, and the queue moves on", async () => {
    const lanes = new LaneScheduler(1);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ran: string[] = [];
    const first = lanes.run("a", async () => {
      ran.push("first");
      await held;
    });
    const controller = new AbortController();
    const dropped = lanes.run("b", async () => void ran.push("dropped"), controller.signal);
    const third = lanes.run("c", async () => void ran.push("third"));
    controller.abort();
    await expect(dropped).rejects.toBeInstanceOf(LaneWaitAbortedError);
    release();
    await Promise.all([first, third]);
    expect(ran).toEqual(["first", "third"]);
    await expect(lanes.run("d", async () => 1, controller.signal)).rejects.toThrow(/before it started/);
  });

  it("releases the lane when a task throws", async () => {
    const lanes = new LaneScheduler(1);
    await expect(lanes.run("x", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await lanes.run("x", async () => "next")).toBe("next");
    expect(() => new LaneScheduler(0)).toThrow(/maxConcurrent/);
  });
});
