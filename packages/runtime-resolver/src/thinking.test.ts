import type { Api, Model } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { loadParityCases } from "../test/parity-fixtures.ts";
import {
  clampThinkLevel,
  isClearThinkingDirective,
  normalizeThinkLevel,
  pickFallbackThinkingLevel,
  resolveThinking,
  supportedThinkLevels,
} from "./thinking.ts";

function model(overrides: Partial<Model<Api>>): Model<Api> {
  return {
    id: "m",
    name: "m",
    api: "openai-completions",
    provider: "p",
    baseUrl: "http://127.0.0.1:1/v1",
    reasoning: true,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1000,
    maxTokens: 100,
    ...overrides,
  };
}

describe("thinking: parity with OpenClaw 2026.9.6", () => {
  it("normalizeThinkLevel matches every recorded alias", () => {
    const cases = loadParityCases("thinking", "normalizeThinkLevel");
    expect(cases.length).toBeGreaterThan(40);
    const mismatches = cases.filter((c) => (normalizeThinkLevel(c.input as string) ?? null) !== c.output);
    expect(mismatches).toEqual([]);
  });

  it("pickFallbackThinkingLevel matches every recorded rejection", () => {
    const cases = loadParityCases("thinking", "pickFallbackThinkingLevel");
    expect(cases.length).toBeGreaterThan(100);
    const mismatches = cases.filter((c) => {
      const { message, attempted } = c.input as { message: string; attempted: string[] };
      return (pickFallbackThinkingLevel({ message, attempted: new Set(attempted) }) ?? null) !== c.output;
    });
    expect(mismatches).toEqual([]);
  });
});

describe("thinking: per-model support and resolution", () => {
  it("a model without reasoning supports only off; xhigh needs a mapping", () => {
    expect(supportedThinkLevels(model({ reasoning: false }))).toEqual(["off"]);
    expect(supportedThinkLevels(model({}))).not.toContain("xhigh");
    expect(supportedThinkLevels(model({ thinkingLevelMap: { xhigh: "xhigh" } }))).toContain("xhigh");
  });

  it("clamps to the highest supported level at or below the request", () => {
    expect(clampThinkLevel("xhigh", ["off", "minimal", "low", "medium", "high"])).toBe("high");
    expect(clampThinkLevel("adaptive", ["off", "low", "high"])).toBe("low");
    expect(clampThinkLevel("minimal", ["off", "medium"])).toBe("medium");
    expect(clampThinkLevel("high", ["off"])).toBe("off");
  });

  it("resolves message > session > agent > defaults > model default, downgrading xhigh", () => {
    const m = model({});
    expect(resolveThinking({ model: m, session: "low", agent: "high" })).toEqual({
      level: "low",
      requested: "low",
      source: "session",
    });
    expect(resolveThinking({ model: m, message: "xhigh", session: "low" })).toEqual({
      level: "high",
      requested: "xhigh",
      source: "message",
      downgradedFrom: "xhigh",
    });
    expect(resolveThinking({ model: m })).toEqual({
      level: "medium",
      requested: "medium",
      source: "model-default",
    });
    expect(resolveThinking({ model: model({ reasoning: false }) }).level).toBe("off");
    expect(() => resolveThinking({ model: m, message: "xhigh", strict: true })).toThrow(
      /"xhigh" is not supported by p\/m/,
    );
  });

  it("recognises the values that clear a session override", () => {
    expect(isClearThinkingDirective(" Inherit ")).toBe(true);
    expect(isClearThinkingDirective("off")).toBe(false);
  });
});
