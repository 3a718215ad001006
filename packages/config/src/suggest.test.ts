import { describe, expect, it } from "vitest";
import { closestMatch, editDistance } from "./suggest.ts";

describe("did-you-mean", () => {
  it("counts edits, with an adjacent swap as one", () => {
    expect(editDistance("agents", "agents")).toBe(0);
    expect(editDistance("agent", "agents")).toBe(1);
    expect(editDistance("hihg", "high")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("suggests only plausible typos", () => {
    expect(closestMatch("thinkingDefalt", ["thinkingDefault", "timeoutSeconds"])).toBe("thinkingDefault");
    expect(closestMatch("Agents", ["agents"])).toBe("agents");
    expect(closestMatch("frequency", ["mode", "atHour", "idleMinutes"])).toBeUndefined();
    expect(closestMatch("ab", ["xy"])).toBeUndefined();
  });
});
