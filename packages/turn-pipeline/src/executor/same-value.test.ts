import { describe, expect, it } from "vitest";
import { sameValue } from "./same-value.ts";

describe("sameValue", () => {
  it("compares plain data by value", () => {
    expect(sameValue("a", "a")).toBe(true);
    expect(sameValue(undefined, undefined)).toBe(true);
    expect(sameValue([1, { a: ["x"] }], [1, { a: ["x"] }])).toBe(true);
    expect(sameValue({ a: 1, b: undefined }, { a: 1, b: undefined })).toBe(true);
    expect(sameValue(Object.assign(Object.create(null), { a: 1 }), { a: 1 })).toBe(true);
  });

  it("tells different plain data apart", () => {
    expect(sameValue([1, 2], [1, 2, 3])).toBe(false);
    expect(sameValue({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameValue({ a: 1, b: undefined }, { a: 1, c: undefined })).toBe(false);
    expect(sameValue({ a: [1] }, { a: [2] })).toBe(false);
    expect(sameValue([], {})).toBe(false);
    expect(sameValue(null, {})).toBe(false);
    expect(sameValue(0, "0")).toBe(false);
  });

  it("counts class instances and functions only as themselves", () => {
    class Policy {
      readonly allow = ["read"];
    }
    const policy = new Policy();
    expect(sameValue(policy, policy)).toBe(true);
    expect(sameValue(new Policy(), new Policy())).toBe(false);
    expect(sameValue(new Map(), new Map())).toBe(false);
    expect(
      sameValue(
        () => 1,
        () => 1,
      ),
    ).toBe(false);
  });
});
