import { describe, expect, it } from "vitest";
import { ExpiringSet } from "./expiring-set.ts";

describe("ExpiringSet", () => {
  it("forgets a key after its time and re-adding refreshes it", () => {
    const set = new ExpiringSet(1000);
    set.add("a", 0);
    expect(set.has("a", 999)).toBe(true);
    expect(set.has("a", 1000)).toBe(false);
    set.add("a", 500);
    expect(set.has("a", 1400)).toBe(true);
  });

  it("stays within its size bound, dropping the oldest first", () => {
    const set = new ExpiringSet(60_000, 3);
    for (const key of ["a", "b", "c", "d", "e"]) set.add(key, 0);
    expect(set.size).toBe(3);
    expect(["a", "b", "c", "d", "e"].map((key) => set.has(key, 1))).toEqual([false, false, true, true, true]);
  });

  it("prunes expired keys as new ones arrive", () => {
    const set = new ExpiringSet(100);
    for (let i = 0; i < 50; i++) set.add(`k${i}`, i * 10);
    expect(set.size).toBeLessThanOrEqual(11);
  });
});
