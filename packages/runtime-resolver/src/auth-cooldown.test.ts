import { describe, expect, it } from "vitest";
import { loadParityCases } from "../test/parity-fixtures.ts";
import {
  clearExpiredCooldowns,
  computeNextProfileUsageStats,
  isProfileInCooldown,
  type ProfileUsageStats,
  resolveProfileUnusableUntil,
} from "./auth-cooldown.ts";
import { type AuthProfileType, orderProfiles } from "./auth-profiles.ts";
import type { FailoverReason } from "./classify-error.ts";

interface Step {
  now: number;
  reason: FailoverReason;
  modelId: string | null;
  cleared: ProfileUsageStats;
  stats: ProfileUsageStats;
  unusableUntil: number | null;
  unusableForM1: number | null;
  unusableAllModels: number | null;
  inCooldownM1: boolean;
  inCooldownM2: boolean;
  inCooldownAny: boolean;
}

const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe("auth cooldowns: parity with OpenClaw 2026.9.6", () => {
  const sequences = loadParityCases("auth-cooldown", "cooldownSequence");

  it("replays every recorded failure sequence step by step", () => {
    expect(sequences.length).toBeGreaterThan(50);
    const mismatches: unknown[] = [];
    for (const sequence of sequences) {
      let stats: ProfileUsageStats = {};
      for (const step of sequence.steps as Step[]) {
        const cleared = clearExpiredCooldowns(stats, step.now);
        const next = computeNextProfileUsageStats({
          existing: cleared,
          now: step.now,
          reason: step.reason,
          modelId: step.modelId ?? undefined,
        });
        const actual = {
          cleared: json(cleared),
          stats: json(next),
          unusableUntil: resolveProfileUnusableUntil(next),
          unusableForM1: resolveProfileUnusableUntil(next, "m1"),
          unusableAllModels: resolveProfileUnusableUntil(next, null),
          inCooldownM1: isProfileInCooldown(next, step.now, "m1"),
          inCooldownM2: isProfileInCooldown(next, step.now, "m2"),
          inCooldownAny: isProfileInCooldown(next, step.now, undefined),
        };
        const { now: _n, reason: _r, modelId: _m, ...expected } = step;
        if (JSON.stringify(actual) !== JSON.stringify(json(expected))) mismatches.push({ step, actual });
        stats = next;
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("orders profiles like resolveAuthProfileOrder", () => {
    const cases = loadParityCases("auth-cooldown", "resolveAuthProfileOrder");
    expect(cases.length).toBeGreaterThan(30);
    const now = 1_800_000_000_000;
    const mismatches = cases.filter((c) => {
      const input = c.input as {
        types: Record<string, AuthProfileType>;
        usage: Record<string, { lastUsed: number; cooldownOffset?: number }>;
        explicitOrder: string[] | null;
        preferredProfile: string | null;
      };
      const usage = Object.fromEntries(
        Object.entries(input.usage).map(([id, u]) => [
          id,
          {
            lastUsed: u.lastUsed,
            ...(u.cooldownOffset
              ? { cooldownUntil: now + u.cooldownOffset, cooldownReason: "auth" as const }
              : {}),
          },
        ]),
      );
      const ids = input.explicitOrder ?? Object.keys(input.types);
      const actual = orderProfiles({
        ids,
        explicit: input.explicitOrder !== null,
        type: (id) => input.types[id],
        usage,
        now,
        preferredProfile: input.preferredProfile ?? undefined,
      });
      return JSON.stringify(actual) !== JSON.stringify(c.output);
    });
    expect(mismatches).toEqual([]);
  });
});

describe("auth cooldowns: the ladders", () => {
  const t0 = 1_000_000;
  const fail = (stats: ProfileUsageStats, now: number, reason: FailoverReason, modelId?: string) =>
    computeNextProfileUsageStats({ existing: clearExpiredCooldowns(stats, now), now, reason, modelId });

  it("transient failures walk 30 s → 60 s → 5 min once each window has been honoured", () => {
    let s = fail({}, t0, "overloaded");
    expect(s.cooldownUntil).toBe(t0 + 30_000);
    s = fail(s, t0 + 10_000, "overloaded");
    expect(s.cooldownUntil).toBe(t0 + 30_000); // active window never extended
    s = fail(s, t0 + 20_000, "overloaded");
    expect(s.errorCount).toBe(3);
    const later = t0 + 30_000;
    expect(clearExpiredCooldowns(s, later).errorCount).toBe(0); // an expired cooldown clears
  });

  it("rate limits double from 30 s and keep their count across recoveries; billing disables the profile", () => {
    let s = fail({}, t0, "rate_limit", "m1");
    expect(s).toMatchObject({ cooldownUntil: t0 + 30_000, cooldownModel: "m1" });
    expect(isProfileInCooldown(s, t0 + 1, "m2")).toBe(false); // model-scoped
    s = fail(s, t0 + 30_000, "rate_limit", "m1");
    expect(s.cooldownUntil).toBe(t0 + 30_000 + 60_000);
    const billing = fail({}, t0, "billing");
    expect(billing.disabledUntil).toBe(t0 + 600_000);
    expect(isProfileInCooldown(billing, t0 + 1, "m2")).toBe(true); // profile-scoped
  });

  it("uses the configured ladder", () => {
    const s = computeNextProfileUsageStats({
      existing: {},
      now: t0,
      reason: "timeout",
      cooldowns: {
        transientSeconds: [5],
        rateLimitBaseSeconds: 1,
        rateLimitMaxHours: 1,
        billingBaseMinutes: 1,
        billingMaxHours: 1,
        authPermanentBaseMinutes: 1,
        authPermanentMaxHours: 1,
        failureWindowHours: 1,
      },
    });
    expect(s.cooldownUntil).toBe(t0 + 5_000);
  });
});
