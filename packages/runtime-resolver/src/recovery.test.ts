import { describe, expect, it } from "vitest";
import { cooldownScope, planRecovery } from "./recovery.ts";

const kinds = (plan: ReturnType<typeof planRecovery>) => plan.steps.map((step) => step.kind);

describe("recovery plans", () => {
  it("compacts and retries an overflow up to three times, never falling back", () => {
    const overflow = { message: "prompt is too long: 210000 tokens > 200000 maximum" };
    expect(planRecovery(overflow)).toMatchObject({ reason: "context_overflow", advancesModelChain: false });
    expect(kinds(planRecovery(overflow))[0]).toBe("compact_and_retry");
    expect(kinds(planRecovery({ ...overflow, overflowCompactions: 3 }))).toEqual(["surface"]);
  });

  it("retries, cools down, rotates and falls back on a rate limit", () => {
    const plan = planRecovery({ message: '429: {"message":"Rate limit reached","type":"rate_limit_error"}' });
    expect(kinds(plan)).toEqual(["retry_same", "cool_down", "rotate_profile", "fallback_model", "surface"]);
    expect(plan.steps[1]).toEqual({ kind: "cool_down", scope: "model", reason: "rate_limit" });
  });

  it("disables the whole profile on billing and rotates on auth", () => {
    expect(planRecovery({ message: "402 Payment Required" }).steps[0]).toEqual({
      kind: "cool_down",
      scope: "profile",
      reason: "billing",
    });
    expect(kinds(planRecovery({ message: "invalid api key", status: 401 }))).toEqual([
      "cool_down",
      "rotate_profile",
      "fallback_model",
      "surface",
    ]);
  });

  it("lowers the thinking level before anything else when a level is rejected", () => {
    const message =
      "Unsupported value: 'minimal'. Supported values are: 'low', 'medium', and 'high'. reasoning effort";
    expect(planRecovery({ message, attemptedThinking: new Set(["minimal"]) }).steps[0]).toEqual({
      kind: "lower_thinking",
      level: "low",
    });
  });

  it("surfaces format errors and user aborts", () => {
    expect(kinds(planRecovery({ message: "roles must alternate between user and assistant" }))).toEqual([
      "surface",
    ]);
    expect(planRecovery({ message: "429", aborted: true })).toMatchObject({
      reason: null,
      advancesModelChain: false,
    });
    expect(cooldownScope("timeout")).toBe("model");
    expect(cooldownScope("auth")).toBe("profile");
  });
});
