// The issue-23 parity leftovers against OpenClaw 2026.9.6's own answers
// (fixtures/openclaw/leftovers.part-*.json, recorded by
// tooling/parity/record/parity-leftovers.mjs): the exported error predicates,
// buildGroupHistoryKey, resolveSessionKey, resolvePromptHistoryLimit and
// resolveAgentIdFromSessionKey's values and error messages.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadParityCases, type ParityCase } from "../test/parity-fixtures.ts";
import {
  buildGroupHistoryKey,
  DEFAULT_GROUP_HISTORY_LIMIT,
  GROUP_SURFACES,
  isAuthErrorMessage,
  isAuthPermanentErrorMessage,
  isBillingErrorMessage,
  isCloudCodeAssistFormatError,
  isOverloadedErrorMessage,
  isRateLimitErrorMessage,
  isTimeoutErrorMessage,
  MAX_PROMPT_HISTORY_LIMIT,
  type MessageSessionContext,
  type PeerKind,
  resolveAgentIdFromSessionKey,
  resolvePromptHistoryLimit,
  resolveSessionKey,
  type SessionScope,
} from "./index.ts";

type Outcome = { value: unknown } | { error: string };
function attempt(fn: () => unknown): Outcome {
  try {
    return { value: fn() ?? null };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

const cases = loadParityCases("leftovers");
const of = (fn: string): ParityCase[] => {
  const found = cases.filter((c) => c.fn === fn);
  expect(found.length).toBeGreaterThan(0);
  return found;
};

describe("error predicates (OpenClaw's names, exported)", () => {
  const predicates: Record<string, (raw: string) => boolean> = {
    isRateLimitErrorMessage,
    isTimeoutErrorMessage,
    isBillingErrorMessage,
    isAuthErrorMessage,
    isAuthPermanentErrorMessage,
    isOverloadedErrorMessage,
    isCloudCodeAssistFormatError,
  };
  it("answers every recorded message as OpenClaw does", () => {
    const recorded = of("errorPredicates");
    expect(recorded.length).toBeGreaterThan(1000);
    const mismatches = recorded.flatMap((c) =>
      Object.entries(c.output as Record<string, boolean>)
        .filter(([name, expected]) => predicates[name]?.(c.input as string) !== expected)
        .map(([name, expected]) => ({ name, input: c.input, expected })),
    );
    expect(mismatches).toEqual([]);
  });
  it("treats a missing message as no match", () => {
    for (const predicate of Object.values(predicates))
      expect(predicate(undefined as unknown as string)).toBe(false);
    expect(isCloudCodeAssistFormatError("Invalid request format")).toBe(true);
  });
});

describe("buildGroupHistoryKey", () => {
  it("builds the keys OpenClaw builds", () => {
    for (const c of of("buildGroupHistoryKey")) {
      const input = c.input as { channel?: string; accountId?: string; peerKind: PeerKind; peerId?: string };
      expect(
        attempt(() => buildGroupHistoryKey(input)),
        JSON.stringify(input),
      ).toEqual(c.output);
    }
  });
  it("keeps a Signal group id's case and defaults the blanks", () => {
    expect(buildGroupHistoryKey({ channel: "Signal", peerKind: "group", peerId: " AbC== " })).toBe(
      "signal:default:group:AbC==",
    );
    expect(buildGroupHistoryKey({ peerKind: "channel" })).toBe("unknown:default:channel:unknown");
  });
});

describe("resolveSessionKey", () => {
  it("resolves every recorded message context as OpenClaw does", () => {
    for (const c of of("resolveSessionKey")) {
      const input = c.input as {
        scope?: SessionScope;
        ctx: MessageSessionContext;
        mainKey?: string;
        agentId?: string;
      };
      expect(
        attempt(() => resolveSessionKey(input.scope, input.ctx, input.mainKey, input.agentId)),
        JSON.stringify(input),
      ).toEqual(c.output);
    }
  });
  it('puts every message in one "global" bucket under session.scope "global"', () => {
    const group = { From: "telegram:group:-100123", ChatType: "group" };
    expect(resolveSessionKey("global", group, "main", "ops")).toBe("global");
    expect(resolveSessionKey("global", { From: "+15551234567" })).toBe("global");
    expect(resolveSessionKey("per-sender", group, "main", "ops")).toBe("agent:ops:telegram:group:-100123");
    expect(() => resolveSessionKey("per-sender", group)).toThrow(/explicit configured agent id/);
  });
  it("knows the same group surfaces as OpenClaw's bundled channels", () => {
    const fixture = JSON.parse(
      readFileSync(join(import.meta.dirname, "..", "fixtures", "openclaw", "leftovers.part-1.json"), "utf8"),
    ) as { groupSurfaces: string[] };
    expect([...GROUP_SURFACES].sort()).toEqual(fixture.groupSurfaces);
  });
});

describe("resolvePromptHistoryLimit", () => {
  const decode = (value: unknown): unknown => {
    if (value && typeof value === "object" && "undefined" in value) return undefined;
    if (value && typeof value === "object" && "number" in value)
      return Number((value as { number: string }).number);
    return value;
  };
  it("gives OpenClaw's window for every recorded configuration", () => {
    for (const c of of("resolvePromptHistoryLimit")) {
      const input = c.input as { configured: unknown; fallback: unknown };
      const fallback = decode(input.fallback) as number | undefined;
      expect(resolvePromptHistoryLimit(decode(input.configured), fallback), JSON.stringify(input)).toBe(
        c.output,
      );
    }
  });
  it("defaults to 50 and caps at 200", () => {
    expect(DEFAULT_GROUP_HISTORY_LIMIT).toBe(50);
    expect(resolvePromptHistoryLimit(undefined)).toBe(50);
    expect(resolvePromptHistoryLimit(5000)).toBe(MAX_PROMPT_HISTORY_LIMIT);
    expect(resolvePromptHistoryLimit(Number.MAX_SAFE_INTEGER)).toBe(50);
    expect(resolvePromptHistoryLimit(-3)).toBe(0);
  });
});

describe("resolveAgentIdFromSessionKey", () => {
  it("returns OpenClaw's agent ids and throws OpenClaw's messages", () => {
    const recorded = of("resolveAgentIdFromSessionKey");
    expect(recorded.some((c) => "error" in (c.output as Outcome))).toBe(true);
    for (const c of recorded) {
      const input = c.input as { sessionKey?: string | null; fallback?: string };
      expect(
        attempt(() => resolveAgentIdFromSessionKey(input.sessionKey, input.fallback)),
        JSON.stringify(input),
      ).toEqual(c.output);
    }
  });
});
